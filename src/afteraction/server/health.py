"""``GET /health`` (the process answers) and ``GET /ready`` (the store answers a read), as the
AEP SDK's ``health()`` and ``ready()`` call them. Neither needs a key nor reveals data.

``/ready`` waits at most ``READY_TIMEOUT`` seconds for its read: a store that cannot answer by
then (a database that is down, or holds the read behind a lock) is not ready, 503, whatever
the store's own timeouts are (the read goes on in its thread, its answer unused)."""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from afteraction.errors import StoreError
from afteraction.server.common import Service, json

__all__ = ["READY_TIMEOUT", "routes"]

READY_TIMEOUT = 5.0


def routes(service: Service) -> list[Route]:
    async def health(request: Request) -> JSONResponse:
        return json({"status": "ok"})

    async def ready(request: Request) -> JSONResponse:
        # A real read in a tenant no key can name: it touches the store and finds nothing.
        read = asyncio.get_running_loop().run_in_executor(None, service.events.session, "", "")
        try:
            await asyncio.wait_for(read, READY_TIMEOUT)
        except asyncio.TimeoutError:
            raise StoreError(f"the store did not answer a read within {READY_TIMEOUT:g} s") from None
        return json({"status": "ready"})

    return [Route("/health", health, methods=["GET"]), Route("/ready", ready, methods=["GET"])]
