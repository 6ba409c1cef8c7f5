"""Per-user groups: achievements, announcements, invoices and notifications.

Each demo account is seeded with invoices (one captured, a pending credit, a pending charge;
viewer2 also an unpayable one) and the streamer with follow/host/subscription notifications.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx
import pytest

from explorer.emulator import Platform
from explorer.emulator.db import notifications as notification_rows
from explorer.emulator.db.engine import Store
from explorer.emulator.resources import notifications
from tests.conftest import SMALL_WORLD

SignIn = Callable[..., httpx.Client]
ACHIEVEMENT_KEYS = {"slug", "name", "description", "sparks"}


def pending_invoice(client: httpx.Client, *, credit: bool) -> dict[str, Any]:
    """The caller's first pending invoice that credits (or charges) sparks."""
    invoices = client.get("/invoices").json()
    return next(i for i in invoices if i["status"] == "pending" and (i["sparks"] > 0) == credit)


def notification(client: httpx.Client, kind: str) -> dict[str, Any]:
    """The caller's newest notification of type ``kind``."""
    return next(n for n in client.get("/notifications").json() if n["type"] == kind)


def test_achievements_anonymous_get_the_reference_shape(platform: Platform) -> None:
    """Anonymous callers get exactly {slug, name, description, sparks} per achievement."""
    items = httpx.get(f"{platform.base_url}/achievements").json()
    assert items and all(set(item) == ACHIEVEMENT_KEYS for item in items)


def test_achievements_show_the_callers_progress(platform: Platform, signed_in: SignIn) -> None:
    """Signed in, each achievement says whether the caller earned it, and when."""
    items = signed_in(platform.base_url, "streamer").get("/achievements").json()
    earned = {item["slug"]: item["earnedAt"] for item in items if item["earned"]}
    assert "partner" in earned and all(earned.values())
    assert all(item["earnedAt"] is None for item in items if not item["earned"])


def test_staff_announcement_reaches_every_user(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """An announcement is stored (201) and arrives as a notification for each user."""
    platform = make_platform()
    staff = signed_in(platform.base_url, "staff")
    reply = staff.post("/announcements", json={"message": "Maintenance at 10.", "level": "warning"})
    assert reply.status_code == 201
    announcement = reply.json()
    assert announcement["recipients"] == SMALL_WORLD  # one user per channel
    delivered = notification(signed_in(platform.base_url, "viewer"), "announcement")
    assert delivered["payload"] == {
        "type": "announcement",
        "announcementId": announcement["id"],
        "message": "Maintenance at 10.",
        "level": "warning",
    }


def test_announcements_are_staff_only(platform: Platform, signed_in: SignIn) -> None:
    """A non-staff user gets 403, anonymous 401."""
    body = {"message": "Hello everyone"}
    assert (
        signed_in(platform.base_url, "streamer").post("/announcements", json=body).status_code
        == 403
    )
    assert httpx.post(f"{platform.base_url}/announcements", json=body).status_code == 401


@pytest.mark.parametrize(
    ("body", "field"),
    [({}, "message"), ({"message": " "}, "message"), ({"message": "hi", "level": "loud"}, "level")],
)
def test_announcement_bad_input_is_400(
    platform: Platform, signed_in: SignIn, body: dict[str, Any], field: str
) -> None:
    """A missing or blank message or an unknown level is 400 naming the field."""
    reply = signed_in(platform.base_url, "staff").post("/announcements", json=body)
    assert reply.status_code == 400 and reply.json()["details"][0]["path"] == field


def test_invoices_list_the_callers_own(platform: Platform, signed_in: SignIn) -> None:
    """GET /invoices lists only the caller's invoices, newest first."""
    viewer = signed_in(platform.base_url, "viewer")
    me = viewer.get("/users/current").json()["id"]
    invoices = viewer.get("/invoices").json()
    assert {i["userId"] for i in invoices} == {me}
    assert [i["id"] for i in invoices] == sorted((i["id"] for i in invoices), reverse=True)


def test_invoice_of_another_user_is_403_except_for_staff(
    platform: Platform, signed_in: SignIn
) -> None:
    """Another user's invoice is 403 to read; staff may read it."""
    invoice = signed_in(platform.base_url, "viewer").get("/invoices").json()[0]
    path = f"/invoices/{invoice['id']}"
    assert signed_in(platform.base_url, "viewer2").get(path).status_code == 403
    assert signed_in(platform.base_url, "staff").get(path).json() == invoice


@pytest.mark.parametrize(("invoice", "status"), [("999999", 404), ("abc", 400)])
def test_unknown_or_malformed_invoice(
    platform: Platform, signed_in: SignIn, invoice: str, status: int
) -> None:
    """An unknown invoice id is 404, a non-numeric one 400."""
    assert signed_in(platform.base_url, "viewer").get(f"/invoices/{invoice}").status_code == status


def test_invoices_need_sign_in(platform: Platform) -> None:
    """Reading or capturing an invoice anonymously is 401."""
    assert httpx.get(f"{platform.base_url}/invoices/1").status_code == 401
    assert httpx.post(f"{platform.base_url}/invoices/1/capture").status_code == 401


def test_capture_credits_sparks_exactly_once(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """Capture moves a pending invoice to captured and credits its sparks; again is 409."""
    platform = make_platform()
    viewer = signed_in(platform.base_url, "viewer")
    before = viewer.get("/users/current").json()["sparks"]
    invoice = pending_invoice(viewer, credit=True)
    path = f"/invoices/{invoice['id']}/capture"
    captured = viewer.post(path).json()
    assert captured["status"] == "captured" and captured["capturedAt"] is not None
    assert viewer.post(path).status_code == 409
    assert viewer.get("/users/current").json()["sparks"] == before + invoice["sparks"]


def test_capture_without_enough_sparks_is_402_and_changes_nothing(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """A charge beyond the balance is 402; the invoice stays pending, the balance unchanged."""
    platform = make_platform()
    viewer2 = signed_in(platform.base_url, "viewer2")
    before = viewer2.get("/users/current").json()["sparks"]
    invoice = min(viewer2.get("/invoices").json(), key=lambda i: i["sparks"])
    assert viewer2.post(f"/invoices/{invoice['id']}/capture").status_code == 402
    assert viewer2.get(f"/invoices/{invoice['id']}").json()["status"] == "pending"
    assert viewer2.get("/users/current").json()["sparks"] == before


def test_only_the_owner_captures(platform: Platform, signed_in: SignIn) -> None:
    """Staff and other users get 403 capturing someone else's invoice."""
    invoice = pending_invoice(signed_in(platform.base_url, "viewer"), credit=True)
    path = f"/invoices/{invoice['id']}/capture"
    assert signed_in(platform.base_url, "staff").post(path).status_code == 403
    assert signed_in(platform.base_url, "viewer2").post(path).status_code == 403


def test_notifications_list_the_callers_own(platform: Platform, signed_in: SignIn) -> None:
    """GET /notifications lists the caller's own notifications, newest first."""
    streamer = signed_in(platform.base_url, "streamer")
    listed = streamer.get("/notifications")
    me = streamer.get("/users/current").json()["id"]
    assert {n["userId"] for n in listed.json()} == {me}
    assert {"follow", "host", "subscribe", "resubscribe"} <= {n["type"] for n in listed.json()}
    assert int(listed.headers["X-Total-Count"]) >= len(listed.json())


def test_notification_of_another_user_is_403(platform: Platform, signed_in: SignIn) -> None:
    """Reading another user's notification is 403."""
    own = notification(signed_in(platform.base_url, "streamer"), "follow")
    viewer = signed_in(platform.base_url, "viewer")
    assert viewer.get(f"/notifications/{own['id']}").status_code == 403


def test_unknown_notification_is_404(platform: Platform, signed_in: SignIn) -> None:
    """A notification id that does not exist is 404."""
    viewer = signed_in(platform.base_url, "viewer")
    assert viewer.get("/notifications/999999").status_code == 404


def test_notifications_need_sign_in(platform: Platform) -> None:
    """Notifications are 401 anonymously."""
    assert httpx.get(f"{platform.base_url}/notifications/1").status_code == 401


def test_share_sub_toggles_sharing(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """POST shareSub shares a subscription notification; DELETE takes it back."""
    platform = make_platform()
    streamer = signed_in(platform.base_url, "streamer")
    resub = notification(streamer, "resubscribe")
    path = f"/notifications/{resub['id']}/shareSub"
    assert streamer.post(path).json()["payload"]["shared"] is True
    assert streamer.get(f"/notifications/{resub['id']}").json()["payload"]["shared"] is True
    assert streamer.delete(path).json()["payload"]["shared"] is False


def test_share_sub_refuses_other_notifications(platform: Platform, signed_in: SignIn) -> None:
    """Only subscription notifications can be shared: a follow is 400."""
    streamer = signed_in(platform.base_url, "streamer")
    follow = notification(streamer, "follow")
    reply = streamer.post(f"/notifications/{follow['id']}/shareSub")
    assert reply.status_code == 400


def test_share_sub_of_another_user_is_403(platform: Platform, signed_in: SignIn) -> None:
    """Sharing someone else's subscription notification is 403."""
    resub = notification(signed_in(platform.base_url, "streamer"), "resubscribe")
    viewer = signed_in(platform.base_url, "viewer")
    assert viewer.post(f"/notifications/{resub['id']}/shareSub").status_code == 403


def test_email_unsubscribe_is_recorded(
    make_platform: Callable[..., Platform], signed_in: SignIn
) -> None:
    """Opt-outs accumulate per category; repeating one changes nothing."""
    platform = make_platform(rate_limits=False)
    viewer = signed_in(platform.base_url, "viewer")
    viewer.post("/notifications/emailUnsubscribe", json={"category": "follow"})
    viewer.post("/notifications/emailUnsubscribe", json={"category": "announcement"})
    state = viewer.post("/notifications/emailUnsubscribe", json={"category": "follow"}).json()
    assert [u["category"] for u in state["unsubscribed"]] == ["announcement", "follow"]


def test_email_unsubscribe_bad_category_is_400(platform: Platform, signed_in: SignIn) -> None:
    """An unknown category is 400 naming it."""
    viewer = signed_in(platform.base_url, "viewer")
    reply = viewer.post("/notifications/emailUnsubscribe", json={"category": "spam"})
    assert reply.status_code == 400 and reply.json()["details"][0]["path"] == "category"


def test_email_unsubscribe_needs_sign_in(platform: Platform) -> None:
    """Anonymous emailUnsubscribe is 401."""
    reply = httpx.post(
        f"{platform.base_url}/notifications/emailUnsubscribe", json={"category": "all"}
    )
    assert reply.status_code == 401


def test_a_database_from_before_notification_uuids_is_upgraded(tmp_path: Path) -> None:
    """Opening a database whose notifications had numeric ids and triggers gives each a UUID
    and this version's type, so REST and follows work on it."""
    path = tmp_path / "old.db"
    with closing(sqlite3.connect(path)) as old:
        old.executescript(
            "CREATE TABLE notifications (id INTEGER PRIMARY KEY, userId INTEGER NOT NULL, "
            "trigger TEXT NOT NULL, payload TEXT NOT NULL, sentAt TEXT NOT NULL, "
            "shared INTEGER NOT NULL DEFAULT 0);"
            "INSERT INTO notifications (userId, trigger, payload, sentAt) "
            "VALUES (7, 'followed', '{}', '2020-01-01T00:00:00.000Z');"
        )
    store = Store(path, extra_ddl=[notification_rows.SCHEMA])
    try:
        notifications.seed(store, 0)
        (row,) = store.all("SELECT uuid, type FROM notifications")
    finally:
        store.close()
    assert uuid.UUID(row[0]).version == 4 and row[1] == "follow"
