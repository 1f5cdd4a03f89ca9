"""The secrets an ``OpenAIEmbedder`` is given, and how they are kept out of what it shows.

- ``endpoint(base_url)`` splits a base URL into the embeddings URL the request is sent to (the raw one, its query
  after ``/embeddings``) and the URL as shown, which names the model in ``model_id`` and appears in ``repr`` and
  every message: no user or password (``http://gw:pw@host`` shows as ``http://host``), every query value masked
  (``?api-key=***``), and a path segment that holds a secret masked (``/key/***/v1``: a token of a known shape, a
  generated-looking run, or whatever follows a ``key``/``token``-named segment). Credentials are not part of a
  model's identity: two deployments of one endpoint and model with different credentials share a ``model_id``.
- ``Secrets`` redacts the key and the URL's credentials from what an endpoint echoes: literal, JSON-escaped or
  URL-encoded; ``echoes`` says whether a text still holds KEY_RUN characters of one in a row (read as it is, JSON-
  and URL-decoded, and with its base64 runs decoded).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import urllib.parse
from collections.abc import Iterable
from typing import NamedTuple

from afteraction.core.redact import is_secret_name, redact_url, scrub_text
from afteraction.core.redact_forms import looks_generated

__all__ = ["KEY_RUN", "Endpoint", "Secrets", "endpoint", "shown"]

#: Characters of a secret in a row that, still found in a text after redaction, mean the text echoed it.
KEY_RUN = 8
#: A credential of the URL shorter than this is not looked for in what an endpoint echoes (it would mask words).
URL_SECRET_MIN = 4
MASK = "***"
_KEY_NAMES = frozenset({"key", "keys"})  # not secret names in free text ("the key point"), but in a URL path
_JSON_ESCAPE = re.compile(r'\\(u[0-9a-fA-F]{4}|["\\/bfnrt])')
_JSON_SIMPLE = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{12,}={0,2}")


class Endpoint(NamedTuple):
    """A base URL read: ``url`` to send to, ``shown_base`` and ``shown_url`` to show, ``secrets`` they hide."""

    url: str
    shown_base: str
    shown_url: str
    secrets: tuple[str, ...]


def shown(value: object) -> str:
    """``value`` (a base URL that could not be read as one) fit for an error message."""
    return scrub_text(redact_url(value)) if isinstance(value, str) else repr(value)


def _hides(part: str, after: str) -> bool:
    """Whether a path segment or query value ``part`` (``after`` the segment or name before it) holds a secret."""
    plain = urllib.parse.unquote(part)
    if not plain:
        return False
    named = urllib.parse.unquote(after).lower()
    return is_secret_name(named) or named in _KEY_NAMES or looks_generated(plain) or scrub_text(plain) != plain


def _path(path: str) -> tuple[str, list[str]]:
    """``path`` with each segment that holds a secret masked, and those segments."""
    segments = path.split("/")
    hidden = [segment for before, segment in zip(["", *segments], segments, strict=False) if _hides(segment, before)]
    return "/".join(MASK if segment in hidden else segment for segment in segments), hidden


def _query(query: str) -> tuple[str, list[str]]:
    """``query`` with every value masked (a piece with no ``=`` is a value), and the values that hold a secret."""
    pieces, secrets = [], []
    for piece in query.split("&") if query else []:
        name, equals, value = piece.partition("=")
        if not equals:
            name, value = "", name
        secrets += [value] if _hides(value, name) else []
        if _hides(name, ""):
            secrets.append(name)
            name = MASK
        pieces.append(f"{name}={MASK}" if name else MASK)
    return "&".join(pieces), secrets


def endpoint(base_url: str) -> Endpoint:
    """``base_url`` read (module docstring); ``ValueError`` when it is not a URL (an unclosed ``[`` host)."""
    parts = urllib.parse.urlsplit(base_url)
    userinfo, at, host = parts.netloc.rpartition("@")
    path = parts.path.rstrip("/")
    url = urllib.parse.urlunsplit((parts.scheme, parts.netloc, f"{path}/embeddings", parts.query, ""))
    shown_path, in_path = _path(path)
    shown_query, in_query = _query(parts.query)
    shown_base = urllib.parse.urlunsplit((parts.scheme, host, shown_path, shown_query, ""))
    shown_url = urllib.parse.urlunsplit((parts.scheme, host, f"{shown_path}/embeddings", shown_query, ""))
    found = [*userinfo.partition(":")[::2], *in_path, *in_query] if at else [*in_path, *in_query]
    secrets = {form for secret in found for form in (secret, urllib.parse.unquote(secret))}
    return Endpoint(url, shown_base, shown_url, tuple(sorted(s for s in secrets if len(s) >= URL_SECRET_MIN)))


def _json_unescape(text: str) -> str:
    """``text`` with JSON string escapes decoded (``\\/``, ``\\"``, ``\\uXXXX``…), wherever they are."""

    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code[0] == "u":
            return chr(int(code[1:], 16))
        return _JSON_SIMPLE.get(code, code)

    decoded = _JSON_ESCAPE.sub(one, text)
    return decoded.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _base64_runs(text: str) -> list[str]:
    """The runs of ``text`` that read as base64 or base64url, decoded (a proxy echoing ``Basic``
    credentials, or the key itself, encoded: the key shows in the bytes however it was aligned)."""
    found = []
    for run in _BASE64_RUN.findall(text):
        padded = run.rstrip("=") + "=" * (-len(run.rstrip("=")) % 4)
        for decode in (base64.b64decode, base64.urlsafe_b64decode):
            try:
                found.append(decode(padded).decode("latin-1"))
            except (ValueError, binascii.Error):
                continue
    return found


def _forms(secret: str) -> set[str]:
    """The ways an endpoint may echo ``secret``: literal, JSON-escaped, URL-encoded."""
    escaped = json.dumps(secret)[1:-1]
    return {
        secret,
        escaped,
        escaped.replace("/", "\\/"),
        json.dumps(secret, ensure_ascii=False)[1:-1],
        "".join(f"\\u{ord(char):04x}" for char in secret),
        urllib.parse.quote(secret, safe=""),
        urllib.parse.quote(secret),
        urllib.parse.quote_plus(secret),
        urllib.parse.quote(secret, safe="").lower(),
    }


class Secrets:
    """Secrets (an API key, a URL's credentials) to keep out of the messages made of what an endpoint sends."""

    def __init__(self, secrets: Iterable[str]) -> None:
        kept = [secret for secret in secrets if secret]
        self._forms = sorted({form for secret in kept for form in _forms(secret)}, key=len, reverse=True)
        self._runs = {
            secret[i : i + min(KEY_RUN, len(secret))]
            for secret in kept
            for i in range(len(secret) - min(KEY_RUN, len(secret)) + 1)
        }

    def redact(self, text: str) -> str:
        """``text`` with each secret replaced by ``***`` in every form an endpoint may echo it, longest first."""
        for form in self._forms:
            text = text.replace(form, MASK)
        return text

    def echoes(self, text: str) -> bool:
        """Whether ``text`` (decoded as JSON and as a URL too) holds KEY_RUN characters of a secret in a row."""
        if not self._runs:
            return False
        unescaped = _json_unescape(text)
        variants = {text, unescaped, urllib.parse.unquote_plus(text), urllib.parse.unquote_plus(unescaped)}
        variants |= {decoded for variant in list(variants) for decoded in _base64_runs(variant)}
        return any(part in variant for variant in variants for part in self._runs)
