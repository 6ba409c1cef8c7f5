"""Only websockets' documented API is used (issue 21, item 4).

The documented names are those of websockets' reference pages (asyncio server and client,
Sans-I/O client, data structures); an attribute that websockets' connection and protocol
objects have but those pages do not list (``transport``, ``protocol``, ``send_data``,
``close_rcvd``, ...) may change in any release. asyncio's own protocol callbacks are
asyncio's documented API. Every module that imports websockets is checked.
"""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

from websockets.asyncio.server import Server, ServerConnection
from websockets.client import ClientProtocol
from websockets.server import ServerProtocol
from websockets.uri import parse_uri

ROOT = Path(__file__).resolve().parents[1]

#: websockets' reference: asyncio ``ServerConnection``/``ClientConnection`` and ``Server``,
#: and the Sans-I/O ``ClientProtocol``.
DOCUMENTED = {
    # asyncio connections
    "respond", "recv", "recv_streaming", "send", "close", "wait_closed", "ping", "pong",
    "id", "logger", "local_address", "remote_address", "latency", "state", "request",
    "response", "subprotocol", "close_code", "close_reason",
    # asyncio Server
    "connections", "get_loop", "start_serving", "serve_forever", "is_serving", "sockets",
    # Sans-I/O protocols
    "receive_data", "receive_eof", "connect", "send_request", "send_continuation",
    "send_text", "send_binary", "send_close", "send_ping", "send_pong", "fail",
    "events_received", "data_to_send", "close_expected", "handshake_exc", "close_exc",
    "accept", "reject", "send_response",
}  # fmt: skip
#: asyncio.Protocol's callbacks (asyncio's documented API, which the connections implement).
ASYNCIO = {
    "connection_made", "connection_lost", "data_received", "eof_received",
    "pause_writing", "resume_writing",
}  # fmt: skip


def undocumented() -> set[str]:
    """Every attribute websockets' connection, server and protocol objects carry beyond the
    documented ones (set in ``connection_made`` too: ``transport``, ``recv_messages``)."""

    async def connection_attributes() -> set[str]:
        return set(vars(ServerConnection(ServerProtocol(), None)))  # type: ignore[arg-type]

    names = set(vars(ClientProtocol(parse_uri("ws://127.0.0.1/")))) | set(vars(ServerProtocol()))
    names |= asyncio.run(connection_attributes()) | {"transport", "recv_messages"}
    for cls in (ServerConnection, Server, ClientProtocol, ServerProtocol):
        names |= set(dir(cls))
    common = set(dir(set)) | set(dir(dict)) | set(dir(list)) | set(dir(bytes))
    return {n for n in names if not n.startswith("__")} - DOCUMENTED - ASYNCIO - common


def declared(tree: ast.Module) -> tuple[set[str], set[str]]:
    """A module's imported names, and the attributes it declares on its own classes
    (``self.x = ...``, class fields, methods): ``x.transport`` on its own object is not
    websockets'."""
    imported: set[str] = set()
    attributes: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            imported.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            attributes.add(node.attr)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    attributes.add(item.target.id)
                elif isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    attributes.add(item.name)
    return imported, attributes


def websockets_modules() -> list[Path]:
    found = []
    for folder in ("explorer", "benchmarks", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            if "import websockets" in text or "from websockets" in text:
                found.append(path)
    return found


def test_no_undocumented_websockets_attribute() -> None:
    """No module that imports websockets reads an attribute its reference does not list."""
    banned = undocumented()
    assert {"transport", "protocol", "send_data", "close_rcvd", "drain"} <= banned
    offences = []
    for path in websockets_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported, own = declared(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or node.attr not in banned:
                continue
            on_module = isinstance(node.value, ast.Name) and node.value.id in imported
            if node.attr not in own and not on_module:
                offences.append(f"{path.relative_to(ROOT)}:{node.lineno}: .{node.attr}")
    assert not offences, "\n".join(offences)
