"""Private keys, whole or in parts: a PEM block (``-----BEGIN … PRIVATE KEY-----``), a PuTTY key file (from
``PuTTY-User-Key-File-3:`` through its ``Private-MAC``), and a JWK's private members (``d``, ``p``, ``q``, ``dp``,
``dq``, ``qi``, ``k`` of an object that has a ``kty``), in text (``scrub_keys``) and in a mapping (``jwk_private``).

A JWK's public members (``kty``, ``n``, ``e``, ``crv``, ``x``, ``y``, ``kid``) are kept: they say which key it is and
hide nothing. A ``"d"`` outside an object with a ``kty`` is no key's (``{"d": 4}``). A JWK is read as JSON (or a
Python dict as printed, or JavaScript) and also as YAML (``kty: RSA`` / ``d: …``), TOML (``kty = "EC"``) and Python
keywords (``dict(kty="oct", k="…")``), where its ``kty`` must name a key type and its private values be long enough
to be a key's: a ``d: 5`` is kept.
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

# ``"kty":`` as JSON, a Python dict (``'kty':``), escaped JSON (``\"kty\":``) or JavaScript (``kty:``) writes it; a
# word of its own (checked apart: a pattern that starts with its literal is searched for by it, ``\b`` first is not)
_KTY = re.compile(r"""kty\\?["']?[ \t]*:""")
# a private member with a quoted base64url value, quoted the same way as its name
_MEMBER = re.compile(
    r"""(?<![\w-])(?P<q>\\?["']|)(?:dp|dq|qi|d|p|q|k)(?P=q)[ \t]*:[ \t]*"""
    r"""(?P<vq>\\?["'])(?P<val>[A-Za-z0-9_+/=-]+)(?P=vq)"""
)
_BRACE = re.compile("[{}]")
_REACH = 65_536  # how far an object's braces are looked for around its ``kty``: a JWK with its certificates fits


class _Brackets:
    """Where the brackets of one text stand, each paired with the one that closes it: read once, left to right, so
    that the object around each ``kty`` is found at once (walked back from each, a run of ``}"kty":`` cost the
    square of its length up to ``_REACH``: 6 s for 64 KiB)."""

    def __init__(self, text: str, pattern: re.Pattern[str], opener: str) -> None:
        self.size = len(text)
        self.at = [match.start() for match in pattern.finditer(text)]
        self.open = [-1] * len(self.at)  # after each bracket, the innermost one left open (its index), or -1
        self.closer = [-1] * len(self.at)  # for an opening bracket, the index of the one that closes it
        below = [-1] * len(self.at)  # for an opening bracket, the one left open when it opened
        top = -1
        for n, at in enumerate(self.at):
            if text[at] == opener:
                below[n], top = top, n
            elif top >= 0:
                self.closer[top], top = n, below[top]
            self.open[n] = top


def _object_around(brackets: _Brackets, at: int) -> tuple[int, int] | None:
    """The span of the innermost ``{…}`` holding ``at`` (to the end of the text if it is left open), if any, looked
    for within ``_REACH`` characters (or ``(…)``: ``brackets`` says which)."""
    first = bisect_left(brackets.at, at)
    start = brackets.open[first - 1] if first else -1
    if start < 0 or brackets.at[start] < at - _REACH:
        return None
    closer = brackets.closer[start]
    if closer >= 0 and brackets.at[closer] <= at + _REACH:
        return brackets.at[start], brackets.at[closer] + 1
    return brackets.at[start], min(brackets.size, at + _REACH)


# --- a JWK written without JSON: YAML, TOML, Python keywords ------------------------------------------------------
# Without JSON's braces and quotes, ``kty`` alone says too little: here its value must be a key type (RFC 7518 §6.1,
# RFC 8037) and a private member's value 16 base64url characters at least (a 128-bit ``oct`` key has 22). A name
# starts a word, or a line after an escaped line break (YAML inside a JSON string: ``"kty: RSA\\nd: …"``); each
# pattern starts with the name, so that the engine skips to it (``_name_start`` checks what stands before).
_KTY_TYPED = re.compile(r"""kty(?P<q>\\?["']|)[ \t]*[:=][ \t]*(?P<vq>\\?["']|)(?:RSA|EC|OKP|oct)(?P=vq)(?![\w-])""")
_LOOSE_MEMBER = re.compile(
    r"""(?:dp|dq|qi|d|p|q|k)(?P<q>\\?["']|)[ \t]*[:=][ \t]*"""
    r"""(?P<vq>\\?["']|)(?P<val>[A-Za-z0-9_+/-]{16,}={0,2})(?P=vq)(?![\w+/=-])"""
)
_PAREN = re.compile("[()]")
_MEMBER_LINE = re.compile(r"""(?:\\?["'])?[\w.-]+(?:\\?["'])?[ \t]*[:=]""")


def _name_start(text: str, match: re.Match[str]) -> int:
    """Where the name ``match`` starts with begins, its opening quote (the same as its closing one) included; -1
    when it does not start a word (``xd: …``, ``"d': …``)."""
    start = match.start() - len(match["q"])
    if start < 0 or text[start : match.start()] != match["q"]:
        return -1
    if start and (text[start - 1].isalnum() or text[start - 1] in "_-") and not text.startswith("\\n", start - 2):
        return -1
    return start


def _line_start(text: str, at: int, low: int) -> int:
    """Where the line holding ``at`` starts: after a line break, or after one escaped in a string (``\\n``)."""
    start = max(low, text.rfind("\n", low, at) + 1)
    escaped = text.rfind("\\n", start, at)
    return start if escaped < 0 else escaped + 2


def _line_end(text: str, at: int, high: int) -> int:
    """Where the line holding ``at`` ends: at the next line break, escaped or not."""
    end = text.find("\n", at, high)
    end = high if end < 0 else end
    escaped = text.find("\\n", at, end)
    return end if escaped < 0 else escaped


def _indent(text: str, start: int, end: int) -> int:
    """How many spaces and tabs start ``text[start:end]``."""
    at = start
    while at < end and text[at] in " \t":
        at += 1
    return at - start


def _blank_before(text: str, at: int, low: int) -> int:
    """``at`` moved back over the spaces and tabs before it."""
    while at > low and text[at - 1] in " \t":
        at -= 1
    return at


def _lines_around(text: str, at: int) -> tuple[int, int, bool, int]:
    """The span of the mapping written a member a line (YAML, TOML, keywords one a line) whose member starts at
    ``at``: the lines around it that start a member at its column, or start further in (a value's own lines), or are
    blank; up to the ``- `` that starts its YAML list item. And whether the member starts its line: when something
    stands before it (``ParseError: kty: EC``), the span runs from ``at`` through the lines below that start a member
    where that line starts. And where the line of ``at`` ends. Lines are read one at a time, within ``_REACH``."""
    low, high = max(0, at - _REACH), min(len(text), at + _REACH)
    first = _blank_before(text, at, low)
    item = first > low + 1 and text.startswith("- ", first - 1)  # ``- kty: RSA``: a list item's first member
    if item:
        first = _blank_before(text, first - 1, low)
    alone = first == low or text[first - 1] == "\n" or text.startswith("\\n", first - 2)
    if alone:
        column = at - first
    else:
        line = _line_start(text, at, low)
        column = _indent(text, line, at)
        first = at

    def kind(start: int, end: int) -> str:  # "in" the mapping, its list "item", or "out"
        indent = _indent(text, start, end)
        if start + indent == end or text[start + indent] == "\r" or indent > column:
            return "in"  # blank, or a value's own line
        if indent == column:
            return "in" if _MEMBER_LINE.match(text, start + indent, end) else "out"
        starts_item = indent + 2 == column and text.startswith("- ", start + indent)
        return "item" if starts_item and _MEMBER_LINE.match(text, start + column, end) else "out"

    while alone and not item and first > low:  # upwards, to the mapping's first line
        end = first - (1 if text[first - 1] == "\n" else 2)
        start = _line_start(text, end, low)
        if (found := kind(start, end)) == "out":
            break
        first = start
        if found == "item":
            break
    last = line_end = _line_end(text, at, high)
    while last < high:  # downwards, to its last
        start = last + (1 if text[last] == "\n" else 2)
        end = _line_end(text, start, high)
        if kind(start, end) != "in":
            break
        last = end
    return first, last, alone, line_end


def _typed_hits(text: str, braces: _Brackets) -> set[tuple[int, int]]:
    """The values of the private members of each JWK written without JSON: a member a line, or on one line inside
    the innermost ``{…}`` (YAML's flow mapping, TOML's inline table) or ``(…)`` (``dict(kty="EC", d="…")``); after
    other words on its line (``ParseError: kty: EC``), the rest of the line (when no bracket holds it) and the lines
    below. Each line is read once, however many ``kty`` it holds."""
    parens: _Brackets | None = None  # the text's parentheses, found when first needed
    spans: set[tuple[int, int]] = set()
    read = (-1, -1)  # the span read last
    line_end = below = -1  # where the line of the last ``kty`` read ends, and the lines below it that were read

    def values(start: int, end: int) -> None:
        spans.update(
            member.span("val") for member in _LOOSE_MEMBER.finditer(text, start, end) if _name_start(text, member) >= 0
        )

    for kty in _KTY_TYPED.finditer(text):
        at = _name_start(text, kty)
        if at < 0 or read[0] < at < read[1]:
            continue  # in the mapping already read
        if at >= line_end:  # on a line not read yet
            start, below, alone, line_end = _lines_around(text, at)
            if alone:
                read = start, below
                values(*read)
                continue
            values(line_end, below)
        if parens is None:
            parens = _Brackets(text, _PAREN, "(")
        held = [span for span in (_object_around(braces, at), _object_around(parens, at)) if span]
        if held:
            read = max(held)  # the innermost bracket holds the rest of the line
            values(*read)
        else:
            read = at, below
            values(at, line_end)
    return spans


def _jwk_hits(text: str) -> list[Hit]:
    """The values of the private members of each object that has a ``kty``; each object is read once."""
    braces = _Brackets(text, _BRACE, "{")
    spans: set[tuple[int, int]] = set()
    around: tuple[int, int] | None = None
    for kty in _KTY.finditer(text):
        if kty.start() and (text[kty.start() - 1].isalnum() or text[kty.start() - 1] == "_"):
            continue  # inside a word
        if around is not None and around[0] < kty.start() < around[1]:
            continue  # in the object already read
        around = _object_around(braces, kty.start())
        if around is not None:
            spans.update(member.span("val") for member in _MEMBER.finditer(text, *around))
    spans |= _typed_hits(text, braces)
    hits: list[Hit] = []
    for start, end in sorted(spans):
        if not hits or start >= hits[-1][1]:
            hits.append((start, end, redaction("private_key")))
    return hits


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
