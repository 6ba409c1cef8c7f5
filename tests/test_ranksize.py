"""The rank-size fit (``explorer/core/ranksize.py``) on audiences whose exponent is known."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.ranksize import rank_size_exponent


def test_rank_size_exponent_recovers_an_exact_power_law() -> None:
    """Audiences of 10,000 · rank^-1.4 give α = 1.4."""
    viewers = 10_000 * np.arange(1, 201, dtype=float) ** -1.4
    alpha, fitted = rank_size_exponent(viewers)
    assert alpha == pytest.approx(1.4) and fitted == 20


def test_rank_size_exponent_needs_five_positive_audiences() -> None:
    """Fewer than five channels with viewers give NaN, not a fit through noise."""
    assert np.isnan(rank_size_exponent([10, 5, 3, 0, 0, 0])[0])
