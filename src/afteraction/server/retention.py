"""Deleting sessions over HTTP, in the caller's tenant.

- ``DELETE /sessions/{id}`` → ``{"deleted": 1|0}``: the session with all its events and its share of
  the tenant's counts (``EventStore.delete_sessions``); 0 when the tenant has no such session, so a
  retried request is no error. Its child sessions stay. An event of it sent again is stored again.

It is a write (the ``write`` scope, as every method but GET and HEAD outside ``/admin``): deleting
observability data is what a tenant's own ingest key does to what it sent, not an act on keys, so
it needs no ``admin``. Like every unsigned write, a key that requires signatures is refused it.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from afteraction.server.common import Service, json, path_id

__all__ = ["routes"]


async def delete_session(service: Service, request: Request) -> Response:
    tenant = service.tenant(request)
    session_id = path_id(request, "session_id")
    deleted = await run_in_threadpool(service.events.delete_sessions, tenant, [session_id])
    return json({"deleted": deleted})


def routes(service: Service) -> list[Route]:
    async def session(request: Request) -> Response:
        return await delete_session(service, request)

    return [Route("/sessions/{session_id:path}", session, methods=["DELETE"])]
