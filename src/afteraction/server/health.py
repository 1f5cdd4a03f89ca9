"""``GET /health`` (the process answers) and ``GET /ready`` (the store answers a read), as the
AEP SDK's ``health()`` and ``ready()`` call them. Neither needs a key nor reveals data."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from afteraction.server.common import Service, json

__all__ = ["routes"]


def routes(service: Service) -> list[Route]:
    async def health(request: Request) -> JSONResponse:
        return json({"status": "ok"})

    async def ready(request: Request) -> JSONResponse:
        # A real read in a tenant no key can name: it touches the store and finds nothing.
        await run_in_threadpool(service.events.session, "", "")
        return json({"status": "ready"})

    return [Route("/health", health, methods=["GET"]), Route("/ready", ready, methods=["GET"])]
