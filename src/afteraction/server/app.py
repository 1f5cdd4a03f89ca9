"""The Starlette app, its error mapping, and ``serve`` (uvicorn; API keys, or development mode).

Every error is JSON of one shape (``common.error_body``), never an HTML page or a traceback:
afteraction errors by the status each carries, Starlette's own (404, 405) by theirs, anything
unexpected as a 500 whose detail goes to the log only. A 5xx afteraction error says only "try again
later" (its detail, which may name the database, goes to the log), except a deletion the deployment
does not do (``AppendOnlyError``, 501), whose message is what the client must be told. A 405 names
field ``method`` and carries ``Allow``: every method the path takes, over all its routes.

Routing is exact (``_exact``): a path parameter matches any character (a percent-encoded newline
too, which Starlette's ``:path`` left unrouted), a path ends where it ends (Starlette's ``$`` also
matched before a final newline: ``DELETE /sessions/a%0A`` deleted session ``a``), every path
parameter is an id checked before the route runs (``common.id_problem``: 400 naming it), and no path
is redirected to another (a trailing ``/``): a client following a redirect of a DELETE would act on
another id than it named.
"""

from __future__ import annotations

import ipaddress
import logging
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import uvicorn
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Match, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from afteraction import __version__
from afteraction.errors import AfterActionError, AppendOnlyError, ConfigError, ValidationError
from afteraction.memory import Memory
from afteraction.model._check import echoed
from afteraction.server import admin, experience, export, health, ingest, metrics, openapi, otlp, reads, retention
from afteraction.server.auth import AuthMiddleware, KeyAuth, key_project, key_tenant
from afteraction.server.committer import Committer
from afteraction.server.common import (
    EventCharge,
    EventCheck,
    Limits,
    Problem,
    ProjectResolver,
    Service,
    TenantResolver,
    any_project,
    error_body,
    id_problem,
    json,
    no_charge,
    no_check,
)
from afteraction.server.cursor import Cursors
from afteraction.store.events import EventStore, open_events
from afteraction.store.keys import NO_SECRET, ServerSecret, open_keys

__all__ = ["DEV_TENANT", "Limits", "TenantResolver", "create_app", "is_loopback", "serve"]

log = logging.getLogger("afteraction.server")

DEV_TENANT = "dev"


def dev_tenant(request: Request) -> str:
    """Development mode: every request is tenant ``dev``, no key asked."""
    return DEV_TENANT


def _error(request: Request, status: int, field: str | None, message: str, *, verbatim: bool = False) -> JSONResponse:
    ingest_route = request.url.path.startswith("/events")
    return json(error_body(field, message, ingest=ingest_route, verbatim=verbatim), status)


async def _problem(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, Problem)
    response = _error(request, exc.status, exc.field, exc.message, verbatim=exc.verbatim)
    response.headers.update(exc.headers)  # a 429's Retry-After
    return response


async def _afteraction_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, AfterActionError)
    if isinstance(exc, ValidationError):
        return _error(request, exc.status, exc.field, exc.rule)
    if exc.status >= 500 and not isinstance(exc, AppendOnlyError):  # its message names no database location
        log.error("afteraction server: %s", exc)
        return _error(request, exc.status, None, "the service cannot answer now; try again later")
    return _error(request, exc.status, None, str(exc))


async def _refused(request: Request, exc: Exception) -> Response:
    """A refusal outside the routes (the API key middleware): a Problem or an afteraction error."""
    return await (_problem if isinstance(exc, Problem) else _afteraction_error)(request, exc)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 405:
        return await _not_allowed(request, exc)
    response = _error(request, exc.status_code, None, exc.detail)
    response.headers.update(exc.headers or {})
    return response


async def _not_allowed(request: Request, exc: HTTPException) -> Response:
    """405 naming ``method``, with ``Allow`` listing every method the path takes: Starlette's names
    those of the first route that matched the path only (``/admin/keys`` has a GET and a POST route).
    A path whose id is refused (``GET /sessions/``: the id of ``DELETE /sessions/{id}`` is empty) is
    400 naming the id, as on the route that takes it: the id is wrong whatever the method."""
    for name, value in request.path_params.items():
        if (problem := id_problem(name, str(value))) is not None:
            return await _problem(request, problem)
    allowed = set((exc.headers or {}).get("Allow", "").replace(" ", "").split(",")) - {""}
    for route in request.app.router.routes:
        if isinstance(route, Route) and route.methods and route.matches(request.scope)[0] is not Match.NONE:
            allowed |= route.methods
    allow = ", ".join(sorted(allowed))
    method, path = echoed(request.method, 20), echoed(request.url.path, 200)
    response = _error(request, 405, "method", f"{method} is not allowed on {path}; it takes {allow}")
    response.headers["Allow"] = allow
    return response


async def _unexpected(request: Request, exc: Exception) -> Response:
    log.exception("afteraction server: unexpected error on %s %s", request.method, request.url.path)
    return _error(request, 500, None, "internal error")


class _CheckedIds:
    """A route's app behind a check of its path parameters: each an id (``common.id_problem``)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        for name, value in scope.get("path_params", {}).items():
            if (problem := id_problem(name, str(value))) is not None:
                raise problem
        await self.app(scope, receive, send)


def _exact(routes: list[BaseRoute]) -> list[BaseRoute]:
    """``routes`` matched exactly (see the module): each path's pattern recompiled so that ``.`` is any
    character and the end is ``\\Z``; the routes with path parameters check them as ids."""
    for route in routes:
        if isinstance(route, Route) and route.path_regex.pattern.endswith("$"):
            route.path_regex = re.compile(route.path_regex.pattern[:-1] + r"\Z", re.DOTALL)
            if route.param_convertors:
                route.app = _CheckedIds(route.app)
    return routes


def create_app(
    events: EventStore,
    *,
    tenant: TenantResolver = dev_tenant,
    cursor_key: bytes | None = None,
    limits: Limits | None = None,
    auth: KeyAuth | None = None,
    memory: Memory | None = None,
) -> Starlette:
    """The app over an event store and (optionally) an experience ``memory``. ``tenant``
    decides each request's tenant (development mode: always ``dev``); ``cursor_key`` encrypts
    and signs page cursors (default: a key made per process). With ``auth``, every request but the
    public ones (``auth.PUBLIC``) needs an API key (``server.auth``), whose tenant it gets, and
    ingest charges the key's event rate.
    Ingested events are stored by one writer thread (group commit), stopped at shutdown."""
    middleware: list[Middleware] = []
    extra: list[Route] = []
    check: EventCheck = no_check
    project: ProjectResolver = any_project
    charge: EventCharge = no_charge
    if auth is not None:
        tenant, check, project, charge = key_tenant, auth.check_event, key_project, auth.charge
        middleware.append(Middleware(AuthMiddleware, auth=auth, on_error=_refused))
        extra = admin.routes(auth)
    writer = Committer(events)
    service = Service(
        events,
        tenant,
        Cursors(cursor_key),
        limits or Limits(),
        writer,
        metrics.Metrics(),
        memory=memory,
        check=check,
        project=project,
        charge=charge,
    )

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            writer.close()
            log.info("afteraction server: %d requests stored in %d transactions", writer.requests, writer.transactions)

    app = Starlette(
        routes=_exact(
            [
                *ingest.routes(service),
                *reads.routes(service),
                *retention.routes(service),
                *export.routes(service),
                *metrics.routes(service),
                *otlp.routes(service),
                *experience.routes(service),
                *health.routes(service),
                *openapi.routes(__version__, service.limits),
                *extra,
            ]
        ),
        middleware=middleware,
        lifespan=lifespan,
        exception_handlers={
            Problem: _problem,
            AfterActionError: _afteraction_error,
            HTTPException: _http_error,
            Exception: _unexpected,
        },
    )
    app.router.redirect_slashes = False  # never send a client to another path (see the module)
    return app


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def serve(
    db: str, *, host: str, port: int, dev: bool, secret: ServerSecret | None = None, vectors: bool = True
) -> None:
    """Run the service until interrupted: with API keys (``secret`` required: signing secrets and
    cursor keys derive from it, so replicas sharing it agree), or in development mode.
    ``vectors`` False searches lessons by text only (no embedder is loaded)."""
    if dev and not is_loopback(host):
        raise ConfigError(f"--dev runs without API keys, so only on a loopback address; got --host {host!r}")
    if not dev and secret is None:
        raise ConfigError(NO_SECRET)
    events = open_events(db, checkpoint_every=1.0)
    memory = Memory(events.store) if vectors else Memory(events.store, embedder=None)
    try:
        if secret is None or dev:
            app = create_app(events, memory=memory)
        else:
            keyed = KeyAuth(open_keys(events.store), secret)
            app = create_app(events, cursor_key=secret.derive("cursor/v1"), auth=keyed, memory=memory)
        config = uvicorn.Config(app, host=host, port=port, server_header=False, access_log=False)
        uvicorn.Server(config).run()
    finally:
        memory.close()  # background indexing finishes what is queued (bounded) before the store closes
        events.close()
