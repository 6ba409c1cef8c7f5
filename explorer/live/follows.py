"""What live events and snapshots follow unless told otherwise.

``AsyncLive`` and ``AsyncTracker`` (what ``api.live`` and ``api.track`` build) take these
as their defaults; they live apart from ``live/log.py`` and ``collect/track.py`` so that a
reader of the defaults loads none of the live and tracking machinery (websockets, event logs).
"""

from __future__ import annotations

#: What is followed of each channel unless ``events=`` says otherwise.
CHANNEL_EVENTS = ("update", "followed", "hosted", "unhosted")
#: What is followed of each user unless ``user_events=`` says otherwise.
USER_EVENTS = ("update", "followed", "achievement")
#: The fields tracked unless others are named.
FIELDS = ("viewersCurrent", "online", "numFollowers", "viewersTotal")
