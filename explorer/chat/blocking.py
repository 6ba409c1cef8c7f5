"""Live chat from blocking code: :class:`Chat`, the blocking twin of the async
:class:`~explorer.chat.client.ChatClient`, for scripts and notebooks.

``chat = explorer.connect().chat(channel)`` gives a joined :class:`Chat` whose methods run on
the toolkit's private loop (``core/loop.py``), so chat keeps flowing while a notebook cell blocks.
Joining, reconnecting, gapless history, errors and events are the async core's
(``chat/client.py``); :class:`ChatClient` and :class:`ChatDetails` are importable from here too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from explorer.chat.client import ChatClient
from explorer.chat.session import State
from explorer.core import loop
from explorer.core.loop import Blocking
from explorer.core.renames import Renamed
from explorer.events.feeds import Callback, EventIterator
from explorer.views.twins import LoggedTwin, Mirror

if TYPE_CHECKING:
    from explorer.views.chat import LiveChat, PollChart

__all__ = ["Chat", "join"]


class Chat(LoggedTwin[ChatClient, "LiveChat"]):
    """A channel's live chat from blocking code: the methods of :class:`ChatClient`, each
    waiting for its result on the toolkit's loop, safe in a running Jupyter kernel.

    Made by ``explorer.connect().chat(channel)``, already joined. The chat keeps running in the
    background (events flow into :attr:`log` while a cell blocks). ``chat.widget()`` (or just
    ``chat`` as a cell's last line) shows a :class:`~explorer.views.chat.LiveChat`; nothing of
    Jupyter is imported until then. Use ``with`` or :meth:`close`.
    """

    state: Mirror[State] = Mirror(
        "``connecting``, ``connected``, ``authenticated``, ``reconnecting`` or ``closed``."
    )
    endpoint: Mirror[str | None] = Mirror("The chat node of the current (or last) connection.")
    error: Mirror[BaseException | None] = Mirror("Why the chat gave up, if it did.")
    channel_id: Mirror[int | None] = Mirror("The channel's id (known once joined).")
    authenticated: Mirror[bool] = Mirror(
        "Whether the chat joined as a user (False: anonymously, read-only)."
    )
    roles: Mirror[tuple[str, ...]] = Mirror(
        'The user\'s chat roles the join granted (e.g. ``("Owner",)``; empty when anonymous).'
    )
    permissions: Mirror[tuple[str, ...]] = Mirror(
        'The caller\'s chat permissions in this channel (e.g. ``"clear_messages"``).'
    )

    def events(
        self, *names: str, timeout: float | None = None, max_pending: int | None = None
    ) -> EventIterator:
        """Iterate over events (only those called ``names``, when given) from now on, for
        ``timeout`` seconds in all (None: until the chat closes); works in a plain script (a
        name that is not an event raises ValueError listing them)::

            for event in chat.events("ChatMessage", timeout=30):
                print(event.data["user_name"], event.data["message"]["message"])
        """
        limit = max_pending or self._aio.max_pending
        feed = EventIterator(names, limit, self._aio._unsubscribe, timeout)
        self._aio._subscribe(feed)
        return feed

    def on(self, callback: Callback, *names: str) -> Callable[[], None]:
        """Call ``callback(event)`` for every event (or those called ``names``), on the
        toolkit's loop thread; returns a function that stops it. Keep callbacks short."""
        return self._aio.on(callback, *names)

    def on_state(self, callback: Callable[[State], object]) -> Callable[[], None]:
        """Call ``callback(state)`` at every state change, on the toolkit's loop thread."""
        return self._aio.on_state(callback)

    def widget(self, rows: int = 20) -> LiveChat:
        """A live view of this chat for Jupyter: state, endpoint, counts, rate, the last
        ``rows`` events (filterable), pause and resume."""
        from explorer.views.chat import LiveChat

        return LiveChat(
            self.log, self._status, rows=rows, loop=loop.get_loop(), base_url=self._aio.base_url
        )

    def poll_chart(self, question: str | None = None) -> PollChart:
        """A live chart of a poll's responses over time (the latest poll, or ``question``);
        in a script, ``chat.poll_chart().save("poll.png")``."""
        from explorer.views.chat import PollChart

        return PollChart(self.log, question, loop=loop.get_loop())

    def _status(self) -> tuple[str, str | None]:
        return str(self._aio.state), self._aio.endpoint

    call = Blocking(ChatClient.call)
    send = Blocking(ChatClient.send)
    whisper = Blocking(ChatClient.whisper)
    start_poll = Blocking(ChatClient.start_poll)
    vote = Blocking(ChatClient.vote)
    timeout_user = Blocking(ChatClient.timeout_user)
    timeout = Renamed("timeout_user")
    purge = Blocking(ChatClient.purge)
    delete_message = Blocking(ChatClient.delete_message)
    clear_messages = Blocking(ChatClient.clear_messages)
    history = Blocking(ChatClient.history)
    start_giveaway = Blocking(ChatClient.start_giveaway)
    ping = Blocking(ChatClient.ping)
    attach_emotes = Blocking(ChatClient.attach_emotes)


def join(client: ChatClient) -> Chat:
    """Join ``client``'s chat on the toolkit's loop and wrap it for blocking code."""
    return Chat(loop.run(client.start()))
