"""Naming channels: ids, tokens or a channels frame as references (``rest/channelrefs.py``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from explorer.rest.channelrefs import refs


def test_digits_are_ids_and_other_text_is_a_token() -> None:
    """An int or text of digits is an id (token unknown); other text is a token."""
    assert list(refs(7, "12", "streamer")) == [(7, None), (12, None), ("streamer", "streamer")]


def test_a_channels_frame_gives_its_ids_and_tokens() -> None:
    """A channels frame names its index ids, with the tokens of its ``token`` column."""
    frame = pd.DataFrame({"token": ["a", None]}, index=pd.Index([1, 2], name="id"))
    assert list(refs(frame)) == [(1, "a"), (2, None)]


def test_iterables_and_none_mix() -> None:
    """Several arguments, iterables among them (numpy ids too), are read in order; None adds
    nothing."""
    assert list(refs(None, [np.int64(3), "x"], 4)) == [(3, None), ("x", "x"), (4, None)]


@pytest.mark.parametrize("bad", [True, 1.5, None])
def test_anything_else_is_refused(bad: object) -> None:
    """A bool, a float or None inside an iterable is neither an id nor a token."""
    with pytest.raises(ValueError, match="id or a token"):
        list(refs([bad]))
