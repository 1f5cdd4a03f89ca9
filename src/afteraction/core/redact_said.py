"""A secret said in a sentence: ``my password is Tr0ub4dor3horse``, ``the pin was 4821``, ``api key is
x7Qp…``. A person writes a credential into a request as they would say it, with no ``:`` or ``=`` for
``core.redact`` to read as an assignment.

After a password's name (``password``, ``passphrase``, ``passcode``, ``passwd``, ``pwd``) and ``is`` or
``was``, the next word is the password unless it is one of the words a sentence about a password goes on with
(``required``, ``the``, ``not``, …, or any lower-case word in ``-ed`` or ``-ing``: ``was specified``): when in
doubt, secrets win. After ``pin`` only digits are (``the
version pin is 1.2.3`` is no secret). After a token's or key's
name (``token``, ``api key``, ``secret``, ``access key``) the word is redacted only when it looks generated
(letters and digits mixed, eight characters at least): such a name is said of many things in prose (``the
token is refreshed``) and a token is rarely an ordinary word.
"""

from __future__ import annotations

import re

from afteraction.core.redact_tokens import redaction

__all__ = ["may_say_a_secret", "said_secrets"]

_SAID = re.compile(
    r"\b(?:(?P<password>pass(?:word|phrase|code|wd)|pwd)|(?P<pin>pin(?:[ \t]+code)?)"
    r"|(?P<token>(?:api|access|secret|auth)[ \t_-]?(?:key|token)|token|secret))"
    r"[ \t]+(?:is|was)[ \t]+(?P<value>[^\s\"'`]+)",
    re.IGNORECASE,
)
# words a sentence about a password goes on with: a message, not the password
_GOES_ON = frozenset(
    """required missing expired invalid incorrect wrong correct valid empty blank set stored saved sent reset changed
    updated rotated revoked generated needed used given shown hidden masked encrypted hashed protected known unknown
    locked unlocked disabled enabled active inactive too not no now still being been the a an in on at of for to from
    same different weak strong short long case sensitive ok fine good bad old new my your our their his her its this
    that what which here there also only just never always please""".split()
)
# a lower-case participle goes on with a sentence (``was specified``, ``is pending``), not a password
_PARTICIPLE = re.compile(r"[a-z]{3,}(?:ed|ing)")
_GENERATED = re.compile(r"(?=[^\s]*[A-Za-z])(?=[^\s]*\d)[^\s]{8,}")
_TRAILING = ".,;:!?)]}"


def may_say_a_secret(lower: str) -> bool:
    """A quick necessary condition on lower-cased text for ``said_secrets`` to replace anything."""
    return (" is " in lower or " was " in lower) and any(
        word in lower for word in ("pass", "pwd", "pin", "token", "key", "secret")
    )


def said_secrets(text: str) -> str:
    """``text`` with the secret said after a credential's name and ``is``/``was`` redacted (see the module)."""
    return _SAID.sub(_said, text)


def _said(match: re.Match[str]) -> str:
    value = match["value"].rstrip(_TRAILING)
    if not value or value.startswith(("[REDACTED", "$", "{", "<", "%")):
        return match.group(0)  # already redacted, or a placeholder: ``password is ${DB_PASSWORD}``
    if match["password"] is not None:
        if value.lower() in _GOES_ON or _PARTICIPLE.fullmatch(value):
            return match.group(0)  # ``Incorrect username or password was specified``
    elif match["pin"] is not None:
        if not (value.isdigit() and 4 <= len(value) <= 12):
            return match.group(0)  # ``the version pin is 1.2.3``: a PIN is digits
    elif not _GENERATED.fullmatch(value):
        return match.group(0)
    start = match.start("value") - match.start()
    kind = "secret_said" if match["token"] is not None else "password"
    rest = match["value"][len(value) :]
    return match.group(0)[:start] + redaction(kind) + rest
