"""Canonical JSON of an AEP event, and its HMAC-SHA256 signature.

Both canonical forms are byte-for-byte what the AEP reference server (JavaScript) computes:

- **v1** (legacy, envelope only): ``JSON.stringify(event, sortedTopLevelKeys)``. The key list
  acts at every depth, so a nested object keeps only keys that are also top-level keys, in
  the list's order (``payload`` usually becomes ``{}``).
- **v2** (deep, the default): every object's keys sorted as JavaScript orders them once
  sorted (integer-like keys first, in numeric order, then the rest by UTF-16 code units),
  written as ``JSON.stringify`` does: no whitespace, JavaScript number formatting, non-ASCII
  kept literally.

The ``signature`` field is excluded before canonicalizing. The signature object is the one the
``agent-event-protocol`` SDK writes: ``{"alg": "hmac-sha256", "value": <base64>, "canon": "v2"}``
(v1 carries no ``canon`` marker); afteraction may add ``key_id``, which lies outside the HMAC
as the whole signature object does (``SIGNATURE_MEMBERS``: what a verifier reads of it).

The Python SDK (``agent-event-protocol`` 0.6) writes its v2 form with ``json.dumps(...,
sort_keys=True)``: the same bytes for strings, integers, booleans and nested objects, but not for
a float such as ``1.0`` (JavaScript writes ``1``) nor for integer-like keys (``"10"`` before
``"9"``); its own docstring says the two are to be reconciled. ``verify`` takes a v2 signature
over either spelling of the event it received, so that SDK's events verify unchanged: both are
written from the same parsed event, so neither lets a changed event pass.

JavaScript holds every number as a double, so the canonical form writes an integer beyond 2**53
rounded (``12345678901234567890`` as ``12345678901234567000``) and one past a double's range as
``null``: a signature then covers a whole class of integers, not the one sent.
``inexact_integer`` finds such a number, for a verifier to refuse.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any, Literal

from afteraction.errors import ConfigError

__all__ = [
    "ALGORITHM",
    "SAFE_INTEGER",
    "SIGNATURE_MEMBERS",
    "attach_signature",
    "canonical_v1",
    "canonical_v2",
    "inexact_integer",
    "sign",
    "signature_problem",
    "verify",
]

ALGORITHM = "hmac-sha256"
Version = Literal["v1", "v2"]

_MAX_INDEX = 2**32 - 2  # the largest array index; JavaScript puts such keys first
_SAFE_INT = 2**53
#: The largest magnitude an integer may have for the canonical form to write it exactly.
SAFE_INTEGER = _SAFE_INT
#: The members of a signature object that verifying reads (``key_id`` picks, or checks, the secret).
SIGNATURE_MEMBERS = ("alg", "value", "canon", "key_id")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_NEEDS_ESCAPE = re.compile(r'[\x00-\x1f"\\]|[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]')


def canonical_v1(event: Mapping[str, Any]) -> str:
    """The v1 (envelope-only) canonical form: ``JSON.stringify(copy, Object.keys(copy).sort())``."""
    copy = _without_signature(event)
    keys = sorted(copy, key=_utf16)
    return _dump(copy, lambda obj: [key for key in keys if key in obj])


def canonical_v2(event: Mapping[str, Any]) -> str:
    """The v2 (deep) canonical form: every object's keys sorted recursively, JavaScript style."""
    return _dump(_without_signature(event), lambda obj: sorted(obj, key=_js_key_order))


def sign(event: Mapping[str, Any], secret: str | bytes, *, version: Version = "v2") -> str:
    """Base64 of HMAC-SHA256 over the event's canonical form (its ``signature`` field excluded)."""
    if version not in ("v1", "v2"):
        raise ConfigError(f"signature version must be 'v1' or 'v2', got {version!r}")
    return base64.b64encode(_digest(event, _secret(secret), version)).decode("ascii")


def attach_signature(
    event: Mapping[str, Any],
    secret: str | bytes,
    *,
    version: Version = "v2",
    key_id: str | None = None,
) -> dict[str, Any]:
    """A copy of ``event`` carrying the signature object the AEP SDK writes (``sign_event``).

    ``key_id``, when given, is added as ``signature.key_id`` (an afteraction addition, so a
    verifier can pick the secret); the input is not modified.
    """
    signature: dict[str, str] = {"alg": ALGORITHM, "value": sign(event, secret, version=version)}
    if version == "v2":
        signature["canon"] = "v2"
    if key_id is not None:
        signature["key_id"] = key_id
    out = {key: value for key, value in event.items() if key != "signature"}
    out["signature"] = signature
    return out


def verify(event: Mapping[str, Any], secret: str | bytes, *, allow_v1: bool = False) -> bool:
    """True when the event's ``signature`` object is a valid HMAC-SHA256 by ``secret``.

    ``canon: "v2"`` verifies the deep form only; ``canon: "v1"`` the envelope-only form, and
    only when ``allow_v1``; no marker tries v2, then v1 when ``allow_v1``. Never raises: a
    missing or malformed signature, an unknown algorithm or an event that cannot be
    canonicalized all return False. Digests are compared in constant time.
    """
    try:
        key = _secret(secret)
        signature = event.get("signature") if isinstance(event, Mapping) else None
        if not isinstance(signature, Mapping) or signature.get("alg") != ALGORITHM:
            return False
        value, canon = signature.get("value"), signature.get("canon")
        if not isinstance(value, str) or not value:
            return False
        provided = base64.b64decode(value, validate=True)
        if canon == "v2":
            forms: tuple[Version, ...] = ("v2",)
        elif canon == "v1":
            forms = ("v1",) if allow_v1 else ()
        elif canon is None:
            forms = ("v2", "v1") if allow_v1 else ("v2",)
        else:
            return False
        matched = False
        for form in forms:
            matched |= hmac.compare_digest(_digest(event, key, form), provided)
        if not matched and "v2" in forms:  # the Python SDK's spelling of v2 (see the module)
            matched = hmac.compare_digest(_mac(key, _python_v2(event)), provided)
        return matched
    except (ConfigError, TypeError, ValueError, binascii.Error, RecursionError):
        return False


def signature_problem(signature: object, *, allow_v1: bool = False) -> tuple[str, str] | None:
    """What is wrong with the shape of a ``signature`` object, as (member, rule): member is ``""``
    for the object itself, else ``alg``, ``canon`` or ``value``; None when it is well formed (it may
    still not match: ``verify``). A verifier answers this before "does not match", so a client that
    only mis-cased ``alg`` is not told its secret is wrong."""
    if not isinstance(signature, Mapping):
        return "", f"must be an object {{alg, value, canon}}, got {_kind(signature)}"
    if not signature:
        return "", f'is empty: send {{"alg": "{ALGORITHM}", "value": <base64 HMAC>, "canon": "v2"}}'
    alg = signature.get("alg")
    if alg != ALGORITHM:
        got = "none" if alg is None else repr(alg[:40]) if isinstance(alg, str) else _kind(alg)
        return "alg", f"must be {ALGORITHM!r} (lower case), got {got}"
    canon = signature.get("canon")
    if canon is not None and canon != "v2" and not (canon == "v1" and allow_v1):
        got = repr(canon[:40]) if isinstance(canon, str) else _kind(canon)
        if canon == "v1":
            return "canon", "is 'v1' (legacy, envelope only: it covers no payload); the key takes 'v2' only"
        return "canon", f"must be {'v2 or v1' if allow_v1 else 'v2'} (or left out), got {got}"
    value = signature.get("value")
    if value is None:
        return "value", "is required: the base64 of the HMAC-SHA256 of the canonical event"
    if not isinstance(value, str):
        return "value", f"must be a base64 string, got {_kind(value)}"
    try:
        digest = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return "value", f"is not base64 (A-Z a-z 0-9 + /, padded with =), got {value[:20]!r}"
    if len(digest) != hashlib.sha256().digest_size:
        return "value", f"must be the base64 of 32 bytes (an HMAC-SHA256), got {len(digest)} bytes"
    return None


def inexact_integer(event: Mapping[str, Any]) -> str | None:
    """The path (``payload.count``, ``payload.items[2]``) of the first integer of ``event`` (its
    ``signature`` aside) whose magnitude passes ``SAFE_INTEGER``, which canonical v2 cannot write
    exactly (see the module); None when there is none."""
    stack: list[tuple[str, Any]] = [(str(key), value) for key, value in event.items() if key != "signature"]
    stack.reverse()
    while stack:
        path, value = stack.pop()
        if isinstance(value, int) and not isinstance(value, bool):
            if not -_SAFE_INT <= value <= _SAFE_INT:
                return path
        elif isinstance(value, Mapping):
            stack.extend((f"{path}.{key}", item) for key, item in reversed(list(value.items())))
        elif isinstance(value, (list, tuple)):
            stack.extend((f"{path}[{index}]", item) for index, item in reversed(list(enumerate(value))))
    return None


# -- internals ---------------------------------------------------------------------------------


def _secret(secret: str | bytes) -> bytes:
    if isinstance(secret, str):
        secret = secret.encode("utf-8")
    if not isinstance(secret, bytes) or not secret:
        raise ConfigError("the HMAC secret must be a non-empty str or bytes")
    return secret


def _digest(event: Mapping[str, Any], key: bytes, version: Version) -> bytes:
    return _mac(key, canonical_v2(event) if version == "v2" else canonical_v1(event))


def _mac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).digest()


def _python_v2(event: Mapping[str, Any]) -> str:
    """The v2 form as the Python SDK writes it (``aep._signature.canonicalize_v2``)."""
    return json.dumps(_without_signature(event), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _without_signature(event: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(event, Mapping):
        raise TypeError(f"an event must be a mapping, got {type(event).__name__}")
    return {key: value for key, value in event.items() if key != "signature"}


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _utf16(key: str) -> bytes:
    """Sort key giving JavaScript's default string order (UTF-16 code units)."""
    return key.encode("utf-16-be", "surrogatepass")


def _js_key_order(key: str) -> tuple[int, int, bytes]:
    """Integer-like keys (array indices) first, numerically; then by UTF-16 code units."""
    if key == "0" or (key[:1] in "123456789" and key.isascii() and key.isdigit() and int(key) <= _MAX_INDEX):
        return (0, int(key), b"")
    return (1, 0, _utf16(key))


def _dump(value: Any, keys: Callable[[Mapping[str, Any]], list[str]]) -> str:
    parts: list[str] = []
    _write(value, keys, parts, 0)
    return "".join(parts)


def _write(value: Any, keys: Callable[[Mapping[str, Any]], list[str]], out: list[str], depth: int) -> None:
    if depth > 500:
        raise ValueError("the event is nested too deeply to canonicalize")
    if value is None or value is True or value is False:
        out.append("null" if value is None else "true" if value else "false")
    elif isinstance(value, str):
        out.append(_string(value))
    elif isinstance(value, (int, float)):
        out.append(_number(value))
    elif isinstance(value, Mapping):
        for key in value:
            if not isinstance(key, str):
                raise TypeError(f"object keys must be strings, got {type(key).__name__}")
        out.append("{")
        for i, key in enumerate(keys(value)):
            if i:
                out.append(",")
            out.append(_string(key))
            out.append(":")
            _write(value[key], keys, out, depth + 1)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _write(item, keys, out, depth + 1)
        out.append("]")
    else:
        raise TypeError(f"{type(value).__name__} is not a JSON value")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if len(char) == 2:  # a surrogate pair held as two code points: one character in JavaScript
        return chr(0x10000 + ((ord(char[0]) - 0xD800) << 10) + (ord(char[1]) - 0xDC00))
    return _ESCAPES.get(char) or f"\\u{ord(char):04x}"


def _string(value: str) -> str:
    """A JSON string as ``JSON.stringify`` writes it (lone surrogates escaped, the rest literal)."""
    return '"' + _NEEDS_ESCAPE.sub(_escape, value) + '"'


def _number(value: int | float) -> str:
    """A number as JavaScript prints it (``Number.prototype.toString``); non-finite -> null."""
    if isinstance(value, int):
        if -_SAFE_INT < value < _SAFE_INT:
            return str(int(value))
        try:
            value = float(value)  # JavaScript holds every number as a double
        except OverflowError:
            return "null"
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "0"  # also -0
    sign = "-" if value < 0 else ""
    mantissa, _, exp_text = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    # value = 0.<digits> x 10**point
    point = len(whole) + int(exp_text or "0") - (len(whole + fraction) - len((whole + fraction).lstrip("0")))
    digits = digits.rstrip("0")
    k = len(digits)
    if k <= point <= 21:
        body = digits + "0" * (point - k)
    elif 0 < point <= 21:
        body = digits[:point] + "." + digits[point:]
    elif -6 < point <= 0:
        body = "0." + "0" * -point + digits
    else:
        exponent = point - 1
        body = (
            digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if exponent >= 0 else "-") + str(abs(exponent))
        )
    return sign + body
