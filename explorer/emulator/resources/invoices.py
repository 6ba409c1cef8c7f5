"""Invoices: a user's purchases in sparks, and capturing them exactly once.

An invoice belongs to one user and lists ``items``, each with the sparks it moves: positive
lines credit the user (a spark pack bought), negative lines charge them (a skill spent). Its
``sparks`` is the net of its lines. States::

    pending --capture--> captured

Capture is one transaction: the invoice moves from ``pending`` to ``captured`` only if it is
still pending (a second capture answers 409), and the user's balance moves by ``sparks`` only
if it stays non-negative (else 402 and nothing changes). Only the owner captures; staff may
read anyone's invoices. ``GET /invoices`` (the caller's own, newest first) is our addition so
the seeded invoices can be found.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import orjson

from explorer.emulator.access import is_staff
from explorer.emulator.context import Context
from explorer.emulator.db import invoices, users
from explorer.emulator.db.engine import Store, dumps
from explorer.emulator.policy import Route
from explorer.emulator.responses import ApiError, not_found
from explorer.emulator.world import DEMO_NAMES, WORLD_NOW, iso
from explorer.wire import routes as wire

#: The seeded invoices of every demo account: status and items (name, quantity, sparks).
_DEMO_INVOICES: tuple[tuple[str, tuple[tuple[str, int, int], ...]], ...] = (
    ("captured", (("Spark pack (small)", 1, 5_000),)),
    ("pending", (("Spark pack (medium)", 2, 25_000), ("Launch bonus", 1, 1_000))),
    ("pending", (("Chat skill: confetti", 1, -500),)),
)
#: viewer2 also holds an invoice no seeded balance can pay, to show the 402 path.
_UNPAYABLE = ("pending", (("Founder's bundle", 1, -10_000_000),))


def seed(store: Store, world_seed: int) -> None:
    """Give each demo account its invoices, once per database (ids in account order)."""
    if invoices.count(store):
        return
    rows = []
    for user_id, username in users.accounts_named(store, DEMO_NAMES):
        held = _DEMO_INVOICES + ((_UNPAYABLE,) if username == "viewer2" else ())
        for index, (status, items) in enumerate(held):
            created = iso(WORLD_NOW - timedelta(days=len(held) - index))
            lines = [{"name": n, "quantity": q, "sparks": s} for n, q, s in items]
            net = sum(sparks for _, _, sparks in items)
            captured = created if status == "captured" else None
            rows.append((user_id, status, dumps(lines), net, created, created, captured))
    invoices.add_many(store, rows)


def render(row: invoices.Row) -> dict[str, Any]:
    """An Invoice object from its row."""
    item = dict(zip(("id", "userId", "status"), row[:3], strict=True))
    item["items"] = orjson.loads(row[3])
    item.update(zip(("sparks", "createdAt", "updatedAt", "capturedAt"), row[4:], strict=True))
    return item


def _invoice(ctx: Context, *, staff_may_read: bool) -> invoices.Row:
    """The row of path parameter ``invoice``: 404 unknown, 403 someone else's."""
    row = invoices.invoice(ctx.store, ctx.path_int("invoice"))
    if row is None:
        raise not_found("Invoice")
    if row[1] != ctx.user_id() and not (staff_may_read and is_staff(ctx)):
        raise ApiError(403, "This invoice belongs to another user.")
    return row


async def list_invoices(ctx: Context) -> list[dict[str, Any]]:
    """GET /invoices: the caller's invoices, newest first."""
    return [render(row) for row in invoices.of_user(ctx.store, ctx.user_id())]


async def get_invoice(ctx: Context) -> dict[str, Any]:
    """GET /invoices/{id}: one of the caller's invoices (staff may read any)."""
    return render(_invoice(ctx, staff_may_read=True))


async def capture(ctx: Context) -> dict[str, Any]:
    """POST /invoices/{id}/capture: settle a pending invoice and move the sparks, once."""
    row = _invoice(ctx, staff_may_read=False)
    invoice_id, user_id, net = row[0], row[1], row[4]
    now = ctx.iso_now()
    with ctx.store.transaction() as tx:
        if not invoices.capture(tx, invoice_id, now):
            raise ApiError(409, "This invoice is already captured.")
        if not users.charge_sparks(tx, user_id, net):
            raise ApiError(402, f"Not enough sparks: this invoice needs {-net}.")
    return render(_invoice(ctx, staff_may_read=False))


routes = [
    Route(
        wire.ACCOUNT_INVOICES,
        list_invoices,
        summary="The caller's invoices, newest first",
        errors=(401, 403, 461),
    ),
    Route(
        wire.ACCOUNT_INVOICE,
        get_invoice,
        summary="One invoice (the caller's own; staff may read any)",
        errors=(400, 401, 403, 404, 461),
    ),
    Route(
        wire.ACCOUNT_CAPTURE_INVOICE,
        capture,
        summary="Capture a pending invoice: move its sparks, exactly once",
        errors=(400, 401, 402, 403, 404, 409, 461),
    ),
]
