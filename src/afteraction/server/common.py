"""What the routes share: the service's state, its limits, and the one shape of an error."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from afteraction.core.redact import scrub_text
from afteraction.memory import Memory
from afteraction.model import Event
from afteraction.model._check import MAX_ID
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
    "count",
    "error_body",
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
    headers its answer carries (a 429's ``Retry-After``)."""

    def __init__(self, status: int, field: str | None, message: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.field = field
        self.message = message
        self.headers = dict(headers or {})


def error_body(field: str | None, message: str, *, ingest: bool) -> dict[str, Any]:
    """The one error shape: ``{"error": "<field>: <message>", "errors": [{"field", "message"}]}``;
    ingest routes also say ``"accepted": false``, as the AEP reference server does. ``error`` is
    the one line the AEP SDKs show in their exceptions. What it echoes of a refused value is
    scrubbed (``shown``)."""
    body: dict[str, Any] = {"accepted": False} if ingest else {}
    error = shown(field, message)
    body["error"] = error["message"] if field is None else f"{error['field']}: {error['message']}"
    body["errors"] = [error]
    return body


def shown(field: str | None, message: str) -> dict[str, Any]:
    """An error's ``{"field", "message"}`` as an answer shows it: secrets scrubbed (``scrub_text``).
    An error may echo what the sender sent (an unknown field's name, a refused value, cut by
    ``model._check.echoed``), and goes back into the sender's logs."""
    return {"field": None if field is None else scrub_text(field), "message": scrub_text(message)}


def json(data: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(data, status_code=status)


def path_id(request: Request, name: str) -> str:
    """A path parameter that is an id: not blank, at most MAX_ID characters, no control characters."""
    value = str(request.path_params[name])
    if not value.strip() or len(value) > MAX_ID or any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise Problem(400, name, f"must be 1 to {MAX_ID} characters without control characters")
    return value


def count(text: str) -> int | None:
    """A non-negative decimal integer of ASCII digits (at most 18 of them), else None."""
    text = text.strip()
    if not text or len(text) > 18 or not (text.isascii() and text.isdigit()):
        return None
    return int(text)


def int_param(request: Request, name: str, default: int, *, maximum: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    value = count(raw)
    if value is None or not 1 <= value <= maximum:
        raise Problem(400, name, f"must be an integer from 1 to {maximum}, got {raw[:32]!r}")
    return value
