"""libpq's messages fit to show: the password never in them, and what to do when it is known.

A connection that fails says why in libpq's words, which may quote the URL it was given (``missing
"=" after "…"``) or a token of it it could not decode (``invalid percent-encoded token: "…"``): the
password with it. Every message afteraction builds from one goes through ``explain``.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

import psycopg

from afteraction.core.redact import redact_url

__all__ = ["explain", "hide_password"]

#: Connection failures, by a fragment of libpq's message, and what to do about each.
_HINTS = (
    ("password authentication failed", "check the user name and password in the URL (or PGPASSWORD, ~/.pgpass)"),
    ("no password supplied", "the server asks for a password: put it in the URL (or PGPASSWORD, ~/.pgpass)"),
    (r'(database|role) ".*" does not exist', "check the name in the URL, or create it (CREATE DATABASE / ROLE)"),
    ("connection refused", "nothing listens there: check the host and port in the URL and that PostgreSQL runs"),
    ("no such file or directory", "no server socket there: check the host in the URL and that PostgreSQL runs"),
    ("could not translate host name", "the host name does not resolve: check the host in the URL"),
    ("timeout expired", "the server did not answer: check the host, the port and any firewall"),
    ("invalid (connection option|uri|integer value)", "the URL is malformed: postgresql://user:pass@host:port/db"),
    ("percent-encoded (token|value)", "a % in the URL starts a %XX escape: write a % in a name or password as %25"),
    ("unexpected spaces", "write a space in a name or password as %20"),
)


def explain(exc: psycopg.Error, url: str | None = None) -> str:
    """libpq's message about a failed connection or statement, with what to do when known; the
    password of ``url`` and any URL or undecodable token libpq quotes masked (``hide_password``)."""
    message = " ".join(hide_password(str(exc), url).split())
    if isinstance(exc, psycopg.OperationalError) or type(exc) is psycopg.ProgrammingError:
        for pattern, hint in _HINTS:
            if re.search(pattern, message, re.IGNORECASE):
                return f"{message} ({hint})"
    return message


_MASK = "***"  # as ``redact_url`` masks a password
#: A URL inside a message: libpq quotes a whole URL it could not read (``missing "=" after "…"``).
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*(?:\+[A-Za-z0-9_+.-]*)?://[^\s\"']*")
#: A token of a URL libpq could not percent-decode, which it quotes: it may be the password.
_UNDECODED = re.compile(r'(percent-encoded (?:token|value): )"[^"]*"')


def hide_password(text: str, url: str | None) -> str:
    """``text`` (a message that may quote libpq) fit to show: every URL in it redacted
    (``core.redact.redact_url``), the password of ``url`` (as written and percent-decoded) masked
    where a password stands in a URL (``:…@``, ``password=…``) and as a whole token elsewhere,
    and a token libpq could not percent-decode masked whatever it was. Never by plain substring:
    a password that is also the user's or the database's name, or a letter of a word, would take
    them out of the message with it."""
    if url and url in text:  # quoted whole (our own "store at …", libpq's "missing '=' after …"), whatever it holds
        return _masked(url).join(hide_password(part, url) for part in text.split(url))
    secrets = sorted(_passwords(url) if url else (), key=len, reverse=True)
    shown, last = [], 0
    for found in _URL_IN_TEXT.finditer(text):
        shown += [_tokens(text[last : found.start()], secrets), _in_url(found[0], secrets)]
        last = found.end()
    shown.append(_tokens(text[last:], secrets))
    return _tokens(_UNDECODED.sub(rf'\1"{_MASK}"', "".join(shown)), _pieces(secrets))


def _in_url(url: str, secrets: list[str]) -> str:
    """``url`` with ``secrets`` masked where a password stands, then redacted; masked as tokens
    only when one stands nowhere a password does (a URL libpq quotes cut short)."""
    hits = 0
    for secret in secrets:
        url, n = re.subn(rf"(:){re.escape(secret)}(@)", rf"\1{_MASK}\2", url)
        url, m = re.subn(rf"([?&]password=){re.escape(secret)}(?=[&#]|$)", rf"\1{_MASK}", url, flags=re.IGNORECASE)
        hits += n + m
    url = redact_url(url)
    return url if hits else _tokens(url, secrets)


def _masked(url: str) -> str:
    """``url`` with its password masked by position: what stands between the user's ``:`` and the
    last ``@`` before the query, whatever characters it holds (quotes, spaces, ``@``), and the value
    of a ``password=`` option up to the next ``&``; then redacted (``redact_url``)."""
    scheme, sep, rest = url.partition("://")
    head, query, options = rest.partition("?")
    userinfo, at, host = head.rpartition("@")
    user, colon, _ = userinfo.partition(":")
    if at and colon:
        head = f"{user}:{_MASK}@{host}"
    if query:
        parts = [option.partition("=") for option in options.split("&")]
        options = "&".join(
            f"{name}={_MASK}" if eq and _is_password(name) else f"{name}{eq}{value}" for name, eq, value in parts
        )
    return redact_url(f"{scheme}{sep}{head}{query}{options}")


def _pieces(secrets: list[str]) -> list[str]:
    """The parts of each password between characters that end a token in a URL or a message
    (quotes, spaces, ``@ / : ? & = #``), two characters or longer: libpq quotes such a part alone
    when it reads the URL differently (``failed to resolve host 'cretXy@…'`` for ``u:Zq7se@cretXy@…``)."""
    found = {piece for secret in secrets for piece in re.split(r"[\s\"'@/:?&=#]+", secret) if len(piece) >= 2}
    return sorted(found - set(secrets), key=len, reverse=True)


def _tokens(text: str, secrets: list[str]) -> str:
    """``secrets`` masked where each stands as a whole token (no letter or digit either side)."""
    for secret in secrets:
        text = re.sub(rf"(?<![A-Za-z0-9]){re.escape(secret)}(?![A-Za-z0-9])", _MASK, text)
    return text


def _passwords(url: str) -> set[str]:
    """The password of a PostgreSQL URL (after the user, or ``?password=``), as written and
    percent-decoded; read loosely, since a URL libpq refuses may still hold one."""
    rest = url.partition("://")[2]
    found = []
    for authority in {rest.partition("?")[0].rpartition("@")[0], rest.rpartition("@")[0]}:
        _, colon, password = authority.partition(":")
        if colon:
            found.append(password)
    for option in rest.partition("?")[2].split("&"):
        name, eq, value = option.partition("=")
        if eq and _is_password(name):
            found.append(value)
    return {form for raw in found if raw for form in (raw, unquote(raw))}


def _is_password(name: str) -> bool:
    """Whether a URL query option's name (as written) is libpq's ``password``."""
    return unquote(name).strip().lower() == "password"
