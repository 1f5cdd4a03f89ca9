"""The Starlette app, its error mapping, and ``serve`` (uvicorn, development mode only for now).

Every error is JSON of one shape (``common.error_body``), never an HTML page or a traceback:
afteraction errors by the status each carries, Starlette's own (404, 405) by theirs, anything
unexpected as a 500 whose detail goes to the log only.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import uvicorn
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from afteraction.errors import AfterActionError, ConfigError, ValidationError
from afteraction.server import export, ingest, metrics, reads
from afteraction.server.committer import Committer
from afteraction.server.common import Limits, Problem, Service, TenantResolver, error_body, json
from afteraction.server.cursor import Cursors
from afteraction.store.events import EventStore, open_events

__all__ = ["DEV_TENANT", "Limits", "TenantResolver", "create_app", "is_loopback", "serve"]

log = logging.getLogger("afteraction.server")

DEV_TENANT = "dev"


def dev_tenant(request: Request) -> str:
    """Development mode: every request is tenant ``dev``, no key asked."""
    return DEV_TENANT


def _error(request: Request, status: int, field: str | None, message: str) -> JSONResponse:
    ingest_route = request.url.path.startswith("/events")
    return json(error_body(field, message, ingest=ingest_route), status)


async def _problem(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, Problem)
    return _error(request, exc.status, exc.field, exc.message)


async def _afteraction_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, AfterActionError)
    if isinstance(exc, ValidationError):
        return _error(request, exc.status, exc.field, exc.rule)
    if exc.status >= 500:
        log.error("afteraction server: %s", exc)
        return _error(request, exc.status, None, "the service cannot answer now; try again later")
    return _error(request, exc.status, None, str(exc))


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return _error(request, exc.status_code, None, exc.detail)


async def _unexpected(request: Request, exc: Exception) -> Response:
    log.exception("afteraction server: unexpected error on %s %s", request.method, request.url.path)
    return _error(request, 500, None, "internal error")


def create_app(
    events: EventStore,
    *,
    tenant: TenantResolver = dev_tenant,
    cursor_key: bytes | None = None,
    limits: Limits | None = None,
) -> Starlette:
    """The app over an event store. ``tenant`` decides each request's tenant (development mode:
    always ``dev``); ``cursor_key`` signs page cursors (default: a key made per process).
    Ingested events are stored by one writer thread (group commit), stopped at shutdown."""
    writer = Committer(events)
    service = Service(events, tenant, Cursors(cursor_key), limits or Limits(), writer, metrics.Metrics())

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            writer.close()
            log.info("afteraction server: %d requests stored in %d transactions", writer.requests, writer.transactions)

    return Starlette(
        routes=[*ingest.routes(service), *reads.routes(service), *export.routes(service), *metrics.routes(service)],
        lifespan=lifespan,
        exception_handlers={
            Problem: _problem,
            AfterActionError: _afteraction_error,
            HTTPException: _http_error,
            Exception: _unexpected,
        },
    )


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def serve(db: str, *, host: str, port: int, dev: bool) -> None:
    """Run the service until interrupted. Only development mode exists in this slice."""
    if not dev:
        raise ConfigError(
            "API keys are not available yet: run `afteraction serve --dev` (tenant 'dev', no keys, loopback only)"
        )
    if not is_loopback(host):
        raise ConfigError(f"--dev runs without API keys, so only on a loopback address; got --host {host!r}")
    events = open_events(db, checkpoint_every=1.0)
    try:
        config = uvicorn.Config(create_app(events), host=host, port=port, server_header=False, access_log=False)
        uvicorn.Server(config).run()
    finally:
        events.close()
