"""Private keys, whole or in parts: a PEM block (``-----BEGIN … PRIVATE KEY-----``), a PuTTY key file (from
``PuTTY-User-Key-File-3:`` through its ``Private-MAC``), and a JWK's private members (``d``, ``p``, ``q``, ``dp``,
``dq``, ``qi``, ``k`` of an object that has a ``kty``), in text (``scrub_keys``) and in a mapping (``jwk_private``).

A JWK's public members (``kty``, ``n``, ``e``, ``crv``, ``x``, ``y``, ``kid``) are kept: they say which key it is and
hide nothing. A ``"d"`` outside an object with a ``kty`` is no key's (``{"d": 4}``).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Mapping
from typing import Any

from afteraction.core.redact_tokens import Hit, apply_hits, redaction

__all__ = ["JWK_PRIVATE", "jwk_private", "scrub_keys"]

_PEM = re.compile(  # a block left open runs to the end of the text
    r"-----BEGIN [ A-Z0-9]{0,40}PRIVATE KEY[ A-Z]{0,20}-----[\s\S]*?"
    r"(?:-----END [ A-Z0-9]{0,40}PRIVATE KEY[ A-Z]{0,20}-----|\Z)"
)
# A PuTTY key file: its header, the public part, ``Private-Lines: N``, the base64 lines, ``Private-MAC`` (version 1:
# ``Private-Hash``); the whole block goes, as a PEM block does. Without its count of private lines, a header is text
# about the format. Line breaks may be escaped (a key file inside a JSON string).
_NL = r"(?:\r?\n|(?:\\r)?\\n)"
_PUTTY_HEADER = "PuTTY-User-Key-File-"
_PUTTY_START = re.compile(r"PuTTY-User-Key-File-[0-9]{1,2}:")
_PUTTY_PRIVATE = re.compile(
    rf"Private-Lines:[ \t]*[0-9]{{1,4}}(?:{_NL}[A-Za-z0-9+/=]+(?![^\r\n\\\"']))*"  # whole lines of base64
    rf"(?:{_NL}Private-(?:MAC|Hash):[ \t]*[0-9A-Fa-f]*)?"
)
_PUTTY_REACH = 16_384  # from a header to its ``Private-Lines``: the public lines of an RSA key of 16,384 bits fit


def _putty_hits(text: str) -> list[Hit]:
    """Each key file's span, found from its ``Private-Lines`` back to the nearest header (one look back each, so
    many headers without a private part cost one scan, not one each)."""
    hits: list[Hit] = []
    done = 0
    at = text.find("Private-Lines:")
    while at >= 0:
        header = text.rfind(_PUTTY_HEADER, max(done, at - _PUTTY_REACH), at)
        if header >= 0 and _PUTTY_START.match(text, header) and (private := _PUTTY_PRIVATE.match(text, at)):
            hits.append((header, private.end(), redaction("private_key")))
            done = private.end()
        at = text.find("Private-Lines:", max(at + 1, done))
    return hits


#: The members of a JWK that hold its private key (RFC 7518 §6): RSA's ``d p q dp dq qi``, EC's and OKP's ``d``, a
#: symmetric (``oct``) key's ``k``.
JWK_PRIVATE = frozenset(("d", "p", "q", "dp", "dq", "qi", "k"))

# ``"kty":`` as JSON, a Python dict (``'kty':``), escaped JSON (``\"kty\":``) or JavaScript (``kty:``) writes it
_KTY = re.compile(r"""\bkty\\?["']?[ \t]*:""")
# a private member with a quoted base64url value, quoted the same way as its name
_MEMBER = re.compile(
    r"""(?<![\w-])(?P<q>\\?["']|)(?:dp|dq|qi|d|p|q|k)(?P=q)[ \t]*:[ \t]*"""
    r"""(?P<vq>\\?["'])(?P<val>[A-Za-z0-9_+/=-]+)(?P=vq)"""
)
_BRACE = re.compile("[{}]")
_REACH = 65_536  # how far an object's braces are looked for around its ``kty``: a JWK with its certificates fits


def _object_around(text: str, braces: list[int], at: int) -> tuple[int, int] | None:
    """The span of the innermost ``{…}`` holding ``at`` (to the end of the text if it is left open), if any, looked
    for within ``_REACH`` characters; ``braces``: where the text's braces stand."""
    depth = 0
    start = -1
    first = bisect_left(braces, at)
    for n in range(first - 1, -1, -1):
        brace = braces[n]
        if brace < at - _REACH:
            break
        if text[brace] == "}":
            depth += 1
        elif depth:
            depth -= 1
        else:
            start = brace
            break
    if start < 0:
        return None
    depth = 0
    for brace in braces[first:]:
        if brace > at + _REACH:
            break
        if text[brace] == "{":
            depth += 1
        elif depth:
            depth -= 1
        else:
            return start, brace + 1
    return start, min(len(text), at + _REACH)


def _jwk_hits(text: str) -> list[Hit]:
    """The values of the private members of each object that has a ``kty``; each object is read once."""
    braces = [match.start() for match in _BRACE.finditer(text)]
    spans: set[tuple[int, int]] = set()
    around: tuple[int, int] | None = None
    for kty in _KTY.finditer(text):
        if around is not None and around[0] < kty.start() < around[1]:
            continue  # in the object already read
        around = _object_around(text, braces, kty.start())
        if around is not None:
            spans.update(member.span("val") for member in _MEMBER.finditer(text, *around))
    return [(start, end, redaction("private_key")) for start, end in sorted(spans)]


def scrub_keys(text: str) -> str:
    """``text`` with each PEM private key and PuTTY key file replaced by ``[REDACTED:private_key]``, and the value
    of each private member of a JWK too (its names and public members kept)."""
    if "PRIVATE KEY" in text:
        text = _PEM.sub(redaction("private_key"), text)
    if _PUTTY_HEADER in text:
        text = apply_hits(text, _putty_hits(text))
    if "kty" in text:
        text = apply_hits(text, _jwk_hits(text))
    return text


def jwk_private(value: Mapping[Any, Any]) -> frozenset[str]:
    """The keys of ``value`` that hold a JWK's private members: when it has a ``kty``, its non-empty strings under
    ``d``, ``p``, ``q``, ``dp``, ``dq``, ``qi``, ``k``."""
    if "kty" not in value:
        return frozenset()
    return frozenset(name for name in JWK_PRIVATE if (item := value.get(name)) and isinstance(item, str))
