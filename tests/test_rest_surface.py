"""The REST surface: endpoint rows agree with the platform's routes, paths are escaped, the
async and blocking clients are one declaration, handles are lazy and show themselves."""

from __future__ import annotations

import asyncio
import inspect
import pydoc
from collections.abc import Iterator
from pathlib import Path

import httpx
import pandas as pd
import pytest

import explorer
from explorer.api import ENDPOINTS, Api
from explorer.emulator import Platform
from explorer.emulator.app import platform_routes
from explorer.errors import NotFound
from explorer.rest.account import Account, User
from explorer.rest.channel import Channel
from explorer.rest.confetti import Confetti
from explorer.rest.endpoints import SIGN_IN, Result
from explorer.rest.games import Game, GameVersion
from explorer.rest.handle import LISTINGS, Call, Handle, ListingOptions, M, Op, endpoint
from explorer.wire import channel_routes as channel_wire
from explorer.wire import routes as wire
from explorer.wire.endpoint import Endpoint

HANDLES: tuple[type[Handle[object]], ...] = (  # type: ignore[type-var]
    Api,
    Channel,
    User,
    Account,
    Game,
    GameVersion,
    Confetti,
)


class Recording(httpx.AsyncBaseTransport):
    """The real network, remembering the raw path of every request sent."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.paths: list[bytes] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.paths.append(request.url.raw_path)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.fixture
def recorded(platform: Platform) -> Iterator[tuple[explorer.Client, Recording]]:
    """A sync client on the shared platform whose requests are recorded."""
    network = Recording()
    with explorer.Client(platform.base_url, progress=False, transport=network) as client:
        yield client, network


# -- the endpoint table -------------------------------------------------------------------------


#: Rows the toolkit has no method for, and why; a user reaches them with ``client.request``.
NOT_CALLED = {
    channel_wire.CHANNEL_FOLLOW_BY_POST: "the same as PUT, which Channel.follow sends",
    channel_wire.CHANNEL_PARTNERSHIP_DENY: "staff only",
    channel_wire.CHANNEL_PARTNERSHIP_ACCEPT: "staff only",
    channel_wire.CHANNEL_REPLACE: "the same as PATCH, which Channel.update sends",
    wire.CHAT_ENDPOINTS: "Channel.chat_details gives the addresses with an authkey",
    wire.REVOKE: "no method yet (OAuth clients revoke their tokens)",
    wire.OAUTH_CLIENT: "no method yet (Account.oauth_clients lists them)",
    wire.INTROSPECT: "no method yet (for OAuth resource servers)",
    wire.ACCOUNT_PASSWORD: "no method yet",
    wire.SHORTCODE_GRANT: "what the /go page shows before approving (Api.approve_code approves)",
    channel_wire.CHANNEL_ANONYMOUS_CHAT_DETAILS: "no method yet (chat clients read anonymously)",
    channel_wire.CHANNEL_DETAILED: "the older spelling of /details, which Channel.details sends",
    wire.LOGOUT_CURRENT: "the older spelling of DELETE /users/current/session (sign-out)",
    wire.ACCOUNT_REFRESH: "the same answer as GET /users/current, which Account.info sends",
    wire.TYPE_CHANNELS: "Api.channels(where={'typeId': id}) lists the same channels",
    **{
        row: "signed by an OAuth client's id and secret, not a user's credential"
        for row in (
            wire.REGISTER_HOOK,
            wire.HOOKS,
            wire.HOOK,
            wire.RENEW_HOOK,
            wire.DEACTIVATE_HOOK,
        )
    },
}


def test_the_platform_serves_every_wire_row_once() -> None:
    """Each row of the wire table is bound to exactly one platform route, and no route
    declares a row outside the table."""
    served = [route.endpoint for route in platform_routes()]
    assert len(served) == len(set(served))
    assert set(served) == set(wire.TABLE)


def test_the_toolkit_calls_every_wire_row() -> None:
    """Every wire row is bound to a toolkit method or called by the transport (but the few
    listed with a reason), and the toolkit calls no row outside the table."""
    called = {row for binding in ENDPOINTS for row in binding.rows} | set(SIGN_IN)
    assert called <= set(wire.TABLE)
    assert set(wire.TABLE) - called == set(NOT_CALLED)


def test_wire_rows_are_unique_and_paths_spelled_once() -> None:
    """No two rows share a method and path, whatever their placeholders are called."""
    keys = [(row.method, row.template) for row in wire.TABLE]
    assert len(keys) == len(set(keys))


def test_every_row_backs_one_named_method() -> None:
    """Rows are gathered once each, every one names the method it backs."""
    names = [row.name for row in ENDPOINTS]
    assert all(names) and len(names) == len(set(names))
    assert "Channel.followers" in names and "Api.channels" in names


def test_a_path_placeholder_nothing_fills_is_refused_when_declared() -> None:
    """Declaring a row whose placeholder is neither bound nor an argument raises TypeError."""
    with pytest.raises((TypeError, RuntimeError)) as refused:  # 3.11 wraps it in RuntimeError

        class Broken(Handle[M]):
            @endpoint(Endpoint("GET", "/things/{missing}", "channel-read"))
            def thing(self) -> Call[pd.DataFrame]:
                """Never declared."""
                return Call()

    assert "missing" in str(refused.value.__cause__ or refused.value)


def test_path_values_are_quoted_whole() -> None:
    """A value with slashes, dots or '?' stays one path segment."""
    row = Endpoint("GET", "/channels/{channel}/follow", "channel-read")
    assert row.url({"channel": "a/../b?x=1"}) == "/channels/a%2F..%2Fb%3Fx%3D1/follow"


def test_a_crafted_channel_name_cannot_change_the_request_path(
    recorded: tuple[explorer.Client, Recording],
) -> None:
    """'streamer/../viewer' is sent as one escaped segment, so no other channel answers."""
    client, network = recorded
    with pytest.raises(NotFound):
        client.channel("streamer/../viewer").info()
    with pytest.raises(NotFound):
        client.chat("x/../../users/current")
    assert network.paths[0].endswith(b"/channels/streamer%2F..%2Fviewer")
    assert network.paths[1].endswith(b"/channels/x%2F..%2F..%2Fusers%2Fcurrent?fields=id")


# -- one surface, two modes ---------------------------------------------------------------------


def _ops(cls: type) -> dict[str, Op[..., object]]:
    return {
        name: value
        for klass in reversed(cls.__mro__)
        for name, value in vars(klass).items()
        if isinstance(value, Op) and not name.startswith("_")
    }


def test_async_and_blocking_clients_list_the_same_names() -> None:
    """Client and AsyncClient differ only in how they begin and close (AsyncClient's start,
    and open, its old name)."""
    lifecycle = {"close", "start", "open", "aclose"}
    sync = set(dir(explorer.Client("http://platform.invalid/api/v1"))) - lifecycle
    async_ = {name for name in dir(explorer.AsyncClient) if not name.startswith("_")} - lifecycle
    assert sync == async_


def test_every_method_has_one_signature_and_doc_in_both_modes() -> None:
    """Bound on a sync handle a method blocks, on an async one it is a coroutine function;
    both carry the declared signature and docstring."""
    with explorer.Client("http://platform.invalid/api/v1") as sync_api:
        async_api = explorer.AsyncClient("http://platform.invalid/api/v1")
        for cls in HANDLES:
            values = {name: 1 for name in cls._bound}
            blocking, awaiting = sync_api._handle(cls, **values), async_api._handle(cls, **values)
            for name, op in _ops(cls).items():
                sync_method, async_method = getattr(blocking, name), getattr(awaiting, name)
                assert inspect.iscoroutinefunction(async_method), name
                assert not inspect.iscoroutinefunction(sync_method), name
                assert inspect.signature(sync_method) == inspect.signature(async_method)
                assert sync_method.__doc__ == async_method.__doc__ == op.__doc__
                assert op.__doc__, name
        asyncio.run(async_api.aclose())


def test_help_shows_each_method_with_its_signature() -> None:
    """pydoc renders a handle's methods with their parameters and docs."""
    text = pydoc.render_doc(Channel, renderer=pydoc.plaintext)
    assert "followers(*, max_rows: 'int | None' = None" in text
    assert "The followers, newest first" in text


def test_the_top_level_listing_is_short() -> None:
    """Tab completion on a client shows a few dozen names, not a wall."""
    names = dir(explorer.Client("http://platform.invalid/api/v1"))
    assert all(not n.startswith("_") for n in names)
    assert 20 <= len(names) <= 40
    assert {"channels", "channel", "types", "user", "me", "chat"} <= set(names)


# -- handles ------------------------------------------------------------------------------------


def test_handles_are_lazy(recorded: tuple[explorer.Client, Recording]) -> None:
    """Making handles sends nothing; the first method call sends one request."""
    client, network = recorded
    channel = client.channel("streamer")
    client.user(1), client.me, client.game(1), client.game_version(1), client.confetti(1)
    assert network.paths == []
    assert channel.followers(max_rows=1).index.name == "id"
    assert len(network.paths) == 1


def test_reprs_name_the_address_and_the_caller(platform: Platform) -> None:
    """repr and the HTML card of a client and a channel show base URL and who is signed in."""
    with explorer.connect(
        platform.base_url, username="viewer", password="explorer", progress=False
    ) as client:
        assert repr(client) == f"<Client {platform.base_url} as viewer>"
        assert "viewer" in client._repr_html_() and platform.base_url in client._repr_html_()
        channel = client.channel("streamer")
        assert repr(channel) == f"<Channel 'streamer' at {platform.base_url} as viewer>"
        card = channel._repr_html_()
        assert "streamer" in card and "viewersCurrent" in card
    assert repr(client).endswith("closed>")


def test_an_async_channel_card_does_not_block(platform: Platform) -> None:
    """An async handle's card is drawn without a request (the kernel's loop owns its client)."""

    async def card() -> str:
        async with explorer.AsyncClient(platform.base_url, progress=False) as api:
            return api.channel("streamer")._repr_html_()

    assert "await .info()" in asyncio.run(card())


def test_an_async_handle_method_awaits_to_a_frame(platform: Platform) -> None:
    """Async handle methods are awaited for the same frames the blocking ones return."""

    async def read() -> tuple[pd.DataFrame, int]:
        async with explorer.AsyncClient(platform.base_url, progress=False) as api:
            channel = api.channel("streamer")
            return await channel.info(fields="id,token"), await channel.id()

    frame, channel_id = asyncio.run(read())
    assert frame.index.tolist() == [channel_id] and frame["token"].tolist() == ["streamer"]


def test_a_user_card_shows_the_users_record(platform: Platform) -> None:
    """A user handle on a blocking client shows its record when displayed."""
    with explorer.connect(platform.base_url, progress=False) as client:
        card = client.user(1)._repr_html_()
    assert "&lt;User 1 at" in card and "streamer" in card


def test_the_toolkit_reference_lists_every_method() -> None:
    """docs/toolkit.md mentions each public name of the client and of every handle."""
    text = (Path(__file__).resolve().parent.parent / "docs" / "toolkit.md").read_text()
    for cls in HANDLES:
        for name in vars(cls):
            if not name.startswith("_"):
                assert f"`{name}(" in text or f"`{name}`" in text, f"{cls.__name__}.{name}"


def test_every_listing_method_takes_the_listing_options(platform: Platform) -> None:
    """A one-request listing (api.types) takes the paging and progress options of a paged one
    (api.channels), and ``max_rows`` stops it."""
    with explorer.Client(platform.base_url, progress=True) as client:
        types = client.types(progress=False, max_rows=2, pages=1)
        channels = client.channels(progress=False, max_rows=2, pages=1)
    assert len(types) == 2 and len(channels) == 2
    for cls in HANDLES:
        for name, op in vars(cls).items():
            if isinstance(op, Op) and op.binding and op.binding.result in LISTINGS:
                taken = set(op.__signature__.parameters)
                assert set(ListingOptions.__annotations__) <= taken, f"{cls.__name__}.{name}"


def test_a_listing_method_without_the_listing_options_is_refused() -> None:
    """Declaring a listing whose method does not take ``**options: Unpack[ListingOptions]``
    fails where it is declared."""
    with pytest.raises(TypeError, match="ListingOptions"):

        @endpoint(wire.TYPES, result=Result.TABLE)
        def types(self: Api[M]) -> Call[pd.DataFrame]:
            return Call()


def test_both_clients_share_one_constructor() -> None:
    """Client and AsyncClient are built by one constructor (its arguments declared once)."""
    assert explorer.Client.__init__ is explorer.AsyncClient.__init__


def test_collecting_options_are_declared_by_their_class_only() -> None:
    """api.watch, api.live and api.track take their collectors' options as ``**options``
    instead of spelling the class's parameters again (the channels aside, and api.live's
    ``url``, which it fills from the platform's address when not given)."""
    from explorer.collect.track import AsyncTracker
    from explorer.collect.watch import AsyncWatch
    from explorer.live.log import AsyncLive

    for method, cls in ((Api.watch, AsyncWatch), (Api.live, AsyncLive), (Api.track, AsyncTracker)):
        spelt = set(inspect.signature(method).parameters) - {"self", "channels", "url", "options"}
        again = spelt & set(inspect.signature(cls.__init__).parameters)
        assert not again, f"{method.__name__} spells {sorted(again)} again"
