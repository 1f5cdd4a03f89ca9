"""The OpenAPI 3.1 description of the service, served at ``GET /openapi.json``.

It is data, kept beside the routes, and a client generator may take it literally: each status of
each operation names the media types the server answers with and the shape of each (an export's
JSON array, CSV or NDJSON; ``/metrics``' Prometheus text; OTLP's protobuf when the request was
protobuf), and each parameter and body states the rules the server refuses a request for, with the
bounds read from the code's constants (``openapi_schemas``) and from the app's ``Limits``.
``tests/server/test_openapi.py`` checks that it names exactly the routes the app serves;
``tests/server/test_openapi_conformance.py`` holds the server to it (answers validate against it;
requests generated from it are refused only for a rule it states). A new route is added here in the same change.

The document describes the app that serves it: without API keys (``serve --dev``) it lists no
``/admin`` route, no bearer security and no 401.
"""

from __future__ import annotations

import copy
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from afteraction.server.common import Limits
from afteraction.server.metrics import PROMETHEUS
from afteraction.server.openapi_experience import EXPERIENCE_OPERATIONS
from afteraction.server.openapi_parts import (
    ADMIN_OPERATIONS,
    BATCH,
    BATCH_REFUSED,
    DELETED_COUNT,
    EXPORT,
    FORMAT,
    INGESTED,
    JSON,
    LIMITS,
    OTLP_OK,
    PAGE,
    PROTOBUF_ERROR,
    PROTOBUF_OK,
    PUBLIC,
    READ,
    TYPES,
    answers,
    done,
    json_content,
    path_param,
    query_param,
    request_body,
)
from afteraction.server.openapi_schemas import COMPONENTS, STRING, Schema
from afteraction.server.openapi_schemas import obj as _object
from afteraction.server.openapi_schemas import ref as _ref
from afteraction.server.otlp import PROTOBUF, SPANS_PER_REQUEST
from afteraction.server.reads import MAX_QUERY

__all__ = ["OPERATIONS", "document", "routes"]

#: (path, method) → the operation. The source of truth the tests hold the app to.
OPERATIONS: dict[tuple[str, str], Schema] = {
    ("/events", "post"): {
        "summary": "Ingest one AEP event (202 new, 200 duplicate), as the AEP reference server answers",
        "requestBody": request_body(_ref("Event")),
        "responses": answers({200: done(INGESTED), 202: done(INGESTED)}, 400, 401, 403, 413, 415, 429),
    },
    ("/events/batch", "post"): {
        "summary": "Ingest a JSON array or NDJSON of AEP events, answered per event",
        "requestBody": request_body(
            {"type": "array", "minItems": 1, "maxItems": LIMITS.batch_events, "items": _ref("Event")},
            media=(JSON, "application/x-ndjson"),
        ),
        "responses": {
            **answers({200: done(BATCH), 202: done(BATCH)}, 413, 415, 429),
            **dict.fromkeys(("400", "401", "403"), BATCH_REFUSED),
        },
    },
    ("/v1/traces", "post"): {
        "summary": "OTLP/HTTP trace export (GenAI spans become events and runs); gzip accepted. A protobuf request "
        "is answered in protobuf, its refusals too",
        "requestBody": request_body(
            _object(
                (),
                resourceSpans={
                    "type": ["array", "null"],
                    "items": {"type": "object"},
                    "description": f"At most {SPANS_PER_REQUEST} spans in all (more is 413)",
                },
            ),
            media=(JSON, PROTOBUF),
        ),
        "responses": answers(
            {200: {"description": "done", "content": {**json_content(OTLP_OK), **PROTOBUF_OK}}},
            *(400, 401, 403, 413, 415, 429),
            also=dict.fromkeys((400, 413, 415, 429), PROTOBUF_ERROR),
        ),
    },
    ("/sessions", "get"): {
        "summary": "The tenant's sessions, newest first, in cursor pages",
        "parameters": PAGE,
        "responses": answers(
            {
                200: done(
                    _object(
                        ("sessions", "next_cursor"),
                        sessions={"type": "array", "items": _ref("Session")},
                        next_cursor={"type": ["string", "null"]},
                    )
                )
            },
            *READ,
        ),
    },
    ("/sessions/{session_id}", "delete"): {
        "summary": "Delete a session of the tenant with all its events (its children stay); 0 when there is none",
        "parameters": [path_param("session_id")],
        "responses": answers({200: DELETED_COUNT}, 400, 401, 403, 404, 429, 501),
    },
    ("/sessions/{session_id}/events", "get"): {
        "summary": "A session's events by parsed instant, in cursor pages; filtered by type and text",
        "parameters": [
            path_param("session_id"),
            *PAGE,
            TYPES,
            query_param(
                "q",
                {"type": "string", "minLength": 1, "maxLength": MAX_QUERY},
                about="Keeps events with a string or number holding the text (case-folded)",
            ),
        ],
        "responses": answers(
            {
                200: done(
                    _object(
                        ("session", "events", "next_cursor"),
                        session=_ref("Session"),
                        events={"type": "array", "items": _ref("Event")},
                        next_cursor={"type": ["string", "null"]},
                    )
                )
            },
            *READ,
        ),
    },
    ("/sessions/{session_id}/tree", "get"): {
        "summary": "A session and its descendants (cycle-safe)",
        "parameters": [path_param("session_id")],
        "responses": answers(
            {200: done(_object(("tree", "truncated"), tree=_ref("SessionTree"), truncated={"type": "boolean"}))},
            *READ,
        ),
    },
    ("/sessions/{session_id}/export", "get"): {
        "summary": "A session's events, streamed as JSON, NDJSON or CSV",
        "parameters": [path_param("session_id"), FORMAT, TYPES],
        "responses": answers({200: EXPORT}, *READ),
    },
    ("/export", "get"): {
        "summary": "The tenant's events with from ≤ instant < to, streamed as JSON, NDJSON or CSV",
        "parameters": [
            FORMAT,
            query_param("from", {"type": "string", "format": "date-time"}, about="RFC 3339 with an offset"),
            query_param(
                "to",
                {"type": "string", "format": "date-time"},
                about="RFC 3339 with an offset; must be later than from (else 400 to)",
            ),
            TYPES,
        ],
        "responses": answers({200: EXPORT}, *READ),
    },
    ("/workflows/{trace_id}", "get"): {
        "summary": "The sessions of a trace as a tree (cycle-safe)",
        "parameters": [path_param("trace_id")],
        "responses": answers(
            {
                200: done(
                    _object(
                        ("trace_id", "sessions", "truncated"),
                        trace_id=STRING,
                        sessions={"type": "array", "items": _ref("SessionTree")},
                        truncated={"type": "boolean"},
                    )
                )
            },
            *READ,
        ),
    },
    ("/metrics", "get"): {
        "summary": "The caller's tenant's counts: JSON, or Prometheus text (Accept or ?format=prometheus)",
        "parameters": [query_param("format", {"enum": ["json", "prometheus"]})],
        "responses": answers(
            {
                200: {
                    "description": "done",
                    "content": {
                        **json_content(
                            _object(
                                ("tenant", "replica", "stored"),
                                tenant=STRING,
                                replica={"type": "object"},
                                stored={"type": "object"},
                            )
                        ),
                        PROMETHEUS.split(";", 1)[0]: {"schema": {"type": "string", "description": PROMETHEUS}},
                    },
                }
            },
            *(400, 401, 403, 429),
        ),
    },
    **EXPERIENCE_OPERATIONS,
    **ADMIN_OPERATIONS,
    ("/health", "get"): {
        "summary": "The process is up",
        "responses": answers({200: done(_object(("status",), status={"const": "ok"}))}),
        "security": PUBLIC,
    },
    ("/ready", "get"): {
        "summary": "The store answers",
        "responses": answers({200: done(_object(("status",), status={"const": "ready"}))}, 503),
        "security": PUBLIC,
    },
    ("/openapi.json", "get"): {
        "summary": "This document",
        "responses": answers({200: done(_object(("openapi", "info", "paths"), openapi=STRING))}),
        "security": PUBLIC,
    },
}


_KEYED_ONLY = ("/admin",)
_ABOUT = (
    "Verified experience for AI agents. Every refusal is a JSON Error naming the field and the rule. An integer is "
    "written as one, without a fraction or an exponent (5, not 5.0)."
)


def document(version: str, *, keys: bool = True, limits: Limits = LIMITS) -> Schema:
    """The document of an app with API keys, or without (``keys`` False: no ``/admin`` routes, no security, no 401),
    stating the bounds of the app's ``limits``."""
    paths: dict[str, dict[str, Schema]] = {}
    for (path, method), operation in OPERATIONS.items():
        if not keys:
            if path.startswith(_KEYED_ONLY):
                continue
            operation = {name: value for name, value in operation.items() if name != "security"}
            operation["responses"] = {
                status: answer for status, answer in operation["responses"].items() if status != "401"
            }
        paths.setdefault(path, {})[method] = operation
    found: Schema = {
        "openapi": "3.1.0",
        "info": {"title": "afteraction", "version": version, "description": _ABOUT},
        "paths": _limited(paths, limits),
        "components": COMPONENTS,
    }
    if keys:
        found["components"] = {**COMPONENTS, "securitySchemes": {"apiKey": {"type": "http", "scheme": "bearer"}}}
        found["security"] = [{"apiKey": []}]
    return found


def _limited(paths: dict[str, dict[str, Schema]], limits: Limits) -> dict[str, dict[str, Schema]]:
    """``paths`` bounded by ``limits``: every list's ``limit`` and a batch's events (``OPERATIONS`` states the bounds
    of ``Limits()``, what ``serve`` runs with; ``create_app(limits=…)`` may set others)."""
    if limits == LIMITS:
        return paths
    found = copy.deepcopy(paths)
    for operations in found.values():
        for operation in operations.values():
            for parameter in operation.get("parameters", ()):
                if parameter["in"] == "query" and parameter["name"] == "limit":
                    parameter["schema"]["maximum"] = limits.page
    for content in found["/events/batch"]["post"]["requestBody"]["content"].values():
        content["schema"]["maxItems"] = limits.batch_events
    return found


def serves_keys(app: Any) -> bool:
    """Whether ``app`` (the Starlette app answering) runs with API keys: it serves the ``/admin`` routes then."""
    return any(str(getattr(route, "path", "")).startswith(_KEYED_ONLY) for route in getattr(app, "routes", ()))


def routes(version: str, limits: Limits = LIMITS) -> list[Route]:
    built: dict[bool, JSONResponse] = {}

    async def openapi(request: Request) -> JSONResponse:
        keys = serves_keys(request.app)
        if keys not in built:
            built[keys] = JSONResponse(document(version, keys=keys, limits=limits))
        return built[keys]

    return [Route("/openapi.json", openapi, methods=["GET"])]
