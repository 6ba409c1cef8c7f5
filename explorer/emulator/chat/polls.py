"""Polls: ``vote:start`` and ``vote:choose`` (wire name ``vote`` too), one poll per channel.

=================  ===========================  ===============================================
method             needs                        refusals
=================  ===========================  ===============================================
vote:start         ``poll_start``               4006 a poll is already running
vote:choose, vote  ``poll_vote``                4006 no poll, no such option
=================  ===========================  ===============================================

``vote:start`` takes seconds; a poll's ``duration`` is milliseconds remaining and ``endsAt``
epoch milliseconds. Polls live in ``chat_polls``, one row per voter in ``chat_poll_votes``
(:mod:`explorer.emulator.db.chat_polls`): a vote replaces the voter's earlier one, so a vote
counts once whichever node takes it. A poll's timer (progress ``PollStart`` every
:data:`POLL_PROGRESS_INTERVAL` while counts change, then ``PollEnd``) runs in the process that
started the poll, its ``owner``; when that process dies another adopts the poll (:func:`adopt`,
a broker watcher).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import orjson

from explorer.emulator.chat.members import Member, require
from explorer.emulator.chat.methods import RoomMethod, arity, count, text
from explorer.emulator.chat.rooms import Room, Rooms
from explorer.emulator.db import chat_polls
from explorer.wire import chatmethods as chat_methods
from explorer.wire.codes import ChatErrorCode, Refusal

#: How often a running poll re-sends ``PollStart`` while votes arrive, in seconds.
POLL_PROGRESS_INTERVAL = 0.5
MAX_POLL_SECONDS = 3600.0
MAX_ANSWERS = 10
MAX_QUESTION = 200
#: Polls that ended this long ago without their owner ending them are dropped, not adopted.
_STALE_POLL = 10.0


@dataclass(frozen=True, slots=True)
class Poll:
    """A poll as stored in ``chat_polls`` (its votes are rows of ``chat_poll_votes``)."""

    id: int
    question: str
    answers: list[str]
    author: dict[str, Any]
    duration: float
    ends_at: float

    @classmethod
    def from_row(cls, poll_id: int, data: str, ends_at: float) -> Poll:
        """The poll of a ``chat_polls`` row."""
        fields = orjson.loads(data)
        return cls(
            poll_id, fields["q"], fields["answers"], fields["author"], fields["duration"], ends_at
        )


def poll_data(room: Room, poll: Poll, counts: list[int]) -> dict[str, Any]:
    """The ``PollStart``/``PollEnd`` data of ``poll`` now, given its vote ``counts``."""
    remaining = max(poll.ends_at - room.rooms.clock(), 0.0)
    return {
        "originatingChannel": room.channel_id,
        "q": poll.question,
        "answers": poll.answers,
        "author": poll.author,
        "duration": int(remaining * 1000),
        "endsAt": int(poll.ends_at * 1000),
        "voters": sum(counts),
        "responses": dict(zip(poll.answers, counts, strict=True)),
        "responsesByIndex": counts,
    }


def _counts(room: Room, poll: Poll) -> list[int]:
    """Votes per answer of ``poll`` (one per voter)."""
    counts = [0] * len(poll.answers)
    for choice, votes in chat_polls.votes(room.rooms.store, poll.id):
        counts[choice] = votes
    return counts


def start_poll(room: Room, member: Member, args: list[Any]) -> Any:
    """``vote:start [question, answers, seconds]``: PollStart now, progress, PollEnd."""
    arity(args, chat_methods.VOTE_START)
    question = text(args[0], "question", MAX_QUESTION)
    answers = args[1]
    if (
        type(answers) is not list
        or not 2 <= len(answers) <= MAX_ANSWERS
        or any(type(a) is not str or not a.strip() or len(a) > MAX_QUESTION for a in answers)
        or len(set(answers)) != len(answers)
    ):
        raise Refusal(
            ChatErrorCode.BAD_REQUEST,
            f"The answers must be 2 to {MAX_ANSWERS} different non-empty strings.",
        )
    duration = args[2]
    if type(duration) not in (int, float) or not 1 <= duration <= MAX_POLL_SECONDS:
        raise Refusal(
            ChatErrorCode.BAD_REQUEST,
            f"The duration is a number of seconds from 1 to {MAX_POLL_SECONDS:.0f}.",
        )
    require(member, "poll_start", "start a poll")
    rooms = room.rooms
    now = rooms.clock()
    fields = {"q": question, "answers": answers, "author": member.author(), "duration": duration}
    with rooms.store.transaction() as tx:
        if chat_polls.is_running(tx, room.channel_id, now):
            raise Refusal(ChatErrorCode.POLL_ERROR, "A poll is already running.")
        data = orjson.dumps(fields).decode()
        poll_id = chat_polls.add(
            tx, room.channel_id, rooms.broker.origin, data, now, now + duration
        )
    poll = Poll(poll_id, question, list(answers), member.author(), duration, now + duration)
    room.publish("PollStart", poll_data(room, poll, [0] * len(answers)))
    rooms.spawn(run_poll(room, poll))
    return "Poll started."


async def run_poll(room: Room, poll: Poll) -> None:
    """The poll's timer, run by its owner: re-send ``PollStart`` while the counts change,
    then remove the poll and send ``PollEnd``."""
    clock = room.rooms.clock
    shown = [0] * len(poll.answers)
    while (left := poll.ends_at - clock()) > 0:
        await asyncio.sleep(min(POLL_PROGRESS_INTERVAL, left))
        counts = _counts(room, poll)
        if counts != shown and poll.ends_at > clock():
            shown = counts
            room.publish("PollStart", poll_data(room, poll, counts))
    counts = _counts(room, poll)
    chat_polls.remove(room.rooms.store, poll.id)
    room.publish("PollEnd", poll_data(room, poll, counts))


def vote(room: Room, member: Member, args: list[Any]) -> Any:
    """``vote:choose [index]`` (wire name ``vote``): one vote per user; re-voting moves it."""
    arity(args, chat_methods.VOTE_CHOOSE)
    choice = count(args[0], "option index")
    user_id = require(member, "poll_vote", "vote")
    with room.rooms.store.transaction() as tx:
        running = chat_polls.running(tx, room.channel_id, room.rooms.clock())
        if running is None:
            raise Refusal(ChatErrorCode.POLL_ERROR, "There is no poll running.")
        options = len(orjson.loads(running[1])["answers"])
        if choice >= options:
            raise Refusal(
                ChatErrorCode.POLL_ERROR,
                f"There is no option {choice}; choose 0 to {options - 1}.",
            )
        chat_polls.vote(tx, running[0], user_id, choice)
    return True


def adopt(rooms: Rooms, alive: frozenset[str], before: float) -> None:
    """Take over the polls processes not in ``alive`` started before ``before`` (a broker's
    watcher) and run their timers here; those long over are dropped."""
    adopted = chat_polls.adopt(
        rooms.store,
        rooms.keeping(alive),
        before,
        rooms.clock() - _STALE_POLL,
        rooms.broker.origin,
    )
    for poll_id, channel_id, data, ends_at in adopted:
        room = rooms.get(channel_id)
        if room is not None:
            rooms.spawn(run_poll(room, Poll.from_row(poll_id, data, ends_at)))


methods = [
    RoomMethod(chat_methods.VOTE_START, start_poll),
    RoomMethod(chat_methods.VOTE_CHOOSE, vote),
    RoomMethod(chat_methods.VOTE, vote),
]
