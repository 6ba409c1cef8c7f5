"""The caller's account (``api.me``) and other users (``api.user(id)``) as handles.

``api.me`` is what only the signed-in caller can read or change: their own record,
achievements earned, invoices, notifications, e-mail opt-outs and registered OAuth clients.
``api.user(id)`` is one user's public record, the channels they follow, the profile they may
edit, and the confirmation of a new account. Both are lazy: nothing is requested until a
method is called.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Unpack

import pandas as pd

from explorer.rest import schemas, tables
from explorer.rest.endpoints import Result
from explorer.rest.handle import Call, Handle, ListingOptions, M, action, endpoint, names
from explorer.wire import routes as wire


def _opt_outs(body: dict[str, Any]) -> pd.DataFrame:
    """Every e-mail opt-out held, indexed by category."""
    return tables.frame(body.get("unsubscribed") or [], schemas.EMAIL_OPT_OUT)


class User(Handle[M]):
    """One user, by id: ``api.user(1)``."""

    _bound = ("user_id",)

    def __repr__(self) -> str:
        return f"<User {self._values['user_id']!r} at {self.base_url} as {self._identity()}>"

    @endpoint(wire.USER)
    def info(self) -> Call[pd.DataFrame]:
        """The user as a one-row frame indexed by user id."""
        return Call()

    @endpoint(wire.USER_FOLLOWS, result=Result.PAGED)
    def follows(self, **options: Unpack[ListingOptions]) -> Call[pd.DataFrame]:
        """The channels the user follows, most recently followed first, indexed by id."""
        return Call(**options)

    @endpoint(wire.USER_UPDATE)
    def update(self, **changes: Any) -> Call[pd.DataFrame]:
        """Change one's own ``bio`` (text or None) or ``social`` links; the user afterwards."""
        return Call(json=changes)

    @endpoint(wire.USER_CONFIRM)
    def confirm(self, code: str) -> Call[pd.DataFrame]:
        """Verify a new account with the code from its confirmation mail; the user after."""
        return Call(json={"code": code})


class Account(Handle[M]):
    """The signed-in caller's own account: ``api.me``."""

    def __repr__(self) -> str:
        return f"<Account at {self.base_url} as {self._identity()}>"

    @endpoint(wire.ACCOUNT)
    def info(self) -> Call[pd.DataFrame]:
        """The signed-in user, with channel, groups, email and preferences, as one row."""
        return Call()

    @action
    async def id(self) -> int:
        """The signed-in user's id."""
        return int((await Account.info(self)).index[0])

    @endpoint(wire.ACCOUNT_INVOICES, result=Result.TABLE)
    def invoices(self, **options: Unpack[ListingOptions]) -> Call[pd.DataFrame]:
        """The caller's invoices, newest first, indexed by id."""
        return Call(**options)

    @endpoint(wire.ACCOUNT_INVOICE)
    def invoice(self, invoice_id: int) -> Call[pd.DataFrame]:
        """One invoice (the caller's own; staff may read any), as one row."""
        return Call()

    @endpoint(wire.ACCOUNT_CAPTURE_INVOICE)
    def capture_invoice(self, invoice_id: int) -> Call[pd.DataFrame]:
        """Capture a pending invoice, moving its sparks exactly once; the invoice afterwards."""
        return Call()

    @endpoint(wire.ACCOUNT_NOTIFICATIONS, result=Result.PAGED)
    def notifications(self, **options: Unpack[ListingOptions]) -> Call[pd.DataFrame]:
        """The caller's notifications, newest first, indexed by id (a UUID); ``type`` says
        what happened, ``payload`` (an object) who did it, where."""
        return Call(**options)

    @endpoint(wire.ACCOUNT_NOTIFICATION)
    def notification(self, notification_id: str) -> Call[pd.DataFrame]:
        """One of the caller's notifications, as one row."""
        return Call()

    @endpoint(wire.ACCOUNT_SHARE_SUBSCRIPTION)
    def share_subscription(self, notification_id: str) -> Call[pd.DataFrame]:
        """Share a subscription notification to the channel's chat; the notification after."""
        return Call()

    @endpoint(wire.ACCOUNT_UNSHARE_SUBSCRIPTION)
    def unshare_subscription(self, notification_id: str) -> Call[pd.DataFrame]:
        """Take a shared subscription back; the notification afterwards."""
        return Call()

    @endpoint(wire.ACCOUNT_UNSUBSCRIBE_EMAIL, shape=_opt_outs)
    def unsubscribe_email(self, category: str) -> Call[pd.DataFrame]:
        """Opt out of one category of notification e-mail (``all`` for every one); every
        opt-out held, indexed by category, with ``since``."""
        return Call(json={"category": category})

    @endpoint(wire.ACCOUNT_OAUTH_CLIENTS, result=Result.TABLE)
    def oauth_clients(self, **options: Unpack[ListingOptions]) -> Call[pd.DataFrame]:
        """The OAuth clients the caller registered, indexed by client id."""
        return Call(**options)

    @endpoint(wire.ACCOUNT_ADD_OAUTH_CLIENT)
    def add_oauth_client(
        self,
        name: str,
        redirect_uris: str | Iterable[str],
        *,
        website: str | None = None,
        confidential: bool = False,
    ) -> Call[pd.DataFrame]:
        """Register an OAuth client; a ``confidential`` one gets its ``secret`` in this answer
        only. The client as one row."""
        body = {"name": name, "redirectUris": names(redirect_uris), "confidential": confidential}
        return Call(json=body if website is None else {**body, "website": website})

    @endpoint(wire.ACCOUNT_REMOVE_OAUTH_CLIENT, result=Result.NONE)
    def remove_oauth_client(self, client_id: str) -> Call[None]:
        """Delete one of the caller's OAuth clients."""
        return Call()
