"""A channel's standing on the platform: partnership, language and paid subscriptions (pure).

Calibrated to ``realism.md`` rows 19, 20 and 22 (see ``docs/realism.md``):

- **Partners** are the channels whose average audience while live is above
  :data:`PARTNER_AUDIENCE` (Twitch asks about 75 for its programme): about 0.5% of the
  channels that go live in a month (row 19: 0.3-0.7%).
- **Language**: bigger channels lean English (row 20: English holds 0.50-0.60 of viewer-hours
  and streams at least 4.5 times the hours Spanish does). Languages are spread by audience
  rank (a low-discrepancy sequence, as ``rhythm`` spreads hours, but on another irrational
  step so that a language has no hour of its own), so the few channels that hold most of a
  small world's viewing speak English in the share a big platform's would.
- **Subscriptions**: a partner's subscribers are paid subscriptions per viewer-hour
  streamed in a month, fewer per viewer-hour the bigger the channel (row 22: about 4.5 per
  1,000 viewer-hours platform-wide, 10-30 for a mid-sized partner).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from explorer.emulator.world import LANGUAGES

FloatArray = npt.NDArray[np.float64]

#: Average viewers while live above which a channel is partnered.
PARTNER_AUDIENCE = 50.0
#: How far channels lean English: this share of those averaging :data:`ENGLISH_AUDIENCE`
#: viewers or more speaks it whatever the language weights say (the rest follow
#: ``world.LANGUAGES``), less for smaller ones (in proportion to the log of their audience).
ENGLISH_AUDIENCE = 1000.0
ENGLISH_LEAN = 0.22
#: Paid subscriptions a month per 1,000 viewer-hours of a partner averaging
#: :data:`SUBSCRIPTION_AUDIENCE` viewers, and how the rate falls with its audience.
SUBSCRIPTION_RATE = 14.0
SUBSCRIPTION_AUDIENCE = 100.0
SUBSCRIPTION_EXPONENT = 0.8
#: The sequence's step: sqrt(2) - 1, independent of ``rhythm``'s golden-ratio step over hours.
_STEP = 2**0.5 - 1
_CUMULATIVE = np.cumsum([weight for _, weight in LANGUAGES], dtype=np.float64)


def partnered(audience: FloatArray) -> npt.NDArray[np.bool_]:
    """Whether each channel of average ``audience`` is a partner."""
    result: npt.NDArray[np.bool_] = audience > PARTNER_AUDIENCE
    return result


def languages(audience: FloatArray) -> npt.NDArray[np.intp]:
    """The index into ``world.LANGUAGES`` of each channel's language, from its audience
    rank: a low-discrepancy sequence over the languages' weights, English first for
    a share of them that grows with their audience (:data:`ENGLISH_LEAN`)."""
    rank = np.empty(len(audience))
    rank[np.argsort(-audience, kind="stable")] = np.arange(len(audience))
    quantile = np.mod(rank * _STEP + 0.5, 1.0)
    size = np.log(np.maximum(audience, 1.0)) / np.log(ENGLISH_AUDIENCE)
    lean = ENGLISH_LEAN * np.clip(size, 0.0, 1.0)
    spread = np.maximum(quantile - lean, 0.0) / (1.0 - lean)
    chosen: npt.NDArray[np.intp] = np.searchsorted(
        _CUMULATIVE, spread * _CUMULATIVE[-1], side="right"
    )
    return np.minimum(chosen, len(LANGUAGES) - 1)


def subscriptions_per_viewer_hour(audience: float) -> float:
    """Paid subscriptions a month per viewer-hour of a partner averaging ``audience``."""
    relative = max(audience, 1.0) / SUBSCRIPTION_AUDIENCE
    return SUBSCRIPTION_RATE / 1000 * relative**-SUBSCRIPTION_EXPONENT


def subscribers(audience: float, hours: float) -> int:
    """A partner's subscribers: a month's paid subscriptions at its audience and hours."""
    return max(1, round(subscriptions_per_viewer_hour(audience) * audience * hours))
