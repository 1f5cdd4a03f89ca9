"""API keys on every route: who is calling, may they, how fast, and are their events signed.

``AuthMiddleware`` runs before routing, for every request:

1. **Authenticate.** ``Authorization: Bearer <key>`` (what the AEP SDKs send: ``AEPClient(api_key=…)``
   and ``AEP_API_KEY``). No header, a malformed or unknown key, or a wrong secret: 401 (one message
   for all three). A revoked key: 401, and it reads nothing.
2. **Authorize.** The route's scope: ``/admin/…`` needs ``admin``; GET and HEAD need ``read``;
   every other method (ingest and later writes) needs ``write``. Lacking it: 403. A key that
   requires signatures writes only through the routes that verify them (``SIGNED_WRITES``:
   AEP events); every other write (OTLP spans, lessons, runs, outcomes, verdicts, and any route
   added later) carries nothing it could verify, so it is 403 naming the setting. Reads and
   ``/admin`` are not data writes and stay open to it.
3. **Rate-limit.** A key with a rate takes a token from its bucket (``ratelimit``); an empty one
   gets 429 with ``Retry-After`` in whole seconds.

A key with an event rate is charged again by the ingest routes, once a request's events or spans
are counted and before any is stored (``charge``, the ``Service.charge`` of an app with keys): a
request of N takes N from the key's event bucket. More than the key's ``event_burst`` in one
request is 413 (it could never fit); too few tokens now is 429 with ``Retry-After``, and nothing of
the request is stored.

The key then rides on the request (``caller(request)``): its tenant scopes every read and write.

Signed events (``check_event``, called by ingest for each event): a ``signature`` is verified with
the key's signing secret (``ServerSecret.signing_secret``) over canonical v2; a v1 (legacy)
signature only when the key allows legacy signatures, as the AEP reference server now answers
(401). A key may require signatures: an unsigned event is then 401 too, and a v1 signature is refused
even if the key also allows legacy ones (a v1 signature covers no payload; new keys cannot have both).
A signature of the wrong shape is 401 naming the member and the rule (``signature.alg``,
``signature.canon``, ``signature.value``: ``core.canonical.signature_problem``) before any HMAC is
computed; "does not match" is left for a well-formed one that does not verify. Each error names the
field (``signature``, or ``events[i].signature`` in a batch). Before verifying, an integer past 2**53
is refused (400 naming its path): the canonical form rounds it, so a signature could not cover the
number stored. A verified event is stored with only the signature members that verifying read
(``SIGNATURE_MEMBERS``); anything else in the signature object was covered by nothing, and is dropped.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from afteraction.core.canonical import SIGNATURE_MEMBERS, inexact_integer, signature_problem, verify
from afteraction.errors import AfterActionError
from afteraction.model import Event
from afteraction.model._check import echoed
from afteraction.server.common import Problem
from afteraction.server.ratelimit import RateLimiter
from afteraction.store.keys import Key, KeyStore, ServerSecret, key_id_of, token_matches

__all__ = ["AuthMiddleware", "KeyAuth", "RateLimited", "caller", "key_tenant", "required_scope"]

FIELD = "authorization"
#: The 401s' own hints, shown as written (``Problem.verbatim``): a scrubber takes ``Bearer <key>`` for a token.
REQUIRED = "is required: send `Authorization: Bearer <key>`"
INVALID = "is not a valid API key; send `Authorization: Bearer <key>` with a key from `afteraction keys create`"


_KEPT = frozenset(SIGNATURE_MEMBERS)
_INEXACT = (
    "is an integer beyond 2^53 in a signed event: its canonical form (JavaScript numbers) rounds it, so a "
    "signature cannot cover it exactly; send it as a string"
)


class RateLimited(Problem):
    """429 with ``Retry-After``: the key is over its request rate, or (``events`` given) over its
    event rate for a request of that many events."""

    def __init__(self, key: Key, retry_after: int, events: int | None = None) -> None:
        if events is None:
            message = f"key {key.id} is over its rate of {key.rate:g}/s; retry in {retry_after} s"
        else:
            message = (
                f"key {key.id} is over its event_rate of {key.event_rate:g} events/s (event_burst {key.event_burst}) "
                f"for the {events} events of this request; retry in {retry_after} s"
            )
        super().__init__(429, None, message, {"Retry-After": str(retry_after)})
        self.retry_after = retry_after


#: The name of a key's event bucket in the limiter: its id and this (ids hold no "/").
EVENTS = "/events"


#: Routes anyone may call: liveness, readiness and the API description reveal no data.
PUBLIC = frozenset({"/health", "/ready", "/openapi.json"})

#: POST routes that only read (a search takes a body, but changes nothing).
READ_POSTS = frozenset({"/experience/search", "/experience/block"})

#: The write routes whose data carries a signature the server verifies (``check_event``): the only
#: writes a key that requires signatures may make.
SIGNED_WRITES = frozenset({"/events", "/events/batch"})


def required_scope(method: str, path: str) -> str:
    if path == "/admin" or path.startswith("/admin/"):
        return "admin"
    return "read" if method in ("GET", "HEAD") or path in READ_POSTS else "write"


def caller(request: Request) -> Key:
    """The key this request was authenticated with."""
    key = request.state.key
    assert isinstance(key, Key)
    return key


def key_tenant(request: Request) -> str:
    """The ``TenantResolver`` of a server with keys: the caller's key's tenant."""
    return caller(request).tenant


def key_project(request: Request) -> str | None:
    """The project the caller's key is bound to, if any: experience routes keep to it."""
    return caller(request).project


class KeyAuth:
    """Authenticates keys from ``keys``, derives signing secrets from ``secret``, rate-limits."""

    def __init__(self, keys: KeyStore, secret: ServerSecret, limiter: RateLimiter | None = None) -> None:
        self.keys = keys
        self.secret = secret
        self.limiter = limiter or RateLimiter()

    @staticmethod
    def now() -> datetime:
        return datetime.now(timezone.utc)

    def authenticate(self, authorization: str | None) -> Key:
        """The active key the header carries; Problem(401) otherwise."""
        if not authorization or not authorization.strip():
            raise Problem(401, FIELD, REQUIRED, verbatim=True)
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() != "bearer":
            raise Problem(401, FIELD, f"must use the Bearer scheme, got {echoed(scheme, 20)!r}")
        token = token.strip()
        key_id = key_id_of(token)
        found = None if key_id is None else self.keys.find(key_id)
        if found is None or not token_matches(token, found[1]):
            raise Problem(401, FIELD, INVALID, verbatim=True)
        key = found[0]
        if not key.active:
            raise Problem(401, FIELD, f"key {key.id} was revoked; ask an admin of tenant {key.tenant!r} for a new one")
        return key

    def admit(self, key: Key, method: str, path: str) -> None:
        """Problem(403) when the key lacks the route's scope, or requires signatures and the route
        writes unsigned data; RateLimited when over its rate."""
        needed = required_scope(method, path)
        if needed not in key.scopes:
            raise Problem(
                403, FIELD, f"key {key.id} lacks the {needed!r} scope that {method} {echoed(path, 200)} needs"
            )
        if needed == "write" and key.require_signatures and path not in SIGNED_WRITES:
            raise Problem(
                403,
                FIELD,
                f"key {key.id} requires signatures (require_signatures, made with --require-signatures) and "
                f"{method} {echoed(path, 200)} writes data that carries none; send signed AEP events to "
                f"POST /events or /events/batch, or use a key of tenant {key.tenant!r} made without "
                "--require-signatures",
            )
        if key.rate is not None and key.burst is not None:
            wait = self.limiter.take(key.id, key.rate, key.burst)
            if wait:
                raise RateLimited(key, wait)

    def charge(self, request: Request, events: int) -> None:
        """Take ``events`` (a request's events or spans, counted before any is stored) from the
        caller's event bucket; nothing for a key without an event rate. Problem(413) when the
        request holds more than the key's ``event_burst`` (no wait would let it in); RateLimited
        (429) when the bucket lacks them now (nothing is taken then)."""
        key = caller(request)
        if key.event_rate is None or key.event_burst is None or events < 1:
            return
        if events > key.event_burst:
            raise Problem(
                413,
                None,
                f"the request holds {events} events; key {key.id} takes at most its event_burst of "
                f"{key.event_burst} in one request (event_rate {key.event_rate:g}/s): send smaller batches",
            )
        wait = self.limiter.take(key.id + EVENTS, key.event_rate, key.event_burst, events)
        if wait:
            raise RateLimited(key, wait, events)

    def check_event(self, request: Request, data: Any, event: Event, prefix: str) -> Event:
        """Verify a valid event's signature with the caller's signing secret (see the module); the
        event to store."""
        key = caller(request)
        field = prefix + "signature"
        signature = data.get("signature") if isinstance(data, dict) else None
        if signature is None:
            if key.require_signatures:
                raise Problem(401, field, f"is required: key {key.id} takes signed events only (HMAC-SHA256, v2)")
            return event
        legacy = key.legacy_signatures and not key.require_signatures  # v1 covers no payload: see the module
        problem = signature_problem(signature, allow_v1=legacy)
        if problem is not None:
            member, rule = problem
            raise Problem(401, f"{field}.{member}" if member else field, rule)
        inexact = inexact_integer(data)
        if inexact is not None:
            raise Problem(400, (prefix + inexact)[:256], _INEXACT)
        named = signature.get("key_id")
        if named is not None and named != key.id:
            raise Problem(401, field + ".key_id", f"names another key than the one sending it ({key.id})")
        secret = self.secret.signing_secret(key.id)
        if verify(data, secret, allow_v1=legacy):
            if signature.keys() <= _KEPT:
                return event
            return replace(event, signature={name: signature[name] for name in SIGNATURE_MEMBERS if name in signature})
        if not legacy and verify(data, secret, allow_v1=True):
            raise Problem(401, field, f"is a legacy canonical v1 signature; key {key.id} takes canonical v2 only")
        raise Problem(401, field, f"does not match the event: sign canonical v2 with the signing secret of {key.id}")


OnError = Callable[[Request, Exception], Awaitable[Response]]


class AuthMiddleware:
    """Authenticates, authorizes and rate-limits every HTTP request before it is routed;
    refusals, and a key store that fails (503), are answered by ``on_error`` (the app's one
    error shape, with a Problem's headers: a 429's ``Retry-After``)."""

    def __init__(self, app: ASGIApp, auth: KeyAuth, on_error: OnError) -> None:
        self.app = app
        self.auth = auth
        self.on_error = on_error

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        if request.url.path in PUBLIC:
            await self.app(scope, receive, send)
            return
        try:
            key = await run_in_threadpool(self.auth.authenticate, request.headers.get("authorization"))
            self.auth.admit(key, request.method, request.url.path)
        except (Problem, AfterActionError) as problem:
            response = await self.on_error(request, problem)
            if isinstance(problem, Problem) and problem.status == 401:
                response.headers["WWW-Authenticate"] = 'Bearer realm="afteraction"'
            await response(scope, receive, send)
            return
        scope.setdefault("state", {})["key"] = key
        await self.app(scope, receive, send)
