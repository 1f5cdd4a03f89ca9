"""Session reads, all scoped to the caller's tenant: ``GET /sessions`` (newest first, cursor
pages), ``GET /sessions/{id}/events`` (by parsed instant) and ``GET /sessions/{id}/tree``."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from afteraction.errors import NotFoundError, ValidationError
from afteraction.server.common import Service, int_param, json, path_id

__all__ = ["routes"]


def _position(service: Service, request: Request, kind: str, tenant: str, types: tuple[type, ...]) -> list[Any] | None:
    cursor = request.query_params.get("cursor")
    if cursor is None:
        return None
    position = service.cursors.decode(kind, tenant, cursor)
    if len(position) != len(types) or not all(type(v) is t for v, t in zip(position, types, strict=True)):
        raise ValidationError("cursor", "is not a cursor this server issued for this list; start again without it")
    return position


async def list_sessions(service: Service, request: Request) -> JSONResponse:
    tenant = service.tenant(request)
    limit = int_param(request, "limit", 50, maximum=service.limits.page)
    position = _position(service, request, "sessions", tenant, (int, str))
    before = None if position is None else (position[0], position[1])
    found = await run_in_threadpool(lambda: service.events.sessions(tenant, limit=limit, before=before))
    last = found[-1] if len(found) == limit else None
    cursor = None if last is None else service.cursors.encode("sessions", tenant, [last.started_at, last.id])
    return json({"sessions": [session.to_dict() for session in found], "next_cursor": cursor})


async def session_events(service: Service, request: Request) -> JSONResponse:
    tenant = service.tenant(request)
    session_id = path_id(request, "session_id")
    limit = int_param(request, "limit", service.limits.page, maximum=service.limits.page)
    kind = "events:" + session_id
    position = _position(service, request, kind, tenant, (int, int))
    after = None if position is None else (position[0], position[1])
    session = await run_in_threadpool(service.events.session, tenant, session_id)
    if session is None:
        raise NotFoundError(f"no session {session_id!r}")
    found = await run_in_threadpool(lambda: service.events.events(tenant, session_id, limit=limit, after=after))
    cursor = None if len(found) < limit else service.cursors.encode(kind, tenant, list(found[-1][0]))
    return json({"session": session.to_dict(), "events": [data for _, data in found], "next_cursor": cursor})


async def session_tree(service: Service, request: Request) -> JSONResponse:
    tenant = service.tenant(request)
    session_id = path_id(request, "session_id")
    found = await run_in_threadpool(service.events.tree, tenant, session_id)
    if found is None:
        raise NotFoundError(f"no session {session_id!r}")
    tree, truncated = found
    return json({"tree": tree.to_dict(), "truncated": truncated})


def routes(service: Service) -> list[Route]:
    async def sessions(request: Request) -> JSONResponse:
        return await list_sessions(service, request)

    async def events(request: Request) -> JSONResponse:
        return await session_events(service, request)

    async def tree(request: Request) -> JSONResponse:
        return await session_tree(service, request)

    return [
        Route("/sessions", sessions, methods=["GET"]),
        Route("/sessions/{session_id}/events", events, methods=["GET"]),
        Route("/sessions/{session_id}/tree", tree, methods=["GET"]),
    ]
