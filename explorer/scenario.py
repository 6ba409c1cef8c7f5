"""Scripted scenarios: raids, polls, moderation and faults at chosen moments, for people
testing their own clients against the platform.

A :class:`Scenario` is a list of steps, each one call to the platform's control namespace
(``/_emulator/...``, loopback only; see ``explorer/emulator/resources/control.py``), so it
works against any running platform, in this process or another (``explorer serve``), whatever
the client under test is written in::

    scenario = (
        Scenario(platform.base_url)
        .poll("streamer", "Best map?", ["dust", "inferno"], seconds=30, at=1.0)
        .fail_node(0, at=2.0, back_after=3.0)
        .raid("streamer", "other-channel", at=world + timedelta(minutes=10))
    )
    played = scenario.play()          # blocks until the last step ran; or .start() / .wait()

A moment (``at=``) is seconds of wall time after the scenario starts, or a world time (a
``datetime`` or an ISO-8601 string, UTC unless it says otherwise) reached on the world clock,
which runs at the platform's ``--speed``. Steps run in the order of their moments; each answer
(or the error that refused it) is in the :class:`Happened` list. The raid is one control call,
so when the world models raids itself the scenario's raid can hand over to it unchanged.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Self
from urllib.parse import quote

import httpx

from explorer.core.durations import Duration, seconds
from explorer.errors import ConnectionFailed, ExplorerError, error_for

#: When a step runs: wall seconds after the start, or a world time.
Moment = float | datetime | str
#: Where the REST API lives under the platform's root (the control namespace is at the root).
_API_PATH = "/api/v1"


@dataclass(frozen=True, slots=True)
class Step:
    """One happening: what it is (``kind``), its control call, and when."""

    kind: str
    method: str
    path: str
    body: dict[str, Any] | None
    at: Moment


@dataclass(frozen=True, slots=True)
class Happened:
    """A step that ran: when (wall seconds after the start), its answer, or the error."""

    step: Step
    ran_at: float
    answer: Any = None
    error: ExplorerError | None = None


@dataclass
class Playing:
    """A scenario running in a background thread (:meth:`Scenario.start`)."""

    thread: threading.Thread
    happened: list[Happened] = field(default_factory=list)
    failure: BaseException | None = None

    def wait(self, timeout: float | None = None) -> list[Happened]:
        """Block until every step ran (``TimeoutError`` after ``timeout`` seconds); the steps
        as they happened."""
        self.thread.join(timeout)
        if self.thread.is_alive():
            raise TimeoutError(f"The scenario did not finish within {timeout} s.")
        if self.failure is not None:
            raise self.failure
        return self.happened


class Scenario:
    """Happenings at chosen moments, played against the platform at ``base_url`` (its REST
    base, ``.../api/v1``) through its control namespace. Build it with the step methods (each
    returns the scenario), then :meth:`play` or :meth:`start`. ``clock`` and ``sleep`` time
    wall moments (tests may inject them)."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], object] = time.sleep,
    ) -> None:
        root = base_url.rstrip("/").removesuffix(_API_PATH)
        self.control = f"{root}/_emulator"
        self.steps: list[Step] = []
        self._timeout, self._clock, self._sleep = timeout, clock, sleep

    # -- steps ----------------------------------------------------------------------------

    def raid(
        self, raider: int | str, target: int | str, *, viewers: int | None = None, at: Moment = 0.0
    ) -> Self:
        """``raider`` (live) ends its stream and raids ``target``: it hosts the target, and its
        audience (or ``viewers``) joins the target's."""
        body: dict[str, Any] = {"from": raider, "to": target}
        if viewers is not None:
            body["viewers"] = viewers
        return self._add("raid", "POST", "/raids", body, at)

    def chat(
        self,
        channel: int | str,
        method: str,
        *arguments: Any,
        user: int | str | None = None,
        at: Moment = 0.0,
    ) -> Self:
        """Chat method ``method`` with ``arguments`` in ``channel``'s chat, as ``user`` (a
        username or id; None: the channel's owner), as if sent on a connection."""
        body = {"user": user, "method": method, "arguments": list(arguments)}
        return self._add(method, "POST", f"/chat/{quote(str(channel), safe='')}/call", body, at)

    def poll(
        self,
        channel: int | str,
        question: str,
        answers: Sequence[str],
        *,
        seconds: float = 30,
        user: int | str | None = None,
        at: Moment = 0.0,
    ) -> Self:
        """A poll in ``channel`` for ``seconds``, started by ``user`` (None: the owner)."""
        return self.chat(channel, "vote:start", question, list(answers), seconds, user=user, at=at)

    def timeout(
        self,
        channel: int | str,
        username: str,
        duration: Duration = "1m",
        *,
        by: int | str | None = None,
        at: Moment = 0.0,
    ) -> Self:
        """Moderation: ``username`` is timed out in ``channel`` for ``duration``, by ``by``
        (a moderator; None: the owner)."""
        return self.chat(channel, "timeout", username, f"{seconds(duration):g}s", user=by, at=at)

    def fail_node(
        self, node: int = 0, *, at: Moment = 0.0, back_after: float | None = None
    ) -> Self:
        """Chat node ``node`` fails (its clients are disconnected with 1001 and must reconnect
        to another); with ``back_after``, it starts again that many seconds later."""
        self._add("node failure", "POST", f"/chat/nodes/{node}/stop", None, at)
        if back_after is not None:
            if not isinstance(at, int | float):
                raise ValueError("back_after needs a wall-time moment (at= in seconds).")
            self._add("node back", "POST", f"/chat/nodes/{node}/start", None, at + back_after)
        return self

    def slow_client(self, user: int | str | None = None, *, at: Moment = 0.0) -> Self:
        """``user``'s chat connections (every anonymous one for None) are dropped as too slow
        (1008), as the platform drops a reader that falls too far behind."""
        return self._add("slow client", "POST", "/chat/slow", {"user": user}, at)

    def _add(
        self, kind: str, method: str, path: str, body: dict[str, Any] | None, at: Moment
    ) -> Self:
        if isinstance(at, int | float) and at < 0:
            raise ValueError(f"at= must be zero or more seconds, not {at!r}.")
        self.steps.append(Step(kind, method, path, body, at))
        return self

    # -- playing --------------------------------------------------------------------------

    def play(self) -> list[Happened]:
        """Run every step at its moment, in order, and return them as they happened."""
        with httpx.Client(timeout=self._timeout) as http:
            started = self._clock()
            world, speed = self._world(http)
            planned = sorted(
                (
                    (self._wall(step.at, world, speed), index, step)
                    for index, step in enumerate(self.steps)
                ),
            )
            happened = []
            for due, _, step in planned:
                wait = started + due - self._clock()
                if wait > 0:
                    self._sleep(wait)
                happened.append(self._run(http, step, self._clock() - started))
        return happened

    def start(self) -> Playing:
        """Play in a background thread; :meth:`Playing.wait` for the result."""

        def run() -> None:
            try:
                playing.happened.extend(self.play())
            except BaseException as exc:  # handed to wait()
                playing.failure = exc

        playing = Playing(threading.Thread(target=run, name="explorer-scenario", daemon=True))
        playing.thread.start()
        return playing

    def _world(self, http: httpx.Client) -> tuple[float, float]:
        """The world clock now (epoch seconds) and its speed, when a step needs them."""
        if all(isinstance(step.at, int | float) for step in self.steps):
            return 0.0, 1.0
        clock = self._call(http, "GET", "/clock", None)
        return datetime.fromisoformat(clock["now"]).timestamp(), float(clock["speed"])

    @staticmethod
    def _wall(at: Moment, world: float, speed: float) -> float:
        """Wall seconds after the start at which moment ``at`` comes."""
        if isinstance(at, int | float):
            return float(at)
        when = datetime.fromisoformat(at) if isinstance(at, str) else at
        if when.tzinfo is None:  # world times are UTC, as the platform's clock says them
            when = when.replace(tzinfo=UTC)
        return max(0.0, (when.timestamp() - world) / speed)

    def _run(self, http: httpx.Client, step: Step, ran_at: float) -> Happened:
        try:
            answer = self._call(http, step.method, step.path, step.body)
        except ExplorerError as refused:
            return Happened(step, ran_at, error=refused)
        return Happened(step, ran_at, answer=answer)

    def _call(self, http: httpx.Client, method: str, path: str, body: dict[str, Any] | None) -> Any:
        """One control call; its JSON answer, or the typed error the platform's answer is."""
        url = self.control + path
        try:
            response = http.request(method, url, json=body)
        except httpx.RequestError as exc:
            raise ConnectionFailed(
                f"Cannot reach the platform's control namespace at {url} ({exc}): is the "
                "platform running, and on this machine (the namespace answers loopback only)?"
            ) from None
        if response.is_error:
            try:
                said = response.json()
            except ValueError:
                said = None
            raise error_for(response.status_code, said, response.reason_phrase)
        return response.json() if response.content else None
