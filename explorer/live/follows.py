"""What live events and snapshots follow unless told otherwise.

``api.live`` and ``api.track`` show these as their defaults; they live apart from
``live/log.py`` and ``collect/track.py`` so that the REST client loads without the live and tracking
machinery (websockets, event logs), which load when first used.
"""

from __future__ import annotations

#: What is followed of each channel unless ``events=`` says otherwise.
CHANNEL_EVENTS = ("update", "followed", "hosted", "unhosted")
#: What is followed of each user unless ``user_events=`` says otherwise.
USER_EVENTS = ("update", "followed", "achievement")
#: The fields tracked unless others are named.
FIELDS = ("viewersCurrent", "online", "numFollowers", "viewersTotal")
