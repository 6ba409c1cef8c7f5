"""OAuth 2.0: client registration, the implicit and authorization-code grants, refresh with
rotating single-use refresh tokens, and revocation.

Tokens are stored as digests. Every token descends from one grant, its *family*: presenting a
refresh token a second time (a sign it was stolen) revokes the whole family at once. Only a
cookie session may authorize a grant, so a token can never mint a broader one.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlencode

import orjson
from starlette.responses import RedirectResponse, Response

from explorer.emulator import credentials, endings, names, plaintext
from explorer.emulator.context import Context, Services
from explorer.emulator.db import hooks, oauth
from explorer.emulator.db.engine import Store, dumps
from explorer.emulator.live import outbox
from explorer.emulator.policy import Param, Route
from explorer.emulator.responses import ApiError, JSONResponse, bad_request, not_found
from explorer.emulator.scopes import SCOPES
from explorer.wire import routes as wire

BUILTIN_CLIENT = "explorer-toolkit"
BUILTIN_REDIRECTS = ("http://127.0.0.1/oauth/callback", "http://localhost/oauth/callback")
CODE_TTL = 600.0


def ensure_builtin_client(store: Store, created_at: str) -> None:
    """Register the toolkit's public client once per database."""
    oauth.add_client_once(
        store, BUILTIN_CLIENT, "explorer toolkit", dumps(list(BUILTIN_REDIRECTS)), created_at
    )


class OAuthError(ApiError):
    """An RFC 6749 error from the token endpoint: ``error`` is the OAuth error code."""

    def __init__(self, code: str, description: str, status: int = 400) -> None:
        super().__init__(status, description)
        self.code = code

    def body(self) -> dict[str, Any]:
        return {
            "statusCode": self.status,
            "error": self.code,
            "message": self.message,
            "error_description": self.message,
        }


def client_row(store: Store, client_id: str) -> oauth.Client:
    """The client ``client_id``, else a 401 ``invalid_client``."""
    row = oauth.client(store, client_id)
    if row is None:
        raise OAuthError("invalid_client", "Unknown client_id.", 401)
    return row


def _client_body(row: oauth.Client) -> dict[str, Any]:
    return {
        "id": row[0],
        "name": row[2],
        "website": row[3],
        "ownerId": row[4],
        "redirectUris": orjson.loads(row[5]),
        "confidential": row[1] is not None,
        "createdAt": row[6],
    }


def parse_scopes(raw: str) -> list[str]:
    scopes = sorted(set(raw.replace(",", " ").split()))
    unknown = [s for s in scopes if s not in SCOPES]
    if unknown:
        raise OAuthError("invalid_scope", f"Unknown scope {unknown[0]}.")
    if not scopes:
        raise OAuthError("invalid_scope", "Ask for at least one scope.")
    return scopes


def mint_tokens(
    services: Services,
    user_id: int,
    client_id: str,
    scopes: list[str],
    family: str,
    access_ttl: float,
    refresh: bool,
) -> dict[str, Any]:
    """Store a new access token (and refresh token) in ``family``; the token response body."""
    now = services.clock()
    access = credentials.new_token()
    body: dict[str, Any] = {
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": int(access_ttl),
        "scope": " ".join(scopes),
    }
    rows = [(credentials.digest(access), "access", now + access_ttl)]
    if refresh:
        body["refresh_token"] = credentials.new_token()
        rows.append(
            (
                credentials.digest(body["refresh_token"]),
                "refresh",
                now + services.config.refresh_token_ttl,
            )
        )
    oauth.add_tokens(
        services.store,
        [(h, kind, user_id, client_id, " ".join(scopes), family, exp) for h, kind, exp in rows],
    )
    return body


async def register_client(ctx: Context) -> Response:
    """POST /oauth/clients: register an OAuth client (a confidential one gets a secret once)."""
    body = await ctx.json_object()
    name, uris = body.get("name"), body.get("redirectUris")
    if not isinstance(name, str) or not 1 <= len(name) <= 100:
        raise bad_request("name must be a string of 1-100 characters.", "name")
    if (wrong := names.problem(name)) is not None:
        raise bad_request(f"name {wrong}.", "name")
    if (
        not isinstance(uris, list)
        or not 1 <= len(uris) <= 10
        or not all(
            isinstance(u, str) and u.startswith(("http://", "https://")) and len(u) < 500
            for u in uris
        )
    ):
        raise bad_request("redirectUris must list 1-10 http(s) addresses.", "redirectUris")
    website = body.get("website")
    if website is not None and not isinstance(website, str):
        raise bad_request("website must be a string.", "website")
    confidential = bool(body.get("confidential", False))
    client_id = credentials.new_token(12)
    secret = credentials.new_token() if confidential else None
    oauth.add_client(
        ctx.store,
        (
            client_id,
            credentials.digest(secret) if secret else None,
            name,
            website,
            ctx.user_id(),
            dumps(uris),
            ctx.iso_now(),
        ),
    )
    result = _client_body(client_row(ctx.store, client_id))
    if secret:
        result["secret"] = secret
    return JSONResponse(result, status_code=201)


async def list_clients(ctx: Context) -> list[dict[str, Any]]:
    """GET /oauth/clients: the caller's own clients."""
    return [_client_body(r) for r in oauth.clients_of(ctx.store, ctx.user_id())]


async def get_client(ctx: Context) -> dict[str, Any]:
    """GET /oauth/clients/{id}: a client's public description."""
    row = oauth.client(ctx.store, ctx.request.path_params["client"])
    if row is None:
        raise not_found("Client")
    return _client_body(row)


async def delete_client(ctx: Context) -> None:
    """DELETE /oauth/clients/{id}: remove one's own client, revoke its tokens and deactivate
    its web hooks."""
    client_id = ctx.request.path_params["client"]
    owner = oauth.owner(ctx.store, client_id)
    if owner is None:
        raise not_found("Client")
    if owner != ctx.user_id():
        raise ApiError(403, "You can only delete your own clients.")
    for family in oauth.families_of_client(ctx.store, client_id):
        _revoke_family(ctx.services, family)
    with ctx.store.transaction() as tx:
        oauth.revoke_client_tokens(tx, client_id)
        # Its web hooks end with it (nothing is delivered for a client that is gone).
        hooks.end_of_client(tx, client_id)
        oauth.delete_client(tx, client_id)


async def authorize(ctx: Context) -> Response:
    """GET /oauth/authorize: a signed-in user grants a client a token (implicit) or a code."""
    caller = ctx.caller
    if caller is None or caller.kind != "session":
        raise ApiError(403, "Authorize with a signed-in session, not a token.")
    params = ctx.params
    client = client_row(ctx.store, params.get("client_id", ""))
    redirect = params.get("redirect_uri") or orjson.loads(client[5])[0]
    if redirect not in orjson.loads(client[5]):
        raise bad_request("redirect_uri is not registered for this client.", "redirect_uri")
    state = params.get("state")
    response_type = params.get("response_type")

    def bounce(values: dict[str, Any], fragment: bool) -> Response:
        if state is not None:
            values["state"] = state
        sep = "#" if fragment else ("&" if "?" in redirect else "?")
        return RedirectResponse(f"{redirect}{sep}{urlencode(values)}", status_code=302)

    if response_type not in ("token", "code"):
        return bounce({"error": "unsupported_response_type"}, fragment=False)
    try:
        scopes = parse_scopes(params.get("scope", ""))
    except OAuthError as error:
        return bounce(
            {"error": error.code, "error_description": error.message},
            fragment=response_type == "token",
        )
    family = credentials.new_token(8)
    if response_type == "token":
        body = mint_tokens(
            ctx.services,
            caller.user_id,
            client[0],
            scopes,
            family,
            ctx.services.config.implicit_token_ttl,
            refresh=False,
        )
        return bounce(body, fragment=True)
    code = store_code(ctx, client[0], caller.user_id, scopes, redirect, caller.credential)
    return bounce({"code": code}, fragment=False)


def store_code(
    ctx: Context, client_id: str, user_id: int, scopes: list[str], redirect: str, source: str
) -> str:
    """A new single-use authorization code for ``POST /oauth/token`` (``redirect`` empty when
    the grant had none, as a shortcode grant), ending with the credential ``source``."""
    code = credentials.new_token(16)
    endings.derive(ctx.services, endings.code_child(credentials.digest(code)), source)
    oauth.add_code(
        ctx.store,
        credentials.digest(code),
        client_id,
        user_id,
        " ".join(scopes),
        redirect,
        ctx.now + CODE_TTL,
    )
    return code


def check_client_secret(client: oauth.Client, form: dict[str, str]) -> None:
    """A 401 ``invalid_client`` unless ``form`` carries the secret of a confidential client."""
    if client[1] is not None and not credentials.same(
        credentials.digest(form.get("client_secret", "")), client[1]
    ):
        raise OAuthError("invalid_client", "client_secret is wrong or missing.", 401)


def _revoke_family(services: Services, family: str) -> None:
    """Revoke every token of ``family`` and the chat authkeys they fetched."""
    oauth.revoke_family(services.store, family)
    endings.end_credential(services, f"grant:{family}")


async def read_body(ctx: Context) -> dict[str, str]:
    """An OAuth request body, form-encoded or JSON (mixer.py and the official shortcode client
    send JSON); anything else, or text holding a NUL (:mod:`~explorer.emulator.plaintext`), is
    a 400 ``invalid_request`` that says what was wrong."""
    fields = await _parse_body(ctx)
    if plaintext.holds_nul(fields):
        raise OAuthError("invalid_request", plaintext.MESSAGE)
    return fields


async def _parse_body(ctx: Context) -> dict[str, str]:
    raw = await ctx.body()
    media = ctx.request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media == "application/json" or raw.lstrip().startswith(b"{"):
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise OAuthError("invalid_request", "The JSON body could not be read.") from None
        if not isinstance(value, dict):
            raise OAuthError("invalid_request", "The JSON body must be an object.")
        return {str(k): _field(k, v) for k, v in value.items() if v is not None}
    try:
        return dict(parse_qsl(raw.decode(), keep_blank_values=True, strict_parsing=False))
    except UnicodeDecodeError:
        raise OAuthError("invalid_request", "The body must be form-encoded text or JSON.") from None


def _field(name: str, value: Any) -> str:
    """One JSON body field as the form value it stands for (a scope list joins with spaces)."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return " ".join(value)
    raise OAuthError("invalid_request", f"{name} must be a string.")


async def token(ctx: Context) -> dict[str, Any]:
    """POST /oauth/token (form-encoded or JSON): exchange a code, or rotate a refresh token."""
    form = await read_body(ctx)
    grant = form.get("grant_type")
    if not form.get("client_id"):
        raise OAuthError("invalid_request", "client_id is required (form-encoded or JSON body).")
    client = client_row(ctx.store, form.get("client_id", ""))
    check_client_secret(client, form)
    services, now = ctx.services, ctx.now
    if grant == "authorization_code":
        row = oauth.code(ctx.store, credentials.digest(form.get("code", "")))
        if row is None or row[0] != client[0] or row[4] < now:
            raise OAuthError("invalid_grant", "The code is unknown, expired or for another client.")
        if row[3] != form.get("redirect_uri", row[3]):
            raise OAuthError("invalid_grant", "redirect_uri does not match the authorization.")
        family = f"code:{credentials.digest(form['code'])[:16]}"
        if row[5]:
            _revoke_family(ctx.services, family)
            raise OAuthError("invalid_grant", "The code was already used; its tokens are revoked.")
        with ctx.store.transaction() as tx:
            oauth.use_code(tx, credentials.digest(form["code"]))
            return mint_tokens(
                services,
                row[1],
                client[0],
                row[2].split(),
                family,
                services.config.access_token_ttl,
                refresh=True,
            )
    if grant == "refresh_token":
        digest = credentials.digest(form.get("refresh_token", ""))
        refresh = oauth.refresh_token(ctx.store, digest)
        if refresh is None or refresh[1] != client[0] or refresh[4] < now or refresh[5]:
            raise OAuthError("invalid_grant", "The refresh token is unknown, expired or revoked.")
        if refresh[6]:
            _revoke_family(ctx.services, refresh[3])
            raise OAuthError(
                "invalid_grant", "Refresh token reused: every token of this grant is revoked."
            )
        with ctx.store.transaction() as tx:
            oauth.rotate(tx, digest, refresh[3])
            # A live-events socket on the old access token ends with it.
            outbox.ended(tx, f"grant:{refresh[3]}")
            return mint_tokens(
                services,
                refresh[0],
                client[0],
                refresh[2].split(),
                refresh[3],
                services.config.access_token_ttl,
                refresh=True,
            )
    raise OAuthError(
        "unsupported_grant_type", "grant_type must be authorization_code or refresh_token."
    )


async def revoke(ctx: Context) -> Response:
    """POST /oauth/revoke (form-encoded ``token``): revoke a token and its whole family."""
    form = await read_body(ctx)
    if not form.get("token"):
        # RFC 7009 2.1: the token is required; an unknown one is still a 200 (2.2).
        raise OAuthError("invalid_request", "token is required.")
    family = oauth.family_of(ctx.store, credentials.digest(form["token"]))
    if family is not None:
        _revoke_family(ctx.services, family)
    return Response(status_code=200)


_FORM_MEDIA = "application/x-www-form-urlencoded"
_TOKEN_FORM = {
    "content": _FORM_MEDIA,
    "schema": {
        "type": "object",
        "required": ["grant_type", "client_id"],
        "properties": {
            "grant_type": {"type": "string", "enum": ["authorization_code", "refresh_token"]},
            "client_id": {"type": "string"},
            "client_secret": {"type": "string"},
            "code": {"type": "string"},
            "redirect_uri": {"type": "string"},
            "refresh_token": {"type": "string"},
        },
    },
}
_REVOKE_FORM = {
    "content": _FORM_MEDIA,
    "schema": {
        "type": "object",
        "required": ["token"],
        "properties": {"token": {"type": "string", "minLength": 1}},
    },
}

routes = [
    Route(
        wire.AUTHORIZE,
        authorize,
        summary="Authorize a client (implicit: response_type=token; or code)",
        params=tuple(
            Param(n, {"type": "string"}, required=n in ("client_id", "response_type"))
            for n in ("response_type", "client_id", "redirect_uri", "scope", "state")
        ),
        status=302,
        errors=(400, 401, 403, 461),
    ),
    Route(
        wire.TOKEN,
        token,
        summary="Exchange a code or refresh token (form-encoded or JSON)",
        body=_TOKEN_FORM,
        errors=(400, 401),
    ),
    Route(
        wire.REVOKE,
        revoke,
        summary="Revoke a token (form-encoded)",
        body=_REVOKE_FORM,
        errors=(400,),
    ),
    Route(
        wire.ACCOUNT_ADD_OAUTH_CLIENT,
        register_client,
        summary="Register an OAuth client",
        body={"type": "object"},
        status=201,
        errors=(400, 401, 403, 461),
    ),
    Route(
        wire.ACCOUNT_OAUTH_CLIENTS,
        list_clients,
        summary="The caller's OAuth clients",
        errors=(401, 403, 461),
    ),
    Route(wire.OAUTH_CLIENT, get_client, summary="One OAuth client", errors=(404,)),
    Route(
        wire.ACCOUNT_REMOVE_OAUTH_CLIENT,
        delete_client,
        summary="Delete one's OAuth client",
        status=204,
        errors=(401, 403, 404, 461),
    ),
]
