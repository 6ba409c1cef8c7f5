"""How many followers a stream session brings its channel (pure).

Calibrated to ``realism.md`` row 18: channels averaging 1,000 viewers or more gain about 2.8%
of their followers in 30 days (the top 1,000 Twitch channels gained about 34% over a year).
A channel's seeded followers are about 120 times its average audience (``world.py``); a
session brings followers in proportion to its viewer-hours, at a rate that falls a little with
the audience (:data:`FOLLOWS_EXPONENT`): channels of 100-1,000 viewers gain about 3% a month,
those of 1,000 or more 2.5-3%, and small ones, which stream fewer hours, 0.5-1.5%.
When within a session the follows arrive is
``streams.followers``'s.
"""

from __future__ import annotations

#: New followers per viewer-hour of a session averaging :data:`FOLLOWS_AUDIENCE` viewers.
FOLLOWS_PER_VIEWER_HOUR = 0.02
FOLLOWS_AUDIENCE = 1000.0
#: How fast the rate per viewer-hour falls with the session's audience.
FOLLOWS_EXPONENT = 0.15
#: Followers one session brings at most (each is a follow record written when it ends).
MAX_FOLLOWS = 2000


def expected_follows(audience: float, hours: float) -> float:
    """Followers a session of ``hours`` averaging ``audience`` viewers brings on average."""
    relative = max(audience, 1.0) / FOLLOWS_AUDIENCE
    return audience * hours * FOLLOWS_PER_VIEWER_HOUR * relative**-FOLLOWS_EXPONENT
