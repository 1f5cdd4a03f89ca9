"""Secrets: which field names hold them, and how to find them hiding in free text.

``is_secret_name`` (``core.secret_names``) decides by a field's name; ``scrub_text`` replaces each secret found in
free text with ``[REDACTED:<kind>]``. Both are precise rather than greedy: ordinary words ("max_tokens", "the
password reset flow works", "Bearer of bad news", "sk-learn") pass through untouched.

Kinds: ``api_key``, ``jwt``, ``bearer``, ``basic_auth``, ``private_key``, ``url_credentials``, ``aws_key``,
``aws_secret``, ``azure_key``, ``card``, ``email``, ``secret_assignment``.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from functools import lru_cache

from afteraction.core.lookalike import may_hide, visible
from afteraction.core.secret_names import is_secret_name, name_words

__all__ = ["REDACTED", "is_secret_name", "redact_url", "redaction", "scrub_text"]

REDACTED = "[REDACTED]"


def redaction(kind: str) -> str:
    """The marker that replaces a secret of ``kind`` found in text."""
    return f"[REDACTED:{kind}]"


# --- secrets in text ----------------------------------------------------------------------------------------------
# Ordinary text must cost little, so each kind of secret has a cheap necessary condition checked first on the
# text's bytes (a 16-character token-like run, a 13-digit card shape, an ``@``, a secret name before a ``:``/``=``).
# Only then does its scan run; a scan's candidates are validated (a key needs digits, a card the Luhn check, a
# bearer token must look like a credential) before anything is replaced.

_TOKENS = re.compile(
    # each alternative starts with a literal, mostly a rare one (the ``-`` of ``sk-``, the ``J`` of ``eyJ``), so the
    # engine skips in C to the next possible start; ``_token`` finds where the token really begins
    "|".join(
        (
            r"-(?<=sk-)[A-Za-z0-9_-]{20,}",  # OpenAI (sk-, sk-proj-, ...), Anthropic (sk-ant-)
            r"-(?<=glpat-)[A-Za-z0-9_-]{20,}",  # GitLab
            r"-(?<=xox[abposre]-)[A-Za-z0-9-]{11,}",  # Slack
            r"_(?<=[sr]k_)(?:live|test)_[0-9A-Za-z]{16,}",  # Stripe
            r"_(?<=gh[pousr]_)[A-Za-z0-9]{30,}",  # GitHub
            r"_(?<=github_)pat_[A-Za-z0-9_]{30,}",
            r"_(?<=hf_)[A-Za-z0-9]{30,}",  # Hugging Face
            r"_(?<=npm_)[A-Za-z0-9]{36}",  # npm
            r"A(?:Iza[0-9A-Za-z_-]{35}|(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}(?![A-Za-z0-9]))",  # Google; AWS access key id
            r"SG\.[A-Za-z0-9_-]{16,128}\.[A-Za-z0-9_-]{16,}",  # SendGrid
            r"J(?<=eyJ)[A-Za-z0-9_-]{13,2048}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*",  # JWT (its header holds "alg")
            r"B(?:earer|EARER|asic|ASIC)[ \t]+[A-Za-z0-9._~+/=-]{8,}",  # HTTP auth schemes in text
            r"b(?:earer|asic)[ \t]+[A-Za-z0-9._~+/=-]{8,}",
        )
    )
)
_TOKEN_PREFIXES = {
    "-": frozenset(("sk", "glpat", *(f"xox{c}" for c in "abposre"))),
    "_": frozenset(("sk", "rk", "github", "hf", "npm", *(f"gh{c}" for c in "pousr"))),
    "J": frozenset(("ey",)),
}
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")

_CARD = re.compile(
    r"[0-9](?<![0-9.][0-9])"  # not inside a longer number
    r"(?:[0-9]{12,18}|[0-9]{3}(?:[ -][0-9]{4}){2,3}(?:[ -][0-9]{1,3})?|[0-9]{3}[ -][0-9]{6}[ -][0-9]{4,5})(?![0-9])"
)

_DIGITS = re.compile("[0-9]+")

_SEPARATOR = re.compile("[:=]")
# names before separators, read on the reversed text: ``"name": value`` reversed is ``eulav :"eman"``
_NAMES_REVERSED = re.compile(r"[:=>]=?[ \t]*(?:[\"']\\?)?([\w.-]{1,64})", re.ASCII)
_NAME_BEFORE = re.compile(r"[ \t]*(?P<q>[\"']\\?|)(?P<name>[\w.-]{1,64})(?![\w.-])", re.ASCII)
_VALUE = re.compile(
    r"""[ \t]*(?P<scheme>(?i:bearer|basic|token|digest)[ \t]+)?
    (?P<val>\[REDACTED[^\]\n]{0,40}\]
      |"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|\\"(?:[^"\\\n]|\\[^"\n])*\\"
      |[^\s,;&"'\\)\]}<>]+
      |(?:["']|\\")[^\n]*)  # a quote left open: the rest of the line""",
    re.VERBOSE,
)
_HEADERS = frozenset(("authorization", "proxy-authorization", "cookie", "set-cookie"))
_AZURE = frozenset(("accountkey", "sharedaccesskey", "sharedaccesssignature", "sig"))

_PEM = re.compile(  # a block left open runs to the end of the text
    r"-----BEGIN [ A-Z0-9]{0,40}PRIVATE KEY[ A-Z]{0,20}-----[\s\S]*?"
    r"(?:-----END [ A-Z0-9]{0,40}PRIVATE KEY[ A-Z]{0,20}-----|\Z)"
)
# the scheme is kept and need not start a word: ``4111…postgres://u:p@h`` and a key glued before it still lose ``u:p``
_URL_CREDENTIALS = re.compile(r"([A-Za-z][A-Za-z0-9+.-]{0,30}://)[^\s/?#@:]*:[^\s/?#]*@")
_AWS_SECRET = re.compile(r"(?i:aws|secret)[^\n]{0,48}?(?<![A-Za-z0-9/+])(?P<key>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])")
_EMAIL = re.compile(
    r"(?<![\w.%+-])[\w.%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,24}(?![\w-])", re.ASCII
)

# byte shapes for the cheap checks: token characters -> "a" (every provider token has a run of 16); digits -> "0",
# card separators dropped (a card leaves a run of 13)
_RUN_SHAPE = bytes(ord("a") if chr(b).isascii() and (chr(b).isalnum() or chr(b) in "_-") else 32 for b in range(256))
_DIGIT_SHAPE = bytes(ord("0") if 48 <= b <= 57 else ord("x") for b in range(256))

_Hit = tuple[int, int, str]  # replace text[start:end] with the string


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


def _luhn(digits: str) -> bool:
    total = 0
    for i, char in enumerate(reversed(digits)):
        d = ord(char) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _token(text: str, match: re.Match[str]) -> _Hit | None:
    start, end = match.span()
    found = match.group(0)
    anchor = found[0]
    prefixes = _TOKEN_PREFIXES.get(anchor)
    if prefixes is not None:  # the match starts inside the token: find its letters before the anchor
        while start and text[start - 1].isalpha():
            start -= 1
        if text[start : match.start()] not in prefixes:
            return None  # ``mask-...``, ``task_...``
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
        return start, end, redaction("jwt")
    if anchor == "A" and found[1] != "I":
        return start, end, redaction("aws_key")
    if text.startswith("sk-", start):
        body = found[1:]
        if not (any(c.isdigit() for c in body) and any(c.isalpha() for c in body)):
            return None  # ``sk-learn-compatible-estimator``
    return start, end, redaction("api_key")


def _card_span(match: re.Match[str]) -> tuple[int, int] | None:
    """The longest run of the candidate's digit groups that is a card number (13-19 digits, 2-6, Luhn)."""
    found = match.group(0)
    groups = [group.span() for group in _DIGITS.finditer(found)]
    for i in range(len(groups)):
        for j in range(len(groups) - 1, i - 1, -1):
            digits = "".join(found[a:b] for a, b in groups[i : j + 1])
            if 13 <= len(digits) <= 19 and digits[0] in "23456" and _luhn(digits):
                return match.start() + groups[i][0], match.start() + groups[j][1]
    return None


def _cards(text: str) -> str:
    parts: list[str] = []
    done = 0
    match = _CARD.search(text)
    while match is not None:
        span = _card_span(match)
        if span is None:  # try again from the candidate's next digit group
            match = _CARD.search(text, match.start() + 1)
            continue
        parts += (text[done : span[0]], redaction("card"))
        done = span[1]
        match = _CARD.search(text, done)
    if not parts:
        return text
    parts.append(text[done:])
    return "".join(parts)


@lru_cache(maxsize=8192)
def _secret_reversed(reversed_name: str) -> bool:
    name = reversed_name[::-1]
    return name.lower() in _AZURE or is_secret_name(name)


# The first word of an error's name that says what is wrong with a credential (``ExpiredToken``, ``InvalidApiKey``,
# ``missing_password``): such a name followed by a plain word is an error and its message, not an assignment.
_FAILURES = frozenset(
    "expired invalid missing bad wrong revoked unknown malformed incorrect unrecognized rejected empty stale".split()
)


# after the first word of an error's message, more words: a sentence, not a one-word value
_MESSAGE_GOES_ON = re.compile(r" [A-Za-z]+(?:[ .,;]|$)")


def _names_a_failure(name: str) -> bool:
    words = name_words(name)
    return len(words) > 1 and words[0].lower() in _FAILURES


def _assignment(text: str, match: re.Match[str], reverse: str) -> _Hit | None:
    """``name: value`` or ``name=value`` at a separator: the value's span, if the name is secret."""
    at = match.start()
    if text[at] == "=" and (text.startswith("=", at + 1) or (at > 0 and text[at - 1] in "=!<>~")):
        return None  # a comparison or a version pin (``northwind-auth==1.4.2``, ``token >= 3``), not a value
    named = _NAME_BEFORE.match(reverse, len(text) - at)
    if named is None:
        return None
    name = named["name"][::-1]
    azure = name.lower() in _AZURE
    if not (azure or is_secret_name(name)):
        return None
    after = at + 1
    if text.startswith(">" if text[at] == "=" else "=", after):
        after += 1  # ``=>`` or ``:=``
    value = _VALUE.match(text, after)
    if value is None or value["val"].startswith("["):
        return None  # nothing there, or already redacted
    start, end = value.span("val")
    found = value["val"]
    scheme_word = (value["scheme"] or "").strip().lower()
    if (
        text[at] == ":"
        and not named["q"]
        and scheme_word not in ("bearer", "basic")
        and found.isascii()
        and found.isalpha()
        and (scheme_word or _MESSAGE_GOES_ON.match(text, end))  # two words at least: a sentence
        and _names_a_failure(name)
    ):
        return None  # an error and its message (``ExpiredToken: request signature expired``), not a credential
    scheme = (value["scheme"] or "").strip().lower()
    kind = "azure_key" if azure else {"bearer": "bearer", "basic": "basic_auth"}.get(scheme, "secret_assignment")
    if found[0] in "\"'\\":
        quote = 2 if found[0] == "\\" else 1
        if len(found) <= 2 * quote:
            return None  # an empty value hides nothing
        if found.endswith(found[:quote]):
            return start + quote, end - quote, redaction(kind)
        return start + quote, end, redaction(kind)  # an open quote: to the end of the line
    if text[at] == ":" and not named["q"] and name.lower() in _HEADERS:
        line_end = text.find("\n", end)  # a header's value runs to the end of its line
        end = len(text) if line_end < 0 else line_end
        if text[end - 1 : end] == "\r":
            end -= 1
    return start, end, redaction(kind)


def _replace(text: str, pattern: re.Pattern[str], hit: Callable[[str, re.Match[str]], _Hit | None]) -> str:
    """Replace the spans ``hit`` returns for ``pattern``'s candidates; candidates inside a replaced span are skipped.

    A candidate ``hit`` rejects is searched again from its next character, so that a secret inside it is
    still found (``Basic AKIA…``: not a Basic credential, but an AWS key)."""
    parts: list[str] = []
    done = 0
    match = pattern.search(text)
    while match is not None:
        found = hit(text, match)
        if found is None:
            match = pattern.search(text, match.start() + 1)
            continue
        start, end, replacement = found
        parts += (text[done:start], replacement)
        done = end
        match = pattern.search(text, max(end, match.start() + 1))
    if not parts:
        return text
    parts.append(text[done:])
    return "".join(parts)


def _aws_secret(match: re.Match[str]) -> str:
    key = match["key"]
    if not (any(c.isdigit() or c in "/+" for c in key) and any(c.isupper() for c in key) and key.lower() != key):
        return match.group(0)
    return match.group(0)[: match.start("key") - match.start()] + redaction("aws_secret")


def _may_hold_secret(text: str) -> bool:
    """A quick necessary condition for ``_scrub`` to replace anything: one of its cheap conditions holds (a
    separator, an ``@``, a scheme or provider word, a token-like run, a 13-digit shape). Plain substring tests
    first, the byte shapes only for text long enough to hold them. (One compiled regex over the same conditions
    measured slower than this on ordinary text: the alternation defeats the engine's literal scan.)"""
    if "=" in text or ":" in text or "@" in text or "PRIVATE KEY" in text:
        return True
    lower = text.lower()  # a superset of the ASCII-only lowering _scrub checks
    if "earer" in lower or "asic" in lower or "secret" in lower or "aws" in lower:
        return True
    if len(text) < 13:
        return False
    data = text.encode("utf-8", "surrogatepass")
    return b"a" * 16 in data.translate(_RUN_SHAPE) or b"0" * 13 in data.translate(_DIGIT_SHAPE, b" -")


_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub_text(text: str) -> str:
    """``text`` with every secret found in it replaced by ``[REDACTED:<kind>]``; ordinary words are untouched.

    A lone surrogate (text decoded with ``surrogateescape``: a file name, a process's output) becomes U+FFFD: it
    is not Unicode text, and no store can keep it; so does a NUL (PostgreSQL refuses it in text). Text is also
    read as a reader sees it (``lookalike.visible``: look-alikes folded, invisible characters gone): when a
    secret shows only there (``sk-\u200bproj-…``, fullwidth letters), the text is kept in that form, scrubbed;
    otherwise it is kept as it came."""
    found = _scrub_text(text)
    return found.replace("\x00", "\ufffd") if "\x00" in found else found  # no store keeps a NUL in text


def _scrub_text(text: str) -> str:
    """``scrub_text`` before a NUL is replaced."""
    if not text.isascii() and _SURROGATE.search(text):
        text = _SURROGATE.sub("\ufffd", text)
    if len(text) < 20 and text.replace("_", "").isalpha():
        return text  # a short word: no secret fits in it
    if may_hide(text):
        seen = visible(text)  # what the block shows: a zero-width space or fullwidth letters cannot hide a key
        if seen != text and _may_hold_secret(seen) and (scrubbed := _scrub(seen)) != seen:
            return scrubbed  # a secret hid in the characters: kept as a reader sees it, scrubbed
    if not _may_hold_secret(text):
        return text  # none of the conditions below holds
    return _scrub(text)


def _scrub(text: str) -> str:
    """``scrub_text`` without the pre-check, until nothing changes: a secret glued to another
    (``4111 1111 1111 1111ghp_…``, ``Basic dXNl…==AKIA…``) may show only once the first is replaced."""
    for _ in range(3):
        done = _scrub_once(text)
        if done == text:
            break
        text = done
    return text


def _scrub_once(text: str) -> str:
    """Each kind's cheap condition, then its scan."""
    data = text.encode("utf-8", "surrogatepass")
    lower = data.lower()
    if b"PRIVATE KEY" in data:
        text = _PEM.sub(redaction("private_key"), text)
    at_sign = b"@" in data
    if at_sign and b"://" in data:
        text = _URL_CREDENTIALS.sub(lambda m: m.group(1) + redaction("url_credentials") + "@", text)
    if b"a" * 16 in data.translate(_RUN_SHAPE) or b"earer" in lower or b"asic" in lower:
        text = _replace(text, _TOKENS, _token)
    if b":" in data or b"=" in data:
        reverse = text[::-1]
        if any(map(_secret_reversed, _NAMES_REVERSED.findall(reverse))):
            text = _replace(text, _SEPARATOR, lambda t, m: _assignment(t, m, reverse))
    if b"0" * 13 in data.translate(_DIGIT_SHAPE, b" -"):
        text = _cards(text)
    if b"secret" in lower or b"aws" in lower:
        text = _AWS_SECRET.sub(_aws_secret, text)
    if at_sign:
        text = _EMAIL.sub(redaction("email"), text)
    return text


_URL_PASSWORD = re.compile(r"(://[^:/@]*:)[^@/]*@")
_QUERY_VALUE = re.compile(r"([?&;])([^=&;#]+)=([^&;#]*)")


def redact_url(url: str) -> str:
    """A connection URL fit to show: the password after the user (``bob:***@``) and the value of every
    secret-named query option (``?password=***``) masked; the rest kept, so that it still says where."""
    url = _URL_PASSWORD.sub(r"\1***@", url)
    return _QUERY_VALUE.sub(lambda m: f"{m[1]}{m[2]}=***" if is_secret_name(m[2]) else m[0], url)
