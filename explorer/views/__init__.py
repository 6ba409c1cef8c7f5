"""The live views for Jupyter (ipywidgets; imported only when a view is asked for).

``chat.py``: LiveChat and PollChart, with the timed-view and chart bases every view shares;
``watch.py``: WatchView, many channels at once; ``track.py``: TrackChart, the top channels'
field over time; ``rendering.py`` and ``sprites.py``: messages as HTML and emoticons as
images; ``twins.py``: the shell of the blocking twins that show as these views.
"""
