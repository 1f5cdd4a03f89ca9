"""Opaque, tamper-evident page cursors.

A cursor is the position after the last item of a page, bound to the list it came from and to
the tenant, **encrypted and authenticated** under a key: its body (an event's position holds a
row id that every tenant's rows share, so a readable one would count other tenants' events)
says nothing to the client, and a cursor changed, or of another list or tenant, is refused with
400, never decrypted. The default key is made per process, so a cursor outlives neither a
restart nor a hop to another replica (a shared key can be passed).

The construction, from HMAC-SHA256 alone (no cipher library is a dependency): two keys derived
from the given one, a random 16-byte nonce, the body XORed with the keystream
``HMAC(encryption key, nonce || counter)``, then a 16-byte tag ``HMAC(mac key, list || tenant ||
nonce || ciphertext)`` over the result (encrypt-then-MAC), checked in constant time before
anything is decrypted. A cursor is ``base64url(nonce || ciphertext || tag)``: an event page's
is 75 characters.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import secrets
from typing import Any

from afteraction.errors import ValidationError

__all__ = ["Cursors"]

#: The longest cursor read: a position holds at most an id of 256 characters (up to 1 kB of UTF-8) and a time.
MAX_CURSOR = 2048
_NONCE = 16
_TAG = 16
_BLOCK = hashlib.sha256().digest_size
_ALPHABET = re.compile("[A-Za-z0-9_-]+")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _prf(key: bytes, message: bytes) -> bytes:
    return hmac.new(key, message, hashlib.sha256).digest()


def _framed(*parts: bytes) -> bytes:
    """The parts, each after its length: no two different lists of parts give the same bytes."""
    return b"".join(len(part).to_bytes(4, "big") + part for part in parts)


class Cursors:
    def __init__(self, key: bytes | None = None) -> None:
        root = key if key is not None else secrets.token_bytes(32)
        self._encryption = _prf(root, b"afteraction/cursor/encryption")
        self._mac = _prf(root, b"afteraction/cursor/mac")

    def _xor(self, nonce: bytes, data: bytes) -> bytes:
        blocks = -(-len(data) // _BLOCK)
        stream = b"".join(_prf(self._encryption, nonce + i.to_bytes(4, "big")) for i in range(blocks))
        return (int.from_bytes(data, "big") ^ int.from_bytes(stream[: len(data)], "big")).to_bytes(len(data), "big")

    def _tag(self, kind: str, tenant: str, sealed: bytes) -> bytes:
        """The list (``kind``, which may hold a session id) and the tenant are bound by the tag, not carried."""
        message = _framed(kind.encode("utf-8", "surrogatepass"), tenant.encode("utf-8", "surrogatepass"), sealed)
        return _prf(self._mac, message)[:_TAG]

    def encode(self, kind: str, tenant: str, position: list[Any]) -> str:
        body = json.dumps(position, separators=(",", ":"), ensure_ascii=False).encode()
        nonce = secrets.token_bytes(_NONCE)
        sealed = nonce + self._xor(nonce, body)
        return _b64(sealed + self._tag(kind, tenant, sealed))

    def decode(self, kind: str, tenant: str, cursor: str) -> list[Any]:
        """The position a cursor of this list and tenant holds; ValidationError("cursor") otherwise."""
        bad = ValidationError("cursor", "is not a cursor this server issued for this list; start again without it")
        if len(cursor) > MAX_CURSOR or not _ALPHABET.fullmatch(cursor):
            raise bad
        try:
            raw = _unb64(cursor)
        except (binascii.Error, ValueError):
            raise bad from None
        if len(raw) <= _NONCE + _TAG:
            raise bad
        sealed, tag = raw[:-_TAG], raw[-_TAG:]
        if not hmac.compare_digest(tag, self._tag(kind, tenant, sealed)):
            raise bad
        try:
            found = json.loads(self._xor(sealed[:_NONCE], sealed[_NONCE:]))
        except ValueError:  # pragma: no cover - a body that verifies is one this server wrote
            raise bad from None
        if not isinstance(found, list):
            raise bad
        return found
