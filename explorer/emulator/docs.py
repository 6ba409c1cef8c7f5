"""The generated parts of ``docs/``, kept in step with the route table.

``docs/rest.md`` is every endpoint (method, path, bucket, sign-in, OAuth scopes, parameters,
body, answers) rendered from the OpenAPI description the platform serves at
``/api/v1/openapi.json``, which is itself generated from the route table; the endpoint-to-bucket
map between the markers of ``docs/platform.md`` comes from the same routes. ``python -m
explorer.emulator.docs`` (``make docs``) rewrites both; a test fails when either differs, so
the documentation can never drift from what is served and enforced.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from explorer.emulator.app import platform_routes
from explorer.emulator.openapi import bucket_map, describe, extra_schemas
from explorer.emulator.resources import modules

START = "<!-- bucket-map:start -->"
END = "<!-- bucket-map:end -->"
#: The order of methods on one path.
_METHODS = ("get", "post", "put", "patch", "delete")
_SIGN_IN = {
    "none": "none (anonymous)",
    "optional": "optional (anonymous, or signed in: more is shown)",
    "required": "required",
}
_INTRO = """\
# REST reference

<!-- Generated from the route table by `make docs` (python -m explorer.emulator.docs);
tests/test_docs.py keeps it true. Do not edit by hand. -->

Every endpoint of the platform, from the same description it serves at `/api/v1/openapi.json`.
Paths are under `/api/v1`; `{channel}` is a channel id or its token (name), other `{...}` are
numeric ids (OAuth clients: their string id). Signing in, the error shape, listing and the
bucket sizes are in [platform.md](platform.md); chat is in [chat.md](chat.md). "Signed in"
means a cookie session (with its CSRF token), an OAuth bearer token holding the scopes
listed, or a JWT. Every endpoint may also answer 429, and every request counts against
`global`.
"""


def render(text: str) -> str:
    """``text`` with the part between the bucket-map markers replaced by the current map."""
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{bucket_map(platform_routes())}\n{END}{tail}"


def _schema(schema: dict[str, Any]) -> str:
    """A schema in a few words: a component's name, ``[item]``, an enum, a type and range."""
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if schema.get("type") == "array":
        return f"[{_schema(schema.get('items', {}))}]"
    if "enum" in schema:
        return " \\| ".join(f"`{value}`" for value in schema["enum"])
    kind = str(schema.get("type", "any"))
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None or high is not None:
        kind += f" {'' if low is None else low}..{'' if high is None else high}"
    return kind


def _cell(text: str) -> str:
    """``text`` safe inside a Markdown table cell."""
    return text.replace("|", "\\|")


def _shape(name: str, schema: dict[str, Any]) -> list[str]:
    """One component schema: its properties, required ones in bold."""
    required = set(schema.get("required", []))
    fields = [
        f"**`{field}`**" if field in required else f"`{field}`"
        for field in schema.get("properties", {})
    ]
    described = f": {', '.join(fields)}" if fields else f": {_schema(schema)}"
    return [f"- `{name}`{described}"]


def _sign_in(operation: dict[str, Any]) -> tuple[str, list[str]]:
    """Whether the endpoint needs a signed-in caller, and the OAuth scopes it takes."""
    security = operation.get("security")
    if security is None:
        return "none", []
    scopes = [scope for option in security for scope in option.get("bearer", [])]
    return ("optional" if {} in security else "required"), scopes


def _endpoint(method: str, path: str, operation: dict[str, Any]) -> list[str]:
    """One endpoint's section."""
    bucket = f"`{operation['x-bucket']}`"
    if "x-bucket-when" in operation:
        when = operation["x-bucket-when"]
        bucket += f" (`{when['bucket']}` with `{when['parameter']}`)"
    sign_in, scopes = _sign_in(operation)
    lines = [f"### `{method.upper()} {path}`", "", operation.get("summary") or "", ""]
    lines.append(f"- bucket: {bucket}")
    lines.append(f"- sign-in: {_SIGN_IN[sign_in]}")
    if scopes:
        lines.append(f"- OAuth scopes: {', '.join(f'`{scope}`' for scope in scopes)}")
    body = operation.get("requestBody", {}).get("content", {})
    for media, content in body.items():
        lines.append(f"- body: `{media}`, {_schema(content.get('schema', {}))}")
    statuses = operation["responses"]
    success = [status for status in statuses if status.startswith("2")]
    for status in success:
        content = statuses[status].get("content", {})
        shapes = [f"`{media}` {_schema(c.get('schema', {}))}" for media, c in content.items()]
        lines.append(f"- answers: {status}{', ' if shapes else ''}{', '.join(shapes)}")
    errors = [status for status in statuses if status not in success]
    lines.append(f"- errors: {', '.join(errors)}")
    parameters = operation.get("parameters", [])
    if parameters:
        lines += ["", "| parameter | in | required | schema | meaning |", "|---|---|---|---|---|"]
        for p in parameters:
            meaning = _cell(p.get("description") or p["schema"].get("description", ""))
            required = "yes" if p.get("required") else ""
            lines.append(
                f"| `{p['name']}` | {p['in']} | {required} | {_schema(p['schema'])} | {meaning} |"
            )
    return [*lines, ""]


def rest_reference() -> str:
    """``docs/rest.md``: every endpoint, grouped by the first segment of its path, sorted
    (so the order of the route table does not matter)."""
    document = describe(platform_routes(), extra_schemas(modules()))
    groups: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for path, operations in sorted(document["paths"].items()):
        for method in sorted(operations, key=_METHODS.index):
            group = path.strip("/").split("/")[0]
            groups.setdefault(group, []).append((method, path, operations[method]))
    count = sum(len(endpoints) for endpoints in groups.values())
    lines = [_INTRO, f"{count} endpoints in {len(groups)} groups:", ""]
    lines += [f"- [{group}](#{group.lower()}) ({len(groups[group])})" for group in groups]

    lines += ["- [shapes](#shapes): the records that bodies and answers name", ""]
    for group, endpoints in groups.items():
        lines += [f"## {group}", ""]
        for method, path, operation in endpoints:
            lines += _endpoint(method, path, operation)
    lines += ["## shapes", "", "The fields of each record named above (required ones in bold).", ""]
    for name, schema in sorted(document["components"]["schemas"].items()):
        lines += _shape(name, schema)
    return "\n".join(lines).rstrip() + "\n"


def main(folder: str = "docs") -> int:
    """Rewrite ``FOLDER/rest.md`` and the bucket map in ``FOLDER/platform.md``."""
    docs = Path(folder)
    (docs / "rest.md").write_text(rest_reference(), encoding="utf-8")
    platform = docs / "platform.md"
    platform.write_text(render(platform.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
