"""Exports, streamed: ``GET /sessions/{id}/export`` (one session's events) and ``GET /export``
(the tenant's events with ``from`` ≤ instant < ``to``, each optional, RFC 3339 with an offset).

``format`` is ``json`` (an array of events as stored, the default), ``ndjson`` (one event per
line) or ``csv`` (one row per event: the envelope's fields, ``payload`` as JSON text; a cell that
begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a ``'`` in front, so a
spreadsheet shows it as text instead of running it as a formula: OWASP's advice against CSV
injection, since ids, sources and types are whatever the agent sent). Events go
out in order of instant then arrival, read a page at a time, so an export of any size holds
one page in memory. Each page is its own read: events stored while an export runs may or may
not be in it.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from afteraction.errors import NotFoundError, ValidationError
from afteraction.model._check import echoed, parse_time
from afteraction.server.common import Problem, Service, path_id
from afteraction.server.reads import event_types
from afteraction.store.events import EventStore, StoredEvent, instant, micros

__all__ = ["CSV_COLUMNS", "FORMATS", "neutralize", "routes"]

PAGE = 1_000
FORMATS = {"json": "application/json", "ndjson": "application/x-ndjson", "csv": "text/csv; charset=utf-8"}
CSV_COLUMNS = ("id", "time", "instant", "type", "session_id", "trace_id", "parent_session_id", "source", "payload")


def _pages(
    store: EventStore, tenant: str, session_id: str | None, types: list[str], start: int | None, end: int | None
) -> Iterator[list[StoredEvent]]:
    after: tuple[int, int] | None = None
    while True:
        page = store.events(tenant, session_id, limit=PAGE, after=after, types=types, start=start, end=end)
        if page:
            yield page
        if len(page) < PAGE:
            return
        after = page[-1].position


_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralize(cell: str) -> str:
    """The cell as a spreadsheet shows it as text: a ``'`` before a leading formula character."""
    return "'" + cell if cell.startswith(_FORMULA_STARTS) else cell


def _csv_row(item: StoredEvent) -> list[str]:
    data: dict[str, Any] = json.loads(item.data)
    row = [str(data.get(name) or "") for name in CSV_COLUMNS[:2]]
    row.append(instant(item.at))
    row += [str(data.get(name) or "") for name in CSV_COLUMNS[3:8]]
    row.append(json.dumps(data.get("payload", {}), ensure_ascii=False, separators=(",", ":")))
    return [neutralize(cell) for cell in row]


def _chunks(pages: Iterator[list[StoredEvent]], format: str) -> Iterator[str]:
    if format == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\r\n")
        writer.writerow(CSV_COLUMNS)
        for page in pages:
            writer.writerows(_csv_row(item) for item in page)
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
        if buffer.getvalue():
            yield buffer.getvalue()
    elif format == "ndjson":
        for page in pages:
            yield "".join(item.data + "\n" for item in page)
    else:
        yield "["
        first = True
        for page in pages:
            yield ("" if first else ",") + ",".join(item.data for item in page)
            first = False
        yield "]"


def _format(request: Request) -> str:
    chosen = request.query_params.get("format", "json")
    if chosen not in FORMATS:
        raise Problem(400, "format", f"must be one of {', '.join(FORMATS)}, got {echoed(chosen, 32)!r}")
    return chosen


def _instant(request: Request, name: str) -> int | None:
    raw = request.query_params.get(name)
    if raw is None:
        return None
    try:
        return micros(parse_time(raw, name))
    except ValidationError as exc:
        raise Problem(400, name, exc.rule) from None


def _stream(chunks: Iterator[str], format: str, name: str) -> Response:
    extension = "json" if format == "json" else format
    headers = {"content-disposition": f'attachment; filename="{name}.{extension}"'}
    return StreamingResponse(chunks, media_type=FORMATS[format], headers=headers)


async def export_session(service: Service, request: Request) -> Response:
    tenant = service.tenant(request)
    session_id = path_id(request, "session_id")
    format, types = _format(request), event_types(request)
    if await run_in_threadpool(service.events.session, tenant, session_id) is None:
        raise NotFoundError(f"no session {session_id!r}")
    pages = _pages(service.events, tenant, session_id, types, None, None)
    return _stream(_chunks(pages, format), format, "session")


async def export_range(service: Service, request: Request) -> Response:
    tenant = service.tenant(request)
    format, types = _format(request), event_types(request)
    start, end = _instant(request, "from"), _instant(request, "to")
    if start is not None and end is not None and end <= start:
        raise Problem(400, "to", "must be later than from")
    pages = _pages(service.events, tenant, None, types, start, end)
    return _stream(_chunks(pages, format), format, "events")


def routes(service: Service) -> list[Route]:
    async def session(request: Request) -> Response:
        return await export_session(service, request)

    async def between(request: Request) -> Response:
        return await export_range(service, request)

    return [
        Route("/sessions/{session_id:path}/export", session, methods=["GET"]),
        Route("/export", between, methods=["GET"]),
    ]
