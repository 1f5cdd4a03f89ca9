"""Secrets known by their own shape: provider credentials (``sk-…``, ``ghp_…``, ``AKIA…``, ``gsk_…``, webhook
URLs, afteraction's own ``afa_…`` keys, …), HTTP ``Bearer``/``Basic`` credentials, and card numbers (a brand's prefix
and length, and the Luhn check).

``core.redact`` runs these scans after its cheap checks; ``replace_hits`` is the scan loop it shares with them. The
shapes themselves are in ``core.redact_shapes``; ``token_hits`` reads each candidate's body once per run
(``core.redact_runs``), so that the scan costs time in proportion to the text.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from itertools import accumulate

from afteraction.core.redact_runs import TokenRuns
from afteraction.core.redact_shapes import OTHER_HEADS, TOKEN_PREFIXES, TOKENS
from afteraction.core.secret_names import name_words

__all__ = [
    "CARD_SEPARATORS",
    "TOKENS",
    "Hit",
    "apply_hits",
    "redaction",
    "replace_hits",
    "scrub_cards",
    "token_hit",
    "token_hits",
]


def redaction(kind: str) -> str:
    """The marker that replaces a secret of ``kind`` found in text."""
    return f"[REDACTED:{kind}]"


Hit = tuple[int, int, str]  # replace text[start:end] with the string

_KEY_ID_CHARS = len("afa_0123456789abcdef_")  # what an afteraction API key keeps of itself: ``afa_<id>_``
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")


def _looks_like_credential(token: str) -> bool:
    """A bearer token: long, and mixing letters with digits, or base64/hex-ish."""
    if len(token) < 16:
        return False
    letters = any(c.isalpha() for c in token)
    if letters and any(c.isdigit() for c in token):
        return True
    if letters and any(c in "+/=._~" for c in token):
        return True
    return len(token) >= 24 and any(c.isupper() for c in token) and any(c.islower() for c in token)


def _is_basic_credential(token: str) -> bool:
    """``Basic <b64>`` only when it decodes to ``user:password``."""
    try:
        decoded = base64.b64decode(token, validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded


def _token_start(text: str, at: int, prefixes: tuple[str, ...]) -> int | None:
    """Where the token whose anchor is at ``at`` begins: one of ``prefixes`` before it, starting a word."""
    for prefix in prefixes:
        start = at - len(prefix)
        if start >= 0 and text.startswith(prefix, start) and not (start and text[start - 1].isalnum()):
            return start
    return None  # ``mask-...``, ``task_...``


def token_hit(text: str, match: re.Match[str], scan: TokenRuns | None = None) -> Hit | None:
    """The span to replace for a ``TOKENS`` candidate, or None when it is not a credential after all; ``scan`` keeps
    what earlier candidates of the same text read (``token_hits``)."""
    scan = TokenRuns(text) if scan is None else scan
    start, end = match.span()
    found = match.group(0)
    anchor = found[0]
    if anchor == "/":  # a webhook URL: its host and kind are kept, its ids and secret go
        keep = found.index("/", 1) + 1
        return start + keep, end, redaction("api_key")
    if anchor == ":":  # a Telegram bot token: the bot's number, then its secret
        while start and text[start - 1].isdigit():
            start -= 1
        if match.start() - start > 10:
            return None
        if text.endswith("bot", 0, start):  # ``api.telegram.org/bot<token>/…``
            return start, end, redaction("api_key")
    elif (prefixes := TOKEN_PREFIXES.get(anchor)) is not None:  # the match starts inside the token
        found_start = _token_start(text, start, prefixes)
        if found_start is None:
            return None
        start = found_start
    if start and text[start - 1] in _WORD_CHARS:
        return None  # inside a longer word: ``xAKIA...``
    if anchor in "Bb":
        cred = found.split(None, 1)[1]
        if found[:4].lower() == "bear":
            kind, secret = "bearer", _looks_like_credential(cred)
        else:
            kind, secret = "basic_auth", _is_basic_credential(cred)
        return (end - len(cred), end, redaction(kind)) if secret else None
    if anchor == "J":
        jwt_end = scan.jwt_end(end)
        return None if jwt_end is None else (start, jwt_end, redaction("jwt"))
    if anchor == "L":  # base64 of a PEM block: a private key's only (a certificate is public)
        end = scan.base64_end(end)
        quads = (min(end, start + 64) - start) // 4 * 4  # whole quads: 61 to 63 characters raised "Incorrect padding"
        head = base64.b64decode(text[start : start + quads], validate=False)
        return (start, end, redaction("private_key")) if b"PRIVATE KEY" in head else None
    if anchor == "A" and found[1] in "KSBC":
        return start, end, redaction("aws_key")
    if text.startswith("afa_", start):  # afteraction's API key: its id is no secret (``keys list`` shows it)
        return start + _KEY_ID_CHARS, end, redaction("api_key")
    if text.startswith("sk-", start):
        end = scan.body_end(end)
        if not scan.mixed(match.end(), end):
            scan.unmixed = end
            return None  # ``sk-learn-compatible-estimator``
    elif found.startswith("SK"):
        body = found[1:]
        if not (any(c.isdigit() for c in body) and any(c.isalpha() for c in body)):
            return None
    return start, end, redaction("api_key")


def token_hits(text: str) -> list[Hit]:
    """The credentials ``TOKENS`` finds in ``text``, as spans to replace, as ``replace_hits`` finds them; but after a
    ``sk-`` candidate without digits or letters, the scan goes on at the next head of another token in its run (or
    at the run's end): a ``sk-`` further in it has none either (``sk-sk-sk-…`` cost 7 s a MiB, read one by one)."""
    scan = TokenRuns(text)
    hits: list[Hit] = []
    match = TOKENS.search(text)
    while match is not None:
        found = token_hit(text, match, scan)
        if found is not None:
            hits.append(found)
            match = TOKENS.search(text, max(found[1], match.start() + 1))
            continue
        at = match.start() + 1
        if scan.unmixed > at:
            head = OTHER_HEADS.search(text, at, scan.unmixed)
            at = scan.unmixed if head is None else head.start()
        match = TOKENS.search(text, at)
    return hits


def replace_hits(text: str, pattern: re.Pattern[str], hit: Callable[[str, re.Match[str]], Hit | None]) -> str:
    """Replace the spans ``hit`` returns for ``pattern``'s candidates; candidates inside a replaced span are skipped.

    A candidate ``hit`` rejects is searched again from its next character, so that a secret inside it is
    still found (``Basic AKIA…``: not a Basic credential, but an AWS key)."""
    return apply_hits(text, _hits(text, pattern, hit))


def _hits(text: str, pattern: re.Pattern[str], hit: Callable[[str, re.Match[str]], Hit | None]) -> list[Hit]:
    hits: list[Hit] = []
    match = pattern.search(text)
    while match is not None:
        found = hit(text, match)
        if found is None:
            match = pattern.search(text, match.start() + 1)
            continue
        hits.append(found)
        match = pattern.search(text, max(found[1], match.start() + 1))
    return hits


def apply_hits(text: str, hits: list[Hit]) -> str:
    """``text`` with each span of ``hits`` (in order, not overlapping) replaced; ``text`` itself when none."""
    parts: list[str] = []
    done = 0
    for start, end, replacement in hits:
        parts += (text[done:start], replacement)
        done = end
    return "".join(parts) + text[done:] if parts else text


# --- cards ---------------------------------------------------------------------------------------------------------

CARD_SEPARATORS = " -."
# A run of digit groups joined by single separators. A card is looked for inside a run, once: the run
# is read group by group, so the scan costs the same for every character however long the run (before, the card
# pattern was searched again from each group, and each candidate's sub-ranges joined and checked anew).
_RUN = re.compile(r"[0-9](?=[0-9 .-]{12})[0-9]*(?:[ .-][0-9]+)*")  # 13 characters at least
_DIGIT_GROUPS = re.compile("[0-9]+")
_SEPARATORS = re.compile("[ .-]")
# (first prefix, last prefix, lengths): the brands' number ranges (IIN) and the lengths they issue
_BRANDS = (
    ("4", "4", (13, 16, 19)),  # Visa
    ("51", "55", (16,)),  # Mastercard
    ("2221", "2720", (16,)),
    ("34", "34", (15,)),  # American Express
    ("37", "37", (15,)),
    ("300", "305", (14, 15, 16, 17, 18, 19)),  # Diners Club
    ("36", "36", (14, 15, 16, 17, 18, 19)),
    ("38", "39", (14, 15, 16, 17, 18, 19)),
    ("3528", "3589", (16, 17, 18, 19)),  # JCB
    ("6011", "6011", (16, 17, 18, 19)),  # Discover
    ("644", "649", (16, 17, 18, 19)),
    ("65", "65", (16, 17, 18, 19)),
    ("62", "62", (16, 17, 18, 19)),  # UnionPay
    ("2200", "2204", (16, 17, 18, 19)),  # Mir
    ("50", "50", (13, 14, 15, 16, 17, 18, 19)),  # Maestro
    ("56", "58", (13, 14, 15, 16, 17, 18, 19)),
    ("60", "60", (16,)),  # RuPay
    ("63", "63", (13, 14, 15, 16, 17, 18, 19)),  # Maestro (6304, 6390…)
    ("67", "67", (13, 14, 15, 16, 17, 18, 19)),
)
# a number named as an id (``trace_id=…``, ``"spanId": …``) is an id, whatever its digits
_NAMED_BEFORE = re.compile(r"([\w.-]{1,64})[\"']?[ \t]*[:=][ \t]*[\"']?\Z", re.ASCII)


_DOUBLED = str.maketrans("0123456789", "0246813579")  # a digit doubled, its two digits summed


def _luhn(digits: str) -> bool:
    doubled = digits[-2::-2].translate(_DOUBLED)
    return (sum(map(int, digits[-1::-2])) + sum(map(int, doubled))) % 10 == 0


def _is_card_number(digits: str) -> bool:
    size = len(digits)
    for low, high, sizes in _BRANDS:
        if size in sizes and low <= digits[: len(low)] <= high:
            return _luhn(digits)
    return False


def _candidate(sizes: list[int], seps: list[str], g: int) -> int:
    """The last group of the card-shaped candidate that starts at group ``g``, or -1: one group of 13 to 19 digits;
    4-4-4 or 4-4-4-4 (spaces or dashes) with 1 to 3 more digits after; 4-6-4 or 4-6-5; or 4.4.4.4 (dots, no more)."""
    size, last = sizes[g], len(sizes) - 1
    if 13 <= size <= 19:
        return g
    if size != 4 or g == last:
        return -1
    if seps[g + 1] == ".":
        if g + 3 <= last and seps[g + 2] == seps[g + 3] == "." and sizes[g + 1] == sizes[g + 2] == sizes[g + 3] == 4:
            return g + 3 if g + 3 == last or seps[g + 4] != "." else -1
        return -1
    if sizes[g + 1] == 6:
        ok = g + 2 <= last and seps[g + 2] != "." and sizes[g + 2] in (4, 5)
        return g + 2 if ok else -1
    end = g
    while end < g + 3 and end < last and seps[end + 1] != "." and sizes[end + 1] == 4:
        end += 1
    if end < g + 2:
        return -1
    if end < last and seps[end + 1] != "." and sizes[end + 1] <= 3:
        end += 1  # the 1 to 3 digits after
    return end


def _card_in(groups: list[str], sizes: list[int], g: int, end: int) -> tuple[int, int] | None:
    """The longest run of groups ``g``..``end`` that is a card number, leftmost first (a brand's prefix and length,
    Luhn): the groups (first, last)."""
    total = sum(sizes[g : end + 1])
    for i in range(g, end + 1):
        if total < 13:
            return None
        if groups[i][0] in "23456":  # no brand starts otherwise
            within = total
            for j in range(end, i - 1, -1):
                if within < 13:
                    break
                if within <= 19 and _is_card_number("".join(groups[i : j + 1])):
                    return i, j
                within -= sizes[j]
        total -= sizes[i]
    return None


_ID_WORDS = frozenset(("id", "ids", "number", "num", "no", "nr", "ref", "reference"))
_QUALIFIED = frozenset(("number", "num", "no", "nr"))
# ``Order #…``, ``order no. …``, a path segment after a collection (``/orders/…``), a key in SQL's ``Key (id)=(…)``
_ID_BEFORE = re.compile(r"(?:#[ \t]*|\b(?:no|nr)\.?[ \t]+|/(?:[a-z_-]{2,40})/|\(id\)=\()\Z", re.IGNORECASE)


def _named_id(text: str, start: int) -> bool:
    """Whether the number at ``start`` is named as an id (``trace_id=``, ``order_number:``, ``Order #``,
    ``/orders/``), not as a card: a name that holds ``card`` or ``pan`` never makes it one (``card_id: …``)."""
    named = _NAMED_BEFORE.search(text, max(0, start - 72), start)
    if named is not None:
        words = [word.lower() for word in name_words(named[1])]
        if not words or {"card", "cc", "pan"} & set(words):
            return False
        # ``number`` alone may be a card's own field (``{"number": …, "exp_month": …}``): an id needs its kind
        return words[-1] in _ID_WORDS and (len(words) > 1 or words[-1] not in _QUALIFIED)
    return _ID_BEFORE.search(text, max(0, start - 48), start) is not None and not _CARD_WORD.search(
        text, max(0, start - 48), start
    )


_CARD_WORD = re.compile(r"card|\bpan\b|\bcc\b", re.IGNORECASE)


def _run_hits(text: str, run: re.Match[str]) -> list[tuple[int, int]]:
    """The card numbers in one run of digit groups, as spans of ``text``. A candidate starts at a group that no dot
    comes before (``v1.4111…``, ``3.14159…`` are not cards); a number named as an id is not a card."""
    found = run.group(0)
    groups = _DIGIT_GROUPS.findall(found)
    seps = [text[run.start() - 1 : run.start()], *_SEPARATORS.findall(found)]  # the character before each group
    sizes = list(map(len, groups))
    starts = list(accumulate(map((1).__add__, sizes), initial=run.start()))  # where each group starts
    hits: list[tuple[int, int]] = []
    g = 0
    while g < len(groups):
        end = -1 if seps[g] == "." else _candidate(sizes, seps, g)
        card = None if end < 0 else _card_in(groups, sizes, g, end)
        if card is not None and not _named_id(text, starts[card[0]]):
            hits.append((starts[card[0]], starts[card[1]] + sizes[card[1]]))
            g = card[1] + 1
        else:
            g += 1
    return hits


def scrub_cards(text: str) -> str:
    """``text`` with each card number replaced by ``[REDACTED:card]``."""
    first = _RUN.search(text)
    if first is None:
        return text
    hits: list[Hit] = []
    for run in _RUN.finditer(text, first.start()):
        found = run.group(0)
        if len(found) - found.count(" ") - found.count("-") - found.count(".") < 13:  # fewer than 13 digits
            continue
        hits += ((start, end, redaction("card")) for start, end in _run_hits(text, run))
    return apply_hits(text, hits)
