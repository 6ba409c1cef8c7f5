"""JSON responses and the platform's error shape.

Every error the platform sends is ``{"statusCode", "error", "message"}`` (400s may add
``details``), encoded with orjson. Handlers raise :class:`ApiError`; the policy layer turns it
into a response, so no handler builds an error body by hand.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

import orjson
from starlette.responses import Response

CSRF_HEADER = "X-CSRF-Token"


class JSONResponse(Response):
    """A response whose body is encoded with orjson (several times faster than json)."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


class ApiError(Exception):
    """An error answer: status, message and optional 400 ``details``."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        details: list[dict[str, str]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.details = details
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        """The JSON body of this error."""
        if self.status == 461:
            return {"error": "Invalid or missing CSRF header", "statusCode": 461}
        body: dict[str, Any] = {
            "statusCode": self.status,
            "error": reason(self.status),
            "message": self.message,
        }
        if self.details:
            body["details"] = self.details
        return body

    def response(self) -> JSONResponse:
        """This error as a response."""
        return JSONResponse(self.body(), status_code=self.status, headers=self.headers)


def reason(status: int) -> str:
    """The reason phrase for ``status`` (461 is the platform's own)."""
    if status == 461:
        return "Invalid or missing CSRF header"
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def bad_request(message: str, path: str | None = None, kind: str = "invalid") -> ApiError:
    """A 400 with one ``details`` entry naming the offending input."""
    details = [{"path": path, "type": kind, "message": message}] if path else None
    return ApiError(400, message, details=details)


def not_found(what: str) -> ApiError:
    """A 404 saying which kind of thing was not found."""
    return ApiError(404, f"{what} not found.")
