"""A secret said in a sentence: ``my password is Tr0ub4dor3horse``, ``the pin was 4821``, ``api key is
x7Qp…``. A person writes a credential into a request as they would say it, with no ``:`` or ``=`` for
``core.redact`` to read as an assignment.

After a password's name (``password``, ``passphrase``, ``passcode``, ``passwd``; not ``pwd``, a shell's
working directory) and ``is`` or ``was``, the next word (or what stands in quotes) is the password, unless it
is one of the words a sentence about a password goes on with (``required``, ``none``, ``the``, ``not``, …, or
a lower-case word in ``-ed`` or ``-ing``: ``was specified``), a path, or a length (``8-64 characters``): when
in doubt, secrets win. After ``pin`` only 4 to 6 digits are (``the version pin is 1.2.3`` is no secret).
After a token's or key's name (``token``, ``api key``, ``secret``, ``access key``) the word is redacted only
when it looks generated (letters and digits mixed, eight characters at least): such a name is said of many
things in prose (``the token is refreshed``) and a token is rarely an ordinary word.
"""

from __future__ import annotations

import re

from afteraction.core.redact_tokens import redaction

__all__ = ["may_say_a_secret", "said_secrets"]

_SAID = re.compile(
    r"\b(?:(?P<password>pass(?:word|phrase|code|wd))|(?P<pin>pin(?:[ \t]+code)?)"
    r"|(?P<token>(?:api|access|secret|auth)[ \t_-]?(?:key|token)|token|secret))"
    r"[ \t]+(?:is|was)[ \t]+(?:(?P<quote>[\"'`])(?P<quoted>[^\"'`\n]{1,200})(?P=quote)|(?P<value>[^\s\"'`]+))",
    re.IGNORECASE,
)
_BLANK_IS = re.compile(r"\s(?:is|was)\s")
# words a sentence about a password goes on with: a message, not the password
_GOES_ON = frozenset(
    """required missing expired invalid incorrect wrong correct valid empty blank set stored saved sent reset changed
    updated rotated revoked generated needed used given shown hidden masked encrypted hashed protected known unknown
    locked unlocked disabled enabled active inactive too not no now still being been the a an in on at of for to from
    same different weak strong short long case sensitive ok fine good bad old new my your our their his her its this
    that what which here there also only just never always please none null nil optional mandatory
    case-sensitive""".split()
)
# what follows a length, not a password: ``Password is 8-64 characters long``
_LENGTH = re.compile(r"[ \t]+(?:characters|chars|digits|letters|symbols|bytes)\b", re.IGNORECASE)
# a lower-case participle goes on with a sentence (``was specified``, ``is pending``), not a password
_PARTICIPLE = re.compile(r"[a-z]{3,}(?:ed|ing)")
_GENERATED = re.compile(r"(?=[^\s]*[A-Za-z])(?=[^\s]*\d)[^\s]{8,}")
_TRAILING = ".,;:!?)]}"


def may_say_a_secret(lower: str) -> bool:
    """A quick necessary condition on lower-cased text for ``said_secrets`` to replace anything."""
    return any(word in lower for word in ("pass", "pin", "token", "key", "secret")) and bool(_BLANK_IS.search(lower))


def said_secrets(text: str) -> str:
    """``text`` with the secret said after a credential's name and ``is``/``was`` redacted (see the module)."""
    return _SAID.sub(_said, text)


def _said(match: re.Match[str]) -> str:
    name = "quoted" if match["quoted"] is not None else "value"
    value = match[name] if name == "quoted" else match[name].rstrip(_TRAILING)
    if not value or value.startswith(("[REDACTED", "$", "{", "<", "%", "/", "~")):
        return match.group(0)  # already redacted, a placeholder (``password is ${DB_PASSWORD}``), a path
    if _LENGTH.match(match.string, match.end()):
        return match.group(0)  # ``Password is 8-64 characters long``
    if match["password"] is not None:
        if name == "value" and (value.lower() in _GOES_ON or _PARTICIPLE.fullmatch(value)):
            return match.group(0)  # ``Incorrect username or password was specified``
    elif match["pin"] is not None:
        if not (value.isdigit() and 4 <= len(value) <= 6):
            return match.group(0)  # ``the version pin is 1.2.3`` (or a date): a PIN is 4 to 6 digits
    elif not _GENERATED.fullmatch(value):
        return match.group(0)
    start = match.start(name) - match.start()
    kind = "secret_said" if match["token"] is not None else "password"
    return match.group(0)[:start] + redaction(kind) + match.group(0)[start + len(value) :]
