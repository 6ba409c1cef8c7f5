"""The OpenAPI 3 description of the platform, generated from the route table.

Paths, methods, parameters, request bodies, success responses and error statuses all come from
the same ``Route`` entries the server runs, so the description cannot drift from what is
served. The records' shapes are derived from the wire (``explorer.wire.models``); ``SCHEMAS``
below adds the shapes of errors, sign-in and the core records (reference.md, plus our
documented choices where it is silent).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from types import ModuleType
from typing import Any

from explorer.emulator.policy import SAFE_METHODS, Route
from explorer.emulator.shapes import INT, STR, component, json_schema, nullable
from explorer.wire import models
from explorer.wire.ratelimit import BUCKETS
from explorer.wire.records import CHANNEL, CHANNEL_PRIVATE, TYPE, USER

USER_PROPERTIES: dict[str, Any] = {field.name: json_schema(field) for field in USER}
TYPE_PROPERTIES: dict[str, Any] = {field.name: json_schema(field) for field in TYPE}
CHANNEL_PROPERTIES: dict[str, Any] = {
    **{field.name: json_schema(field) for field in CHANNEL},
    "type": nullable({"$ref": "#/components/schemas/Type"}),
    "user": {"$ref": "#/components/schemas/User"},
    **{field.name: json_schema(field) for field in CHANNEL_PRIVATE},
}

SCHEMAS: dict[str, Any] = {
    "Error": {
        "type": "object",
        "required": ["statusCode", "error"],
        "properties": {
            "statusCode": INT,
            "error": STR,
            "message": STR,
            "details": {"type": "array", "items": {"type": "object"}},
        },
    },
    "User": {"type": "object", "required": list(USER_PROPERTIES), "properties": USER_PROPERTIES},
    "Type": {"type": "object", "required": list(TYPE_PROPERTIES), "properties": TYPE_PROPERTIES},
    "Channel": {"type": "object", "required": ["id"], "properties": CHANNEL_PROPERTIES},
    "ChatDetails": {
        "type": "object",
        "required": ["endpoints", "permissions"],
        "properties": {
            "authkey": STR,
            "endpoints": {"type": "array", "items": STR},
            "permissions": {"type": "array", "items": STR},
        },
    },
    "Registration": {
        "type": "object",
        "required": ["username", "password", "email"],
        "properties": {
            # The same rules as users.py checks (USERNAME, EMAIL, the password length), whole
            # texts (ECMA-262's ``$``, unlike Python's, never matches before a final newline).
            "username": {"type": "string", "pattern": "^[A-Za-z0-9_]{3,20}$"},
            "password": {"type": "string", "minLength": 8, "maxLength": 256},
            "email": {
                "type": "string",
                "pattern": "^[^@\\s\\x00-\\x1f\\x7f]{1,64}@[^@\\s\\x00-\\x1f\\x7f]{1,255}"
                "\\.[^@\\s\\x00-\\x1f\\x7f]{2,}$",
            },
        },
    },
    "Login": {
        "type": "object",
        "required": ["username", "password"],
        "properties": {
            "username": {"type": "string", "minLength": 1},
            "password": {"type": "string", "minLength": 1},
        },
    },
    "TokenResponse": {
        "type": "object",
        "required": ["access_token", "token_type", "expires_in"],
        "properties": {
            "access_token": STR,
            "token_type": STR,
            "expires_in": INT,
            "refresh_token": STR,
            "scope": STR,
        },
    },
    **{name: component(record) for name, record in models.RECORDS.items()},
}

_PATH_PARAM = re.compile(r"{(\w+)}")
#: A numeric id in a path, as ``Context.path_int`` reads it (digits only, at most 18).
_ID = {"type": "integer", "minimum": 0, "maximum": 10**18 - 1}
#: Path parameters by name. A channel is addressed by id or by token (its name) everywhere;
#: the other records only by numeric id; OAuth clients by their string id.
PATH_SCHEMAS: dict[str, dict[str, Any]] = {
    "channel": {"type": "string", "description": "channel id or token (name)"},
    "client": STR,
    **{
        name: _ID
        for name in (
            "user",
            "game",
            "version",
            "invoice",
            "notification",
            "confetti",
            "type",
            "resource",
        )
    },
}


def _operation(route: Route) -> dict[str, Any]:
    op: dict[str, Any] = {
        "summary": route.summary,
        "operationId": f"{route.method.lower()}{re.sub(r'[^A-Za-z0-9]+', '_', route.path)}",
        "x-bucket": route.endpoint.bucket,
        **(
            {
                "x-bucket-when": {
                    "parameter": route.endpoint.search[0],
                    "bucket": route.endpoint.search[1],
                }
            }
            if route.endpoint.search
            else {}
        ),
        "parameters": [
            {"name": name, "in": "path", "required": True, "schema": PATH_SCHEMAS.get(name, STR)}
            for name in _PATH_PARAM.findall(route.path)
        ]
        + [
            {
                "name": p.name,
                "in": "query",
                "required": p.required,
                "schema": p.schema,
                "description": p.description,
            }
            for p in route.params
        ],
    }
    if route.endpoint.signin != "none":
        op["security"] = [{"session": []}, {"bearer": list(route.endpoint.scopes)}, {"jwt": []}]
        if route.endpoint.signin == "optional":
            op["security"].append({})
    if route.body is not None:
        media = route.body.get("content", "application/json")
        # A body of another media type says so in ``content`` (and may describe its fields
        # in ``schema``); any other body dict is the JSON schema itself.
        schema = (
            route.body.get("schema", {"type": "object"}) if "content" in route.body else route.body
        )
        op["requestBody"] = {"required": True, "content": {media: {"schema": schema}}}
    success: dict[str, Any] = {"description": "OK"}
    if route.answer is not None:
        success["content"] = {route.content_type: {"schema": route.answer}}
    responses: dict[str, Any] = {str(route.status): success}
    error = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
    # A path parameter that cannot address anything (one holding ``/`` or a line break, say)
    # reaches no route at all: 404, whatever the route itself documents.
    unroutable = (404,) if _PATH_PARAM.search(route.path) else ()
    # A state-changing request a browser sends from another site's page is 403 (policy).
    cross_site = () if route.method in SAFE_METHODS else (403,)
    for status in sorted({*route.errors, *unroutable, *cross_site, 429}):
        responses[str(status)] = {"description": "Error", **error}
    op["responses"] = responses
    return op


def extra_schemas(modules: Iterable[ModuleType]) -> dict[str, Any]:
    """The component schemas that resource modules declare in ``SCHEMAS``."""
    found: dict[str, Any] = {}
    for module in modules:
        found.update(getattr(module, "SCHEMAS", {}))
    return found


def describe(
    routes: Iterable[Route], schemas: dict[str, Any] | None = None, base_path: str = "/api/v1"
) -> dict[str, Any]:
    """The OpenAPI document for ``routes`` mounted under ``base_path``."""
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        paths.setdefault(route.path, {})[route.method.lower()] = _operation(route)
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "explorer platform",
            "version": "1.0.0",
            "description": "The streaming platform of platform.md, emulated.",
        },
        "servers": [{"url": base_path}],
        "paths": paths,
        "components": {
            "schemas": {**SCHEMAS, **(schemas or {})},
            "securitySchemes": {
                "session": {"type": "apiKey", "in": "cookie", "name": "explorer_session"},
                "bearer": {"type": "http", "scheme": "bearer"},
                "jwt": {"type": "apiKey", "in": "header", "name": "Authorization"},
            },
        },
    }


def bucket_map(routes: Iterable[Route]) -> str:
    """The endpoint-to-bucket map as a Markdown table (README's "Rate limits" section).

    Every route is also charged to ``global``; login failures also to ``user-login-failed``.
    """
    by_bucket: dict[str, list[str]] = {}
    for route in routes:
        label = f"`{route.method} {route.path}`"
        for name in (route.endpoint.bucket, *route.endpoint.also):
            by_bucket.setdefault(name, []).append(label)
        if route.endpoint.search:
            by_bucket.setdefault(route.endpoint.search[1], []).append(
                f"`{route.method} {route.path}` with `{route.endpoint.search[0]}`"
            )
    lines = ["| bucket | count / seconds | endpoints |", "|---|---|---|"]
    for name in sorted(BUCKETS):
        bucket = BUCKETS[name]
        endpoints = ", ".join(by_bucket.get(name, [])) or (
            "every request" if name == "global" else "(no endpoint of this platform uses it)"
        )
        lines.append(f"| {name} | {bucket.count} / {int(bucket.interval)} | {endpoints} |")
    return "\n".join(lines)
