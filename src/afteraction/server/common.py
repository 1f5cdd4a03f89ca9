"""What the routes share: the service's state, its limits, the one shape of an error, and how a body's
``Content-Encoding`` is read (``decompress``: gzip, or none)."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from afteraction.core.redact import scrub_text
from afteraction.memory import Memory
from afteraction.model import Event
from afteraction.model._check import MAX_ID, echoed
from afteraction.server.committer import Committer
from afteraction.server.cursor import Cursors
from afteraction.store.events import EventStore

if TYPE_CHECKING:
    from afteraction.server.metrics import Metrics

__all__ = [
    "EventCharge",
    "EventCheck",
    "Limits",
    "Problem",
    "ProjectResolver",
    "Service",
    "TenantResolver",
    "any_project",
    "content_encoding",
    "count",
    "decompress",
    "error_body",
    "id_problem",
    "int_param",
    "json",
    "no_charge",
    "no_check",
    "path_id",
    "shown",
]

#: Who the caller is: the tenant every read and write of this request is scoped to.
TenantResolver = Callable[[Request], str]
#: A check of each valid incoming event as received (its JSON object) and as validated, before it
#: is stored: the server with API keys verifies signatures there. Returns the event to store (a
#: verified signature keeps only what was verified); raises Problem naming the field; ``prefix``
#: places it in a batch (``events[3].``).
EventCheck = Callable[[Request, Any, Event, str], Event]

#: What ingesting ``count`` events (or spans) costs the caller, charged once a request's events are
#: counted and before any is stored: the server with API keys takes them from the key's event rate
#: (``KeyAuth.charge``), raising Problem (413, 429) to refuse the whole request.
EventCharge = Callable[[Request, int], None]


#: The project the caller is bound to (a key made for one project), or None: any project of its tenant.
ProjectResolver = Callable[[Request], "str | None"]


def any_project(request: Request) -> str | None:
    return None


def no_check(request: Request, data: Any, event: Event, prefix: str) -> Event:
    """Development mode: events are taken as sent."""
    return event


def no_charge(request: Request, count: int) -> None:
    """Development mode: events cost nothing."""


@dataclass(frozen=True, slots=True)
class Limits:
    """Request limits. Bodies over them get 413 before anything is parsed."""

    event_bytes: int = 1 << 20  # POST /events
    batch_bytes: int = 16 << 20  # POST /events/batch
    batch_events: int = 10_000
    traces_bytes: int = 16 << 20  # POST /v1/traces, compressed and once decompressed
    page: int = 500  # the largest ``limit`` a list accepts


@dataclass(frozen=True, slots=True)
class Service:
    events: EventStore
    tenant: TenantResolver
    cursors: Cursors
    limits: Limits
    writer: Committer  # group commit of ingested events
    metrics: Metrics  # this replica's counters
    memory: Memory | None = None  # the experience routes answer 404 without one
    check: EventCheck = no_check
    project: ProjectResolver = any_project
    charge: EventCharge = no_charge


class Problem(Exception):
    """A request the server refuses: its status, the field at fault (if any), why, and the
    headers its answer carries (a 429's ``Retry-After``). ``verbatim``: the field and message are
    the server's own text, echoing nothing the request sent, so they are shown as written, not
    scrubbed (a scrubber takes the hint ``Authorization: Bearer <key>`` for a token)."""

    def __init__(
        self,
        status: int,
        field: str | None,
        message: str,
        headers: Mapping[str, str] | None = None,
        *,
        verbatim: bool = False,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.field = field
        self.message = message
        self.headers = dict(headers or {})
        self.verbatim = verbatim


def error_body(field: str | None, message: str, *, ingest: bool, verbatim: bool = False) -> dict[str, Any]:
    """The one error shape: ``{"error": "<field>: <message>", "errors": [{"field", "message"}]}``;
    ingest routes also say ``"accepted": false``, as the AEP reference server does. ``error`` is
    the one line the AEP SDKs show in their exceptions. What it echoes of a refused value is
    scrubbed (``shown``); a ``verbatim`` message (the server's own text) is not."""
    body: dict[str, Any] = {"accepted": False} if ingest else {}
    error = shown(field, message, verbatim=verbatim)
    body["error"] = error["message"] if field is None else f"{error['field']}: {error['message']}"
    body["errors"] = [error]
    return body


def shown(field: str | None, message: str, *, verbatim: bool = False) -> dict[str, Any]:
    """An error's ``{"field", "message"}`` as an answer shows it: secrets scrubbed (``scrub_text``).
    An error may echo what the sender sent (an unknown field's name, a refused value, cut by
    ``model._check.echoed``), and goes back into the sender's logs. A ``verbatim`` error echoes
    nothing sent: it is shown as written."""
    if verbatim:
        return {"field": field, "message": message}
    return {"field": None if field is None else scrub_text(field), "message": scrub_text(message)}


def json(data: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(data, status_code=status)


def id_problem(name: str, value: str) -> Problem | None:
    """The 400 naming path parameter ``name`` when ``value`` is no id (blank, over MAX_ID characters,
    or holding a control character: a tab, a newline, DEL), else None."""
    if not value.strip() or len(value) > MAX_ID or any(ord(c) < 32 or ord(c) == 127 for c in value):
        return Problem(400, name, f"must be 1 to {MAX_ID} characters without control characters")
    return None


def path_id(request: Request, name: str) -> str:
    """A path parameter that is an id: not blank, at most MAX_ID characters, no control characters."""
    value = str(request.path_params[name])
    problem = id_problem(name, value)
    if problem is not None:
        raise problem
    return value


_DIGITS = 18  # what ``count`` reads: every int_param maximum is below 10**18


def count(text: str) -> int | None:
    """A non-negative decimal integer of ASCII digits (at most 18 of them), else None."""
    text = text.strip()
    if not text or len(text) > _DIGITS or not (text.isascii() and text.isdigit()):
        return None
    return int(text)


def int_param(request: Request, name: str, default: int, *, maximum: int, minimum: int = 1) -> int:
    """Query parameter ``name`` as an integer from ``minimum`` to ``maximum`` (below 10**18), ``default``
    when absent; Problem(400) naming it otherwise: a number of any length past ``maximum`` is "at most"."""
    raw = request.query_params.get(name)
    if raw is None:
        return default
    digits = raw.strip()
    if not (digits.isascii() and digits.isdigit()):
        raise Problem(400, name, f"must be an integer from {minimum} to {maximum}, got {echoed(raw, 32)!r}")
    value = count(digits)
    if value is None or value > maximum:  # None: more digits than any maximum has
        raise Problem(400, name, f"must be at most {maximum}, got {echoed(raw, 32)!r}")
    if value < minimum:
        raise Problem(400, name, f"must be at least {minimum}, got {echoed(raw, 32)!r}")
    return value


_ENCODINGS = frozenset({"", "identity", "gzip", "x-gzip"})
_GZIP_MEMBERS = 64


def content_encoding(request: Request) -> str:
    """The request's ``Content-Encoding``, lowercased ("" for none): gzip or none (``identity``),
    else Problem(415) naming ``content-encoding``. Checked before any byte of the body is read."""
    encoding = request.headers.get("content-encoding", "").strip().lower()
    if encoding not in _ENCODINGS:
        raise Problem(415, "content-encoding", f"must be gzip or none, got {echoed(encoding, 40)!r}")
    return encoding


def decompress(body: bytes, encoding: str, limit: int) -> bytes:
    """The body decoded from its Content-Encoding (none or gzip), never more than ``limit`` bytes:
    decompression stops there (413), so a zip bomb costs no more memory than an honest body."""
    if encoding in ("", "identity"):
        return body
    if encoding not in _ENCODINGS:
        raise Problem(415, "content-encoding", f"must be gzip or none, got {echoed(encoding, 40)!r}")
    out = bytearray()
    rest = body
    for _ in range(_GZIP_MEMBERS):  # a gzip stream may hold several members
        stream = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            out += stream.decompress(rest, limit + 1 - len(out))
        except zlib.error as exc:
            raise Problem(400, "body", f"is not valid gzip: {exc}") from None
        if len(out) > limit:
            raise Problem(413, None, f"the body passes the limit of {limit} bytes once decompressed")
        if not stream.eof:
            raise Problem(400, "body", "is truncated gzip (the stream does not end)")
        rest = stream.unused_data
        if not rest.strip(b"\0"):
            return bytes(out)
    raise Problem(400, "body", f"holds more than {_GZIP_MEMBERS} gzip members")
