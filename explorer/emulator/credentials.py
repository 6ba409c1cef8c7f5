"""Secrets: password hashing, random tokens, CSRF tokens and JWTs.

Passwords use scrypt (a slow, memory-hard KDF from the standard library) with a per-password
salt; bearer tokens, session cookies and codes are random and stored only as SHA-256 digests,
so a copy of the database does not hand out live credentials. CSRF tokens are an HMAC of the
session's cookie: bound to exactly one session, dead with it, and identical for concurrent
requests (so a 461 retry never races another request into a fresh 461).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from typing import Any

import orjson

_SCRYPT = {"n": 2**14, "r": 8, "p": 1, "dklen": 32, "maxmem": 64 * 1024 * 1024}


def hash_password(password: str) -> str:
    """A self-describing scrypt hash of ``password``."""
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, **_SCRYPT)
    return f"scrypt${salt.hex()}${digest.hex()}"


def check_password(password: str, stored: str | None) -> bool:
    """True when ``password`` matches the ``stored`` hash (constant-time compare)."""
    if not stored or not stored.startswith("scrypt$"):
        # Burn the same time as a real check so unknown users are not told apart by timing.
        hashlib.scrypt(password.encode(), salt=b"\0" * 16, **_SCRYPT)
        return False
    _, salt, digest = stored.split("$")
    candidate = hashlib.scrypt(password.encode(), salt=bytes.fromhex(salt), **_SCRYPT)
    return hmac.compare_digest(candidate.hex(), digest)


def new_token(nbytes: int = 32) -> str:
    """A random alphanumeric token."""
    return secrets.token_hex(nbytes)


def digest(token: str) -> str:
    """The stored form of a bearer secret."""
    return hashlib.sha256(token.encode()).hexdigest()


def csrf_token(secret: bytes, session_cookie: str) -> str:
    """The CSRF token of the session whose cookie is ``session_cookie``: alphanumeric, bound
    to that session alone.

    Keyed by the cookie's random value, not the session's row id: SQLite hands a deleted
    row's id to the next session, so a token derived from the id would outlive its logout
    and work for whoever signs in next.
    """
    return hmac.new(secret, f"csrf:{session_cookie}".encode(), hashlib.sha256).hexdigest()[:40]


def same(sent: str, expected: str) -> bool:
    """Constant-time comparison of a presented secret with the expected one."""
    return hmac.compare_digest(sent.encode(), expected.encode())


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def jwt_encode(secret: bytes, claims: dict[str, Any]) -> str:
    """An HS256 JWT carrying ``claims``."""
    header = _b64(orjson.dumps({"alg": "HS256", "typ": "JWT"}))
    payload = _b64(orjson.dumps(claims))
    signature = hmac.new(secret, f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{_b64(signature)}"


def jwt_decode(secret: bytes, token: str) -> dict[str, Any] | None:
    """The claims of a JWT signed with ``secret``, or None when it is malformed or forged.

    Expiry is the caller's check: it knows the clock.
    """
    parts = token.split(".")
    if len(parts) != 3:
        return None
    header, payload, signature = parts
    expected = hmac.new(secret, f"{header}.{payload}".encode(), hashlib.sha256).digest()
    try:
        if not hmac.compare_digest(_unb64(signature), expected):
            return None
        if orjson.loads(_unb64(header)).get("alg") != "HS256":
            return None
        claims = orjson.loads(_unb64(payload))
    except (ValueError, orjson.JSONDecodeError, AttributeError):
        return None
    return claims if isinstance(claims, dict) else None
