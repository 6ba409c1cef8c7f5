"""The blocking twins' shell (``explorer.views.twins``): mirrored attributes and closing."""

from __future__ import annotations

import pydoc

import pytest

from explorer.views.twins import BlockingTwin, Mirror


class Core:
    """A core with one attribute and nothing to close."""

    def __init__(self) -> None:
        self.count = 3
        self.closed = False

    def _summary(self) -> str:
        return f"count {self.count}"

    async def aclose(self) -> None:
        self.closed = True


class Twin(BlockingTwin[Core, "View"]):
    count: Mirror[int] = Mirror("How many there are.")


class View:
    """A widget that remembers being frozen."""

    frozen = False

    def freeze(self) -> None:
        self.frozen = True

    def _repr_mimebundle_(self, **kwargs: object) -> dict[str, str]:
        return {"text/plain": "view"}


def test_a_mirror_reads_the_cores_attribute_as_it_is_now() -> None:
    """A Mirror attribute is the core's same-named attribute, read each time."""
    core = Core()
    twin = Twin(core)
    core.count = 5
    assert twin.count == 5
    assert repr(twin) == "<Twin count 5>"


def test_a_mirror_is_read_only_and_documented() -> None:
    """Assigning a Mirror attribute raises AttributeError; help() shows its doc."""
    twin = Twin(Core())
    with pytest.raises(AttributeError, match="read-only"):
        setattr(twin, "count", 1)  # noqa: B010 (mypy refuses the plain assignment)
    assert "How many there are." in pydoc.render_doc(Twin)


def test_close_closes_the_core_and_freezes_the_widget_shown() -> None:
    """close() (here by leaving ``with``) closes the core, then freezes the widget shown (it
    keeps its last state instead of vanishing)."""
    core, view = Core(), View()

    class Shown(Twin):
        def widget(self) -> View:
            return view

    with Shown(core) as twin:
        assert twin._repr_mimebundle_() == {"text/plain": "view"}
    assert view.frozen and core.closed
