"""Opaque, tamper-evident page cursors.

A cursor is the position after the last item of a page, bound to the list it came from and to
the tenant, signed with HMAC-SHA256 under a key. The default key is made per process, so a
cursor outlives neither a restart nor a hop to another replica (a shared key can be passed).
A cursor that does not verify is refused with 400, never decoded.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
from typing import Any

from afteraction.errors import ValidationError

__all__ = ["Cursors"]

#: The longest cursor read: a position holds at most an id of 256 characters (up to 1 kB of UTF-8) and a time.
MAX_CURSOR = 2048
_TAG = 16


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Cursors:
    def __init__(self, key: bytes | None = None) -> None:
        self._key = key if key is not None else secrets.token_bytes(32)

    def _tag(self, kind: str, tenant: str, body: bytes) -> bytes:
        """The list (``kind``, which may hold a session id) is bound by the tag, not carried in the body."""
        message = b"\x00".join((kind.encode(), tenant.encode(), body))
        return hmac.new(self._key, message, hashlib.sha256).digest()[:_TAG]

    def encode(self, kind: str, tenant: str, position: list[Any]) -> str:
        body = json.dumps(position, separators=(",", ":"), ensure_ascii=False).encode()
        return f"{_b64(body)}.{_b64(self._tag(kind, tenant, body))}"

    def decode(self, kind: str, tenant: str, cursor: str) -> list[Any]:
        """The position a cursor of this list and tenant holds; ValidationError("cursor") otherwise."""
        bad = ValidationError("cursor", "is not a cursor this server issued for this list; start again without it")
        if len(cursor) > MAX_CURSOR or cursor.count(".") != 1:
            raise bad
        body_text, tag_text = cursor.split(".")
        try:
            body, tag = _unb64(body_text), _unb64(tag_text)
        except (binascii.Error, ValueError):
            raise bad from None
        if not hmac.compare_digest(tag, self._tag(kind, tenant, body)):
            raise bad
        found = json.loads(body)
        if not isinstance(found, list):
            raise bad
        return found
