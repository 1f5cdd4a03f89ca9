"""The OpenAPI 3.1 description of the service, served at ``GET /openapi.json``.

It is data, kept beside the routes: ``tests/server/test_openapi.py`` checks that it names
exactly the routes the app serves with API keys on (path and method; without keys the
``/admin`` routes do not exist), and a schemathesis run fuzzes the app
from it and finds no 5xx. A new route is added here in the same change.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from afteraction.feedback import MAX_GIVEN

__all__ = ["OPERATIONS", "document", "routes"]

Schema = dict[str, Any]

_STRING: Schema = {"type": "string"}
_ID: Schema = {"type": "string", "minLength": 1, "maxLength": 256}
_ERROR: Schema = {"$ref": "#/components/schemas/Error"}
_SCOPE: Schema = {"$ref": "#/components/schemas/Scope"}


def _json(schema: Schema) -> Schema:
    return {"content": {"application/json": {"schema": schema}}}


_REFUSAL = "refused; the body names the field and the rule"
_REFUSED = {501: "this deployment does not delete (its database role lacks DELETE); the body names the GRANT"}


def _answers(*statuses: int, ok: Schema | None = None) -> Schema:
    out: Schema = {}
    for status in statuses:
        if status < 300:
            out[str(status)] = {"description": "done", **_json(ok or {"type": "object"})}
        else:
            out[str(status)] = {"description": _REFUSED.get(status, _REFUSAL), **_json(_ERROR)}
    return out


def _body(schema: Schema, *, media: tuple[str, ...] = ("application/json",)) -> Schema:
    return {"required": True, "content": {m: {"schema": schema} for m in media}}


def _query(name: str, schema: Schema, *, required: bool = False) -> Schema:
    return {"name": name, "in": "query", "required": required, "schema": schema}


def _path(name: str) -> Schema:
    about = "An id as stored; a '/' in it is sent percent-encoded (%2F)"
    return {"name": name, "in": "path", "required": True, "schema": _ID, "description": about}


def _object(required: tuple[str, ...], **properties: Schema) -> Schema:
    return {"type": "object", "required": list(required), "properties": properties}


def _closed(required: tuple[str, ...], **properties: Schema) -> Schema:
    """A request body whose other fields are refused (400 naming the field), not ignored."""
    return {**_object(required, **properties), "additionalProperties": False}


_PAGE = [_query("limit", {"type": "integer", "minimum": 1, "maximum": 500}), _query("cursor", _STRING)]
_SCOPE_QUERY = [
    _query("tenant", {"type": "string", "description": "The key's own tenant, if given (another is 403)"}),
    _query("app", _STRING, required=True),
    _query("project", _STRING, required=True),
    *(_query(part, _STRING) for part in ("team", "agent", "user")),
]
_GIVEN = {
    "type": "array",
    "maxItems": MAX_GIVEN,
    "items": _STRING,
    "description": (
        "Ids of the lessons the run was given (a block's lessons): each whose fix the run applied "
        "(it called every tool of the lesson's worked steps) gets its verdict, once per run"
    ),
}
_READ = (400, 401, 403, 404, 429)
_WRITE = (400, 401, 403, 404, 413, 415, 429)
_PUBLIC: list[Schema] = []  # no API key needed

#: (path, method) → the operation. The source of truth the test holds the app to.
OPERATIONS: dict[tuple[str, str], Schema] = {
    ("/events", "post"): {
        "summary": "Ingest one AEP event (202 new, 200 duplicate), as the AEP reference server answers",
        "requestBody": _body({"$ref": "#/components/schemas/Event"}),
        "responses": _answers(200, 202, 400, 401, 403, 413, 415, 429),
    },
    ("/events/batch", "post"): {
        "summary": "Ingest a JSON array or NDJSON of AEP events, answered per event",
        "requestBody": _body(
            {"type": "array", "items": {"$ref": "#/components/schemas/Event"}},
            media=("application/json", "application/x-ndjson"),
        ),
        "responses": _answers(200, 202, 400, 401, 403, 413, 415, 429),
    },
    ("/v1/traces", "post"): {
        "summary": "OTLP/HTTP trace export (GenAI spans become events and runs); gzip accepted",
        "requestBody": _body(
            _object((), resourceSpans={"type": "array", "items": {"type": "object"}}),
            media=("application/json", "application/x-protobuf"),
        ),
        "responses": _answers(200, 400, 401, 403, 413, 415, 429),
    },
    ("/sessions", "get"): {
        "summary": "The tenant's sessions, newest first, in cursor pages",
        "parameters": _PAGE,
        "responses": _answers(200, *_READ),
    },
    ("/sessions/{session_id}", "delete"): {
        "summary": "Delete a session of the tenant with all its events (its children stay); 0 when there is none",
        "parameters": [_path("session_id")],
        "responses": _answers(200, 400, 401, 403, 429, 501, ok=_object(("deleted",), deleted={"type": "integer"})),
    },
    ("/sessions/{session_id}/events", "get"): {
        "summary": "A session's events by parsed instant, in cursor pages; filtered by type and text",
        "parameters": [
            _path("session_id"),
            *_PAGE,
            _query("type", {"type": "array", "items": _STRING}),
            _query("q", _STRING),
        ],
        "responses": _answers(200, *_READ),
    },
    ("/sessions/{session_id}/tree", "get"): {
        "summary": "A session and its descendants (cycle-safe)",
        "parameters": [_path("session_id")],
        "responses": _answers(200, *_READ),
    },
    ("/sessions/{session_id}/export", "get"): {
        "summary": "A session's events, streamed as JSON, NDJSON or CSV",
        "parameters": [_path("session_id"), _query("format", {"enum": ["json", "ndjson", "csv"]})],
        "responses": _answers(200, *_READ),
    },
    ("/export", "get"): {
        "summary": "The tenant's events in a time range, streamed as JSON, NDJSON or CSV",
        "parameters": [
            _query("format", {"enum": ["json", "ndjson", "csv"]}),
            _query("from", {"type": "string", "format": "date-time"}),
            _query("to", {"type": "string", "format": "date-time"}),
        ],
        "responses": _answers(200, *_READ),
    },
    ("/workflows/{trace_id}", "get"): {
        "summary": "The sessions of a trace as a tree (cycle-safe)",
        "parameters": [_path("trace_id")],
        "responses": _answers(200, *_READ),
    },
    ("/metrics", "get"): {
        "summary": "The caller's tenant's counts: JSON, or Prometheus text (Accept or ?format=prometheus)",
        "parameters": [_query("format", {"enum": ["json", "prometheus"]})],
        "responses": _answers(200, 400, 401, 403, 429),
    },
    ("/sessions/{session_id}/verdict", "post"): {
        "summary": "Judge the run assembled from a session's events with the host's evidence; learn it",
        "parameters": [_path("session_id")],
        "requestBody": _body(
            _closed(
                ("scope", "evidence"),
                scope=_SCOPE,
                evidence={"type": "array", "items": {"type": "object"}},
                given=_GIVEN,
            )
        ),
        "responses": _answers(200, 201, *_WRITE),
    },
    ("/experience/search", "post"): {
        "summary": "The best eligible lessons for a query, in the caller's tenant",
        "requestBody": _body(
            _closed(
                ("query", "scope"),
                query=_STRING,
                scope=_SCOPE,
                k={"type": "integer", "minimum": 1, "maximum": 100},
                env={"type": "object", "additionalProperties": _STRING},
            )
        ),
        "responses": _answers(200, *_WRITE),
    },
    ("/experience/block", "post"): {
        "summary": "The reference block to inject for a task (empty when no lesson qualifies)",
        "requestBody": _body(
            _closed(
                ("task", "scope"),
                task=_STRING,
                scope=_SCOPE,
                env={"type": "object", "additionalProperties": _STRING},
                layout={"enum": ["compact", "verbose"]},
                max_records={"type": "integer"},
                max_bytes={"type": "integer"},
                max_tokens={"type": "integer"},
            )
        ),
        "responses": _answers(200, *_WRITE),
    },
    ("/experience/lessons", "get"): {
        "summary": "Stored lessons the scope sees, newest first, each with whether it may be injected",
        "parameters": [
            *_SCOPE_QUERY,
            _query("status", _STRING),
            _query("limit", {"type": "integer"}),
            _query("offset", {"type": "integer"}),
        ],
        "responses": _answers(200, *_READ),
    },
    ("/experience/lessons", "post"): {
        "summary": "Import lessons as they are (idempotent by id)",
        "requestBody": _body(_closed(("lessons",), lessons={"type": "array", "items": {"type": "object"}})),
        "responses": _answers(200, 201, *_WRITE),
    },
    ("/experience/lessons/{lesson_id}", "get"): {
        "summary": "One lesson the scope sees",
        "parameters": [_path("lesson_id"), *_SCOPE_QUERY],
        "responses": _answers(200, *_READ),
    },
    ("/experience/lessons/{lesson_id}", "delete"): {
        "summary": "Forget a lesson the scope sees: deleted with its search rows and vectors; false when none",
        "parameters": [_path("lesson_id"), *_SCOPE_QUERY],
        "responses": _answers(200, 400, 401, 403, 429, 501, ok=_object(("deleted",), deleted={"type": "boolean"})),
    },
    ("/experience/users/{user}/lessons", "delete"): {
        "summary": "Erase a user: every lesson stored for them in the tenant, any app or project (a key bound to a "
        "project is refused)",
        "parameters": [_path("user"), _query("tenant", _STRING)],
        "responses": _answers(
            200,
            400,
            401,
            403,
            429,
            501,
            ok=_object(("deleted", "ids"), deleted={"type": "integer"}, ids={"type": "array", "items": _STRING}),
        ),
    },
    ("/experience/lessons/{lesson_id}/outcome", "post"): {
        "summary": "One more reuse outcome for a lesson: confidence and status follow",
        "parameters": [_path("lesson_id")],
        "requestBody": _body(
            _closed(
                ("scope", "success"),
                scope=_SCOPE,
                success={"type": "boolean"},
                key={"type": "string", "description": "The outcome's own id (e.g. the run's): counted once"},
                task={"type": "string", "description": "A success's request, in its words: the lesson is found by it"},
            )
        ),
        "responses": _answers(200, 409, *_WRITE),
    },
    ("/experience/lessons/{lesson_id}/status", "post"): {
        "summary": "A person's decision: revoke, supersede or mark a lesson stale (never injected), or reinstate it",
        "parameters": [_path("lesson_id")],
        "requestBody": _body(
            _closed(
                ("scope", "status"),
                scope=_SCOPE,
                status={"type": "string", "enum": ["revoked", "superseded", "stale", "validated"]},
                reason={"type": "string", "maxLength": 500, "description": "Why: kept with the lesson"},
            )
        ),
        "responses": _answers(200, 409, *_WRITE),
    },
    ("/experience/runs", "post"): {
        "summary": "Learn a finished run that carries the host's checks",
        "requestBody": _body(_closed(("run",), run={"type": "object"}, given=_GIVEN)),
        "responses": _answers(200, 201, *_WRITE),
    },
    ("/admin/keys", "post"): {
        "summary": "Create an API key in the admin key's tenant; the secret is in this answer only",
        "requestBody": _body(
            _closed(
                ("scopes",),
                scopes={
                    "oneOf": [
                        {"type": "array", "items": {"enum": ["read", "write", "admin"]}},
                        {"type": "string", "description": "Comma-separated, as the command line takes them"},
                    ]
                },
                tenant={"type": "string", "description": "The admin key's own tenant, if given (another is 403)"},
                project=_STRING,
                name=_STRING,
                rate={"type": "number", "description": "Requests per second (per replica); none: no limit"},
                burst={"type": "integer", "description": "Requests at once (default: a second of rate, at least 1)"},
                event_rate={
                    "type": "number",
                    "description": "Events and spans ingested per second (per replica); none: no limit",
                },
                event_burst={
                    "type": "integer",
                    "description": "Events at once, and the most in one request (default: 10000, or a second "
                    "of event_rate when more)",
                },
                legacy_signatures={"type": "boolean"},
                require_signatures={"type": "boolean"},
            )
        ),
        "responses": _answers(201, 400, 401, 403, 413, 415, 429),
    },
    ("/admin/keys", "get"): {
        "summary": "The admin key's tenant's keys (never their secrets)",
        "responses": _answers(200, 401, 403, 429),
    },
    ("/admin/keys/{key_id}", "delete"): {
        "summary": "Revoke a key of the admin key's tenant: it reads nothing from then on",
        "parameters": [_path("key_id")],
        "responses": _answers(200, 400, 401, 403, 404, 429),
    },
    ("/health", "get"): {"summary": "The process is up", "responses": _answers(200), "security": _PUBLIC},
    ("/ready", "get"): {"summary": "The store answers", "responses": _answers(200, 503), "security": _PUBLIC},
    ("/openapi.json", "get"): {"summary": "This document", "responses": _answers(200), "security": _PUBLIC},
}

_COMPONENTS: Schema = {
    "schemas": {
        "Error": _object(
            ("errors",),
            error={"type": "string", "description": "The first error as one line: 'field: message'"},
            accepted={"type": "boolean"},
            errors={
                "type": "array",
                "items": _object(("field", "message"), field={"type": ["string", "null"]}, message=_STRING),
            },
        ),
        "Scope": _object(
            ("app", "project"), **dict.fromkeys(("tenant", "app", "project", "team", "agent", "user"), _STRING)
        ),
        "Event": _object(
            ("specversion", "id", "time", "source", "type", "session_id", "trace_id", "payload"),
            specversion={"const": "0.2.0"},
            id=_ID,
            time={"type": "string", "format": "date-time"},
            source=_STRING,
            type=_STRING,
            session_id=_ID,
            trace_id=_ID,
            parent_session_id=_STRING,
            causation_id=_STRING,
            payload={"type": "object"},
        ),
    },
    "securitySchemes": {"apiKey": {"type": "http", "scheme": "bearer"}},
}


def document(version: str) -> Schema:
    paths: dict[str, dict[str, Schema]] = {}
    for (path, method), operation in OPERATIONS.items():
        paths.setdefault(path, {})[method] = operation
    return {
        "openapi": "3.1.0",
        "info": {"title": "afteraction", "version": version},
        "paths": paths,
        "components": _COMPONENTS,
        "security": [{"apiKey": []}],
    }


def routes(version: str) -> list[Route]:
    spec = document(version)

    async def openapi(request: Request) -> JSONResponse:
        return JSONResponse(spec)

    return [Route("/openapi.json", openapi, methods=["GET"])]
