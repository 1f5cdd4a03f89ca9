"""Session and workflow reads, all scoped to the caller's tenant.

- ``GET /sessions``: newest first, in pages with an opaque ``next_cursor`` (``cursor``);
- ``GET /sessions/{id}/events``: by parsed instant, in pages; ``type`` (repeatable) keeps those
  types, ``q`` keeps events with a string or number holding the text (case-folded);
- ``GET /sessions/{id}/tree``: the session and its descendants;
- ``GET /workflows/{trace_id}``: the sessions of a trace as a forest.

Trees and workflows visit each session once (a session naming itself as parent, or a loop,
ends the walk) and read only indexed rows: their cost follows the size of the answer, not the
number of sessions stored.
"""

from __future__ import annotations

from typing import Any

import msgspec
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from afteraction.errors import NotFoundError, ValidationError
from afteraction.model import EVENT_TYPES
from afteraction.model._check import echoed
from afteraction.server.common import Problem, Service, int_param, json, path_id
from afteraction.store.session_walks import matching, tree, workflow

__all__ = ["MAX_QUERY", "event_types", "routes"]

MAX_QUERY = 256  # characters of ``q``
_encode = msgspec.json.encode


def _position(service: Service, request: Request, kind: str, tenant: str, types: tuple[type, ...]) -> list[Any] | None:
    cursor = request.query_params.get("cursor")
    if cursor is None:
        return None
    position = service.cursors.decode(kind, tenant, cursor)
    if len(position) != len(types) or not all(type(v) is t for v, t in zip(position, types, strict=True)):
        raise ValidationError("cursor", "is not a cursor this server issued for this list; start again without it")
    return position


def event_types(request: Request) -> list[str]:
    """The ``type`` parameters, each one of the 12 core types."""
    found = request.query_params.getlist("type")
    for value in found:
        if value not in EVENT_TYPES:
            raise Problem(400, "type", f"must be one of the 12 core event types, got {echoed(value, 64)!r}")
    return found


async def list_sessions(service: Service, request: Request) -> JSONResponse:
    tenant = service.tenant(request)
    limit = int_param(request, "limit", 50, maximum=service.limits.page)
    position = _position(service, request, "sessions", tenant, (int, str))
    before = None if position is None else (position[0], position[1])
    found = await run_in_threadpool(lambda: service.events.sessions(tenant, limit=limit, before=before))
    last = found[-1] if len(found) == limit else None
    cursor = None if last is None else service.cursors.encode("sessions", tenant, [last.started_at, last.id])
    return json({"sessions": [session.to_dict() for session in found], "next_cursor": cursor})


async def session_events(service: Service, request: Request) -> Response:
    tenant = service.tenant(request)
    session_id = path_id(request, "session_id")
    limit = int_param(request, "limit", service.limits.page, maximum=service.limits.page)
    types = event_types(request)
    text = request.query_params.get("q")
    if text is not None and not 1 <= len(text) <= MAX_QUERY:
        raise Problem(400, "q", f"must be 1 to {MAX_QUERY} characters")
    kind = "events:" + session_id
    position = _position(service, request, kind, tenant, (int, int))
    after = None if position is None else (position[0], position[1])
    session = await run_in_threadpool(service.events.session, tenant, session_id)
    if session is None:
        raise NotFoundError(f"no session {session_id!r}")
    if text is None:
        found = await run_in_threadpool(
            lambda: service.events.events(tenant, session_id, limit=limit, after=after, types=types)
        )
    else:
        found = await run_in_threadpool(
            lambda: list(matching(service.events, tenant, session_id, limit=limit, after=after, types=types, text=text))
        )
    cursor = None if len(found) < limit else service.cursors.encode(kind, tenant, list(found[-1].position))
    # The stored JSON of each event goes out as stored, without decoding it again.
    events = ",".join(item.data for item in found).encode()
    body = b'{"session":%s,"events":[%s],"next_cursor":%s}' % (_encode(session.to_dict()), events, _encode(cursor))
    return Response(body, media_type="application/json")


async def session_tree(service: Service, request: Request) -> JSONResponse:
    tenant = service.tenant(request)
    session_id = path_id(request, "session_id")
    found = await run_in_threadpool(tree, service.events, tenant, session_id)
    if found is None:
        raise NotFoundError(f"no session {session_id!r}")
    root, truncated = found
    return json({"tree": root.to_dict(), "truncated": truncated})


async def trace_workflow(service: Service, request: Request) -> JSONResponse:
    tenant = service.tenant(request)
    trace_id = path_id(request, "trace_id")
    found = await run_in_threadpool(workflow, service.events, tenant, trace_id)
    if found is None:
        raise NotFoundError(f"no workflow (trace) {trace_id!r}")
    roots, truncated = found
    return json({"trace_id": trace_id, "sessions": [root.to_dict() for root in roots], "truncated": truncated})


def routes(service: Service) -> list[Route]:
    async def sessions(request: Request) -> Response:
        return await list_sessions(service, request)

    async def events(request: Request) -> Response:
        return await session_events(service, request)

    async def session(request: Request) -> Response:
        return await session_tree(service, request)

    async def trace(request: Request) -> Response:
        return await trace_workflow(service, request)

    return [
        Route("/sessions", sessions, methods=["GET"]),
        Route("/sessions/{session_id:path}/events", events, methods=["GET"]),
        Route("/sessions/{session_id:path}/tree", session, methods=["GET"]),
        Route("/workflows/{trace_id:path}", trace, methods=["GET"]),
    ]
