"""Secrets: which field names hold them, and how to find them hiding in free text.

``is_secret_name`` (``core.secret_names``) decides by a field's name; ``scrub_text`` replaces each secret found in
free text with ``[REDACTED:<kind>]``. Both are precise rather than greedy: ordinary words ("max_tokens", "the
password reset flow works", "Bearer of bad news", "sk-learn") pass through untouched.

Kinds: ``api_key``, ``jwt``, ``bearer``, ``basic_auth``, ``private_key``, ``url_credentials``, ``aws_key``,
``aws_secret``, ``azure_key``, ``card``, ``email``, ``secret_assignment``. Secrets known by their shape are in
``core.redact_tokens``, private keys (PEM, PuTTY, JWK) in ``core.redact_keys``, the forms other than ``name: value``
(command lines, SQL, XML, URLs, signed URLs and OAuth redirects) in ``core.redact_forms``; this module reads
``name: value`` and runs the scans.
"""

from __future__ import annotations

import re
from functools import lru_cache

from afteraction.core.lookalike import fold, may_hide, may_mix, visible
from afteraction.core.redact_forms import (
    form_hits,
    is_placeholder,
    is_url,
    looks_generated,
    may_hold_form,
    may_hold_signed,
    not_an_email,
    signed_hits,
    url_credentials,
)
from afteraction.core.redact_keys import scrub_keys
from afteraction.core.redact_prose import MESSAGE_GOES_ON, is_message, names_a_failure, opens_a_message
from afteraction.core.redact_runs import Runs, value_end
from afteraction.core.redact_said import may_say_a_secret, said_secrets
from afteraction.core.redact_tokens import (
    CARD_SEPARATORS,
    Hit,
    apply_hits,
    redaction,
    replace_hits,
    scrub_cards,
    token_hits,
)
from afteraction.core.secret_names import is_connection_name, is_secret_name, is_signature_name

__all__ = ["REDACTED", "is_secret_name", "redact_url", "redaction", "scrub_text"]

REDACTED = "[REDACTED]"


# --- secrets in text ----------------------------------------------------------------------------------------------
# Ordinary text must cost little, so each kind of secret has a cheap necessary condition checked first on the
# text's bytes (a 16-character token-like run, a 13-digit card shape, an ``@``, a secret name before a ``:``/``=``).
# Only then does its scan run; a scan's candidates are validated (a key needs digits, a card the Luhn check, a
# bearer token must look like a credential) before anything is replaced.

# a separator; not the ``:`` of a marker put in by an earlier pass (its name, ``REDACTED``, is no secret's)
_SEPARATOR = re.compile(r"(?<!\[REDACTED)[:=]")
# names before separators, read on the reversed text: ``"name": value`` reversed is ``eulav :"eman"``
_NAMES_REVERSED = re.compile(r"[:=>]=?[ \t]*(?:[\"']\\?)?([\w.-]{1,64})", re.ASCII)
_NAME_BEFORE = re.compile(r"[ \t]*(?P<q>[\"']\\?|)(?P<name>[\w.-]{1,64})(?![\w.-])", re.ASCII)
_VALUE = re.compile(
    r"""[ \t]*(?P<scheme>(?i:bearer|basic|token|digest)[ \t]+)?
    (?P<val>\[REDACTED[^\]\n]{0,40}\]
      |"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|\\"(?:[^"\\\n]|\\[^"\n])*\\"
      |(?:[^\s"'\\]+|"[^"\n]*"|'[^'\n]*')+  # unquoted: to the next space, quoted parts whole (``SecretStr('…')``)
      |(?:["']|\\")[^\n]*)  # a quote left open: the rest of the line""",
    re.VERBOSE,
)
# the spaces and scheme word before a value, and the first character of an unquoted one
_LEAD = re.compile(r"[ \t]*(?P<scheme>(?i:bearer|basic|token|digest)[ \t]+)?")
_PLAIN = re.compile(r"[^\s\"'\\]")
# more words of an unquoted value after ``name: `` or ``name = ``: a passphrase, up to the line's end or the next
# ``name=``/``name:``
_MORE_WORDS = re.compile(r"(?:[ \t]+(?![\w.-]+[:=])[^\s,;&\"'\\)\]}<>]+)+")
# nothing after ``name:`` on its line, or a YAML block indicator: the value is on the lines below
_BLOCK_START = re.compile(r"[ \t]*(?:[|>][+-]?[0-9]?[ \t]*)?(?:#[^\n]*)?\r?\n")
_CODE_LINE = re.compile(r"[ \t]*(?:if|elif|while|for|def|class|with|except|else|try|return|async|match|case)\b")
_BLANK = (" ", "\t")
# where an unquoted value ends: in a query string or a ``;``-separated connection string at ``&``, ``;`` or ``#``;
# after ``name: value`` in a line at the next space (a password may hold any of them); trailing ``,``/``;`` stay
_QUERY_END = re.compile(r"[&;#]")
_FORM_PIECES = re.compile(r"[^&]*(?:&[\w.\[\]-]+=[^&]*)+")
# the first line of a block below a name that makes it a mapping or a list of settings, not a value
_SETTINGS_LINE = re.compile(r"(?:[\w.-]{1,64}[ \t]*:(?:[ \t]|\r?\n|$)|-[ \t]+\S)")


# headers whose value runs to the end of the line: credentials, and webhook signatures (``Svix-Signature: v1,… v1,…``)
_HEADERS = frozenset(
    """authorization proxy-authorization cookie set-cookie x-hub-signature x-hub-signature-256 stripe-signature
    x-slack-signature x-twilio-signature x-shopify-hmac-sha256 svix-signature webhook-signature""".split()
)
_AZURE = frozenset(("accountkey", "sharedaccesskey", "sharedaccesssignature", "sig"))

_AWS_SECRET = re.compile(r"(?i:aws|secret)[^\n]{0,48}?(?<![A-Za-z0-9/+])(?P<key>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])")
_EMAIL = re.compile(
    r"(?<![\w.%+-])[\w.%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,24}(?![\w-])", re.ASCII
)

# byte shapes for the cheap checks: token characters -> "a" (every provider token has a run of 16); digits -> "0",
# card separators dropped (a card leaves a run of 13)
_RUN_SHAPE = bytes(ord("a") if chr(b).isascii() and (chr(b).isalnum() or chr(b) in "_-") else 32 for b in range(256))
_DIGIT_SHAPE = bytes(ord("0") if 48 <= b <= 57 else ord("x") for b in range(256))
_CARD_GAPS = CARD_SEPARATORS.encode()


@lru_cache(maxsize=8192)
def _secret_reversed(reversed_name: str) -> bool:
    name = reversed_name[::-1]
    return name.lower() in _AZURE or is_secret_name(name)


def _assignment(text: str, match: re.Match[str], reverse: str, runs: Runs) -> Hit | None:
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
    kind = "azure_key" if azure else "secret_assignment"
    if text[at] == ":" and (block := _BLOCK_START.match(text, after)) is not None:
        return _value_below(text, at - len(named.group(0)), block.end(), kind)
    name_at = at - len(named.group(0)) + len(named["q"])
    before = text[name_at - 1 : name_at]
    query = before in ("?", "&", ";")
    lead = _LEAD.match(text, after)
    if lead is not None and text.startswith("[", lead.end()):
        return None  # already redacted (or a list)
    if lead is not None and _PLAIN.match(text, lead.end()):
        # unquoted: read once per run for all the names in it, and in a query string only up to its ``&``, ``;`` or
        # ``#`` (read whole from each name, ``a=b&token=x&…`` cost the square of its length)
        start, end = lead.end(), value_end(runs, lead.end(), query)
        scheme, scheme_at = lead["scheme"], lead.start("scheme")
        cut_already = query
    else:
        value = _VALUE.match(text, after)
        if value is None or value["val"].startswith("["):
            return None  # nothing there, or already redacted
        start, end = value.span("val")
        scheme, scheme_at = value["scheme"], value.start("scheme")
        cut_already = False
    quoted = text[start] in "\"'\\"
    if not quoted:
        # ``a=1&b=2``, no spaces, each piece after a ``&`` a ``name=`` (``pw=ab&3-cd x`` is one password)
        bare_query = (
            before == "" and text[at] == "=" and start == after and _FORM_PIECES.fullmatch(text, start, end) is not None
        )
        if ((query and not cut_already) or bare_query) and (cut := _QUERY_END.search(text, start, end)) is not None:
            end = cut.start()  # a query string
        end = runs.closed_end(start, end)  # ``password: x, user: y``, ``(token: missing)``
        if end == start:
            return None
        if is_connection_name(name) and is_url(text, start, end):
            return None  # ``DATABASE_URL=postgres://db:5432/x``: the URL's own password is scrubbed as a URL's
    found = text[start:end]
    scheme_word = (scheme or "").strip().lower()
    if (
        text[at] == ":"
        and not named["q"]
        and scheme_word not in ("bearer", "basic")
        and found.isascii()
        and found.isalpha()
        and (scheme_word or MESSAGE_GOES_ON.match(text, end))  # two words at least: a sentence
        and names_a_failure(name)
    ):
        return None  # an error and its message (``ExpiredToken: request signature expired``), not a credential
    if not azure and is_signature_name(name) and not looks_generated(found):
        return None  # a webhook's signature header before a word: ``no Stripe-Signature: header``, ``…: {sig}``
    if not azure:
        kind = {"bearer": "bearer", "basic": "basic_auth"}.get(scheme_word, kind)
    if quoted:
        quote = 2 if found[0] == "\\" else 1
        if len(found) <= 2 * quote or is_placeholder(text, start + quote, end - quote):
            return None  # an empty value hides nothing; ``"none"``, ``"${TOKEN}"`` are no secret
        if found.endswith(found[:quote]):
            return start + quote, end - quote, redaction(kind)
        return start + quote, end, redaction(kind)  # an open quote: to the end of the line
    if is_placeholder(text, start, end):
        return None  # ``token: missing``, ``api_key=${OPENAI_API_KEY}``, ``Bearer $TOKEN``, ``get_token(scope)``
    spaced = text[after : after + 1] in _BLANK
    if not named["q"] and spaced and not scheme_word and opens_a_message(found) and MESSAGE_GOES_ON.match(text, end):
        return None  # a message about the field: ``password: must be 8 characters``
    if (
        text[at] == ":"
        and not named["q"]
        and spaced
        and scheme_word in ("", "token")
        and is_message(text, scheme_at if scheme_word else start)
    ):
        return None  # ``secret: db-credentials not found``, ``csrf: token mismatch``: a status, not the value
    if text[at] == ":" and not named["q"] and name.lower() in _HEADERS:
        opened = text[at - len(named.group(0)) - 1 : at - len(named.group(0))]  # a header quoted in a command
        if opened in ('"', "'", "`") and (close := text.find(opened, end)) >= 0 and "\n" not in text[end:close]:
            end = close
        else:
            line_end = text.find("\n", end)  # a header's value runs to the end of its line, and its folded lines
            end = len(text) if line_end < 0 else line_end
            end = _continued(text, at, end)
            if text[end - 1 : end] == "\r":
                end -= 1
    elif not named["q"] and spaced and (text[at] == ":" or text[at - 1 : at] in _BLANK):
        more = _MORE_WORDS.match(text, end)  # ``password: correct horse battery staple``, ``pw = two words``
        if more is not None:
            end = more.end()
    return start, end, redaction(kind)


def _indent(text: str, line: int) -> int:
    at = line
    while at < len(text) and text[at] in " \t":
        at += 1
    return at - line


def _continued(text: str, at: int, end: int) -> int:
    """``end`` (a line's end) moved past the lines below that are indented more than the line holding ``at``."""
    indent = _indent(text, text.rfind("\n", 0, at) + 1)
    here = end
    while text.startswith("\n", here):
        line_end = text.find("\n", here + 1)
        line_end = len(text) if line_end < 0 else line_end
        if text[here + 1 : line_end].strip():  # a blank line may come between
            if _indent(text, here + 1) <= indent:
                break
            end = line_end
        here = line_end
    return end


def _value_below(text: str, name_start: int, below: int, kind: str) -> Hit | None:
    """A secret's value on the lines below its name (``api_key:\n  AbCd…``, ``password: |\n  …``): the lines
    indented more than the name's, or a lone word on the next line (``password:\nHunter2``)."""
    line = text.rfind("\n", 0, name_start) + 1
    if _CODE_LINE.match(text, line):
        return None  # ``if token:``, ``class Token:``: code, its body below
    start = below + _indent(text, below)
    if _SETTINGS_LINE.match(text, start):
        return None  # ``password:\n  min_length: 12``, ``secrets:\n  - db_password``: settings; each line is read alone
    end = _continued(text, name_start, below - 1)
    if end <= start:  # nothing indented below: one word alone on the next line, if any
        line_end = text.find("\n", below)
        end = len(text) if line_end < 0 else line_end
        word = text[start:end].rstrip("\r")
        if not word or any(c.isspace() or c in ":=" for c in word) or text[below : below + 1] in _BLANK:
            return None
        end = start + len(word)
    while end > start and text[end - 1] == "\r":
        end -= 1
    if text.startswith("[REDACTED", start) or is_placeholder(text, start, end):
        return None
    return start, end, redaction(kind)


def _aws_secret(match: re.Match[str]) -> str:
    key = match["key"]
    if not (any(c.isdigit() or c in "/+" for c in key) and any(c.isupper() for c in key) and key.lower() != key):
        return match.group(0)
    return match.group(0)[: match.start("key") - match.start()] + redaction("aws_secret")


def _may_hold_secret(text: str) -> bool:
    """A quick necessary condition for ``_scrub`` to replace anything: one of its cheap conditions holds (a
    separator, which a PuTTY key file, a JWK and a query value all hold; an ``@``, a scheme or provider word, a
    token-like run, a 13-digit shape, a form's keyword). Plain substring tests first, the byte shapes only for text
    long enough to hold them. (One compiled regex over the same conditions measured slower than this on ordinary
    text: the alternation defeats the engine's literal scan.)"""
    if "=" in text or ":" in text or "@" in text or "PRIVATE KEY" in text:
        return True
    lower = text.lower()  # a superset of the ASCII-only lowering _scrub checks
    if "earer" in lower or "asic" in lower or "secret" in lower or "aws" in lower or may_hold_form(text, lower):
        return True
    if may_say_a_secret(lower):
        return True
    if len(text) < 13:
        return False
    data = text.encode("utf-8", "surrogatepass")
    return b"a" * 16 in data.translate(_RUN_SHAPE) or b"0" * 13 in data.translate(_DIGIT_SHAPE, _CARD_GAPS)


_SURROGATE = re.compile("[\ud800-\udfff]")
_PERCENT = re.compile("%(?:3[AaDd]|40)")
_ENCODED = re.compile("(?:%[0-9A-Fa-f]{2})+")


def scrub_text(text: str) -> str:
    """``text`` with every secret found in it replaced by ``[REDACTED:<kind>]``; ordinary words are untouched.

    A lone surrogate (text decoded with ``surrogateescape``: a file name, a process's output) becomes U+FFFD: it
    is not Unicode text, and no store can keep it; so does a NUL (PostgreSQL refuses it in text). Text is also
    read as a reader sees it (``lookalike.visible``: look-alikes folded, invisible characters gone), with its
    look-alike letters as ASCII (``lookalike.fold``: Cyrillic ``ѕk-…``), and percent-decoded when it holds an
    encoded ``:``, ``=`` or ``@`` (``?next=https%3A%2F%2F…%3Ftoken%3D…``): when a secret shows only in such a
    reading, the text is kept in that form, scrubbed; otherwise it is kept as it came."""
    found = _scrub_text(text)
    return found.replace("\x00", "\ufffd") if "\x00" in found else found  # no store keeps a NUL in text


def _decoded(match: re.Match[str]) -> str:
    return bytes.fromhex(match.group(0).replace("%", "")).decode("utf-8", "replace")


def _scrub_text(text: str) -> str:
    """``scrub_text`` before a NUL is replaced."""
    if not text.isascii() and _SURROGATE.search(text):
        text = _SURROGATE.sub("\ufffd", text)
    if len(text) < 20 and text.replace("_", "").isalpha() and text.isascii():
        return text  # a short word: no secret fits in it
    scrubbed = _scrub_checked(text) if text.isascii() else _scrub_readings(text)
    if "%" in text and _PERCENT.search(text):
        decoded = _ENCODED.sub(_decoded, text)
        if _more(found := _scrub_readings(decoded), scrubbed):
            return found  # a secret shows only once decoded: kept decoded, scrubbed
    return scrubbed


def _more(found: str, than: str) -> bool:
    return found.count("[REDACTED") > than.count("[REDACTED")


def _scrub_readings(text: str) -> str:
    """``text`` scrubbed, or the reading of it (as seen, look-alikes folded) in which more secrets show."""
    scrubbed = _scrub_checked(text)
    if text.isascii():
        return scrubbed
    seen = visible(text) if may_hide(text) else text
    if seen != text and (found := _scrub_checked(seen)) != seen:
        scrubbed = found  # a secret hid in the characters: kept as a reader sees it, scrubbed
        text = seen
    if not may_mix(seen):
        return scrubbed  # no look-alike stands inside an ASCII word
    folded = fold(seen)
    if folded != seen and _more(found := _scrub_checked(folded), scrubbed):
        return found  # a secret spelled with look-alike letters: kept in ASCII, scrubbed
    return scrubbed


def _scrub_checked(text: str) -> str:
    return _scrub(text) if _may_hold_secret(text) else text


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
    text = scrub_keys(text)  # PEM blocks, PuTTY key files, JWKs: each behind a literal of its own
    at_sign = b"@" in data
    if at_sign and b"://" in data:
        text = url_credentials(text)
    if b"a" * 16 in data.translate(_RUN_SHAPE) or b"earer" in lower or b"asic" in lower:
        text = apply_hits(text, token_hits(text))
    if may_hold_form(text, lower_text := text.lower()):
        text = apply_hits(text, form_hits(text, lower_text))
    if may_hold_signed(lower_text):
        text = apply_hits(text, signed_hits(text))
    if b":" in data or b"=" in data:
        reverse = text[::-1]
        if any(map(_secret_reversed, _NAMES_REVERSED.findall(reverse))):
            runs = Runs(text)
            text = replace_hits(text, _SEPARATOR, lambda t, m: _assignment(t, m, reverse, runs))
    if b"0" * 13 in data.translate(_DIGIT_SHAPE, _CARD_GAPS):
        text = scrub_cards(text)
    if b"secret" in lower or b"aws" in lower:
        text = _AWS_SECRET.sub(_aws_secret, text)
    if at_sign:
        text = _EMAIL.sub(lambda m: m.group(0) if not_an_email(m.string, m) else redaction("email"), text)
    if may_say_a_secret(lower_text):  # last: a secret of a known kind said so is named by its kind
        text = said_secrets(text)
    return text


_URL_PASSWORD = re.compile(r"(://[^:/@]*:)[^@/]*@")
_QUERY_VALUE = re.compile(r"([?&;])([^=&;#]+)=([^&;#]*)")


def redact_url(url: str) -> str:
    """A connection URL fit to show: the password after the user (``bob:***@``) and the value of every
    secret-named query option (``?password=***``) masked; the rest kept, so that it still says where."""
    url = _URL_PASSWORD.sub(r"\1***@", url)
    return _QUERY_VALUE.sub(lambda m: f"{m[1]}{m[2]}=***" if is_secret_name(m[2]) else m[0], url)
