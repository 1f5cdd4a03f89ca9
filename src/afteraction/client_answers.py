"""How a remote memory reads the service's answers: the error each stands for, and the parts it must hold.

An error keeps its meaning across the wire (``raise_for``): the service's 400 is a ``ValidationError``
naming the same field, 401/403 ``AuthError``/``ForbiddenError``, 404 ``NotFoundError``, 409
``ConflictError``, 501 ``AppendOnlyError``; 429 and 5xx a ``StoreError``. What it quotes of the answer
was written by whatever sits at the URL (the service, a proxy, another program) and reaches the host's
log (``reporting.log_error``), so it is quoted as one line, its control characters escaped and its
secrets scrubbed (``said``). An answer without the part a call reads, or with a record afteraction
cannot read, is a ``StoreError`` (``read``, ``parsed``): not an afteraction service.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

import httpx

from afteraction.core.redact import scrub_text
from afteraction.errors import (
    AfterActionError,
    AppendOnlyError,
    AuthError,
    ConflictError,
    ForbiddenError,
    NotFoundError,
    StoreError,
    ValidationError,
)
from afteraction.model import _check

__all__ = ["QUOTED", "parsed", "raise_for", "read", "said"]

#: The most characters an error quotes of the service's message (or of a page that is not its JSON).
QUOTED = 300
T = TypeVar("T")

#: Runs of white space; the C0 and C1 controls and the direction overrides a line shows escaped (``\x1b``).
_SPACE, _UNSHOWABLE = re.compile(r"\s+"), re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def said(text: object, limit: int = QUOTED) -> str:
    """``text`` as an error quotes it: one line (white space folded: a newline would forge a line of
    the host's log), control characters escaped (a terminal's escape sequences), secrets scrubbed,
    then cut (``model._check.echoed``: never half of a token, which the scrubber would miss)."""
    line = _SPACE.sub(" ", str(text)).strip()
    shown = _UNSHOWABLE.sub(lambda found: found[0].encode("unicode_escape").decode("ascii"), line)
    return _check.echoed(scrub_text(shown), limit)


def raise_for(response: httpx.Response, field_of: Callable[[str], str] | None = None) -> None:
    """The error the service's answer stands for (nothing on 2xx). ``field_of``: the caller's name for a
    field the service named (``client_checks.Batches.field``)."""
    if response.is_success:
        return
    try:
        first = response.json()["errors"][0]
        field, message = first.get("field"), said(first.get("message"))
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        field, message = None, said(response.text[: 8 * QUOTED]) or response.reason_phrase
    if field is not None:
        field = said(field if field_of is None else field_of(str(field)), 120)
    status = response.status_code
    where = f"{response.request.method} {response.request.url.path}"
    if status in (400, 413, 415, 422):
        raise ValidationError(field or "request", message)
    errors: dict[int, type[AfterActionError]] = {
        401: AuthError,
        403: ForbiddenError,
        404: NotFoundError,
        409: ConflictError,
        501: AppendOnlyError,  # the deployment does not delete: its message names the GRANT
    }
    if status in errors:
        raise errors[status](f"{where}: {field}: {message}" if field else f"{where}: {message}")
    if status == 429:
        retry = said(response.headers.get("retry-after", "?"), 20)
        raise StoreError(f"{where}: rate limited by the service; retry after {retry} s")
    raise StoreError(f"{where}: the service answered {status}: {message}")


def read(found: Any, name: str) -> Any:
    """``found[name]`` of the service's answer; StoreError when the answer has no such part."""
    if not isinstance(found, dict) or name not in found:
        raise StoreError(f"the service's answer has no {name!r}: is this URL an afteraction service?")
    return found[name]


def parsed(parse: Callable[[Any], T], data: Any) -> T:
    """A record of the service's answer; StoreError (not the caller's ValidationError) when it is not one."""
    try:
        return parse(data)
    except ValidationError as exc:
        raise StoreError(f"the service answered a record afteraction cannot read: {exc}") from exc
