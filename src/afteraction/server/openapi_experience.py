"""The experience routes' part of the OpenAPI document (``openapi.OPERATIONS``): search, the block,
lessons and what people and runs say of them, and verdicts on sessions."""

from __future__ import annotations

from afteraction.core.render import MIN_BYTES, MIN_TOKENS
from afteraction.model.experience import Experience
from afteraction.model.scope import Status
from afteraction.searching import MAX_K
from afteraction.server.openapi_parts import (
    ENV,
    LEARNED,
    LESSON,
    LIMITS,
    READ,
    SCOPE,
    SCOPE_QUERY,
    WRITE,
    answers,
    done,
    integer,
    path_param,
    query_param,
    request_body,
)
from afteraction.server.openapi_schemas import GIVEN, ID, NAME, STRING, Schema, closed, lesson_import, text
from afteraction.server.openapi_schemas import obj as _object
from afteraction.server.openapi_schemas import ref as _ref
from afteraction.store.base import MAX_PAGE

__all__ = ["EXPERIENCE_OPERATIONS"]

#: (path, method) → the operation, as ``openapi.OPERATIONS`` holds them.
EXPERIENCE_OPERATIONS: dict[tuple[str, str], Schema] = {
    ("/sessions/{session_id}/verdict", "post"): {
        "summary": "Judge the run assembled from a session's events with the host's evidence; learn it",
        "parameters": [path_param("session_id")],
        "requestBody": request_body(
            closed(
                ("scope", "evidence"),
                scope=SCOPE,
                evidence={"type": "array", "minItems": 1, "items": _ref("Evidence")},
                given=GIVEN,
            )
        ),
        "responses": answers(LEARNED, *WRITE),
    },
    ("/experience/search", "post"): {
        "summary": "The best eligible lessons for a query, in the caller's tenant",
        "requestBody": request_body(
            closed(("query", "scope"), query=STRING, scope=SCOPE, k=integer(1, MAX_K), env=ENV)
        ),
        "responses": answers({200: done(_object(("hits",), hits={"type": "array", "items": _ref("Hit")}))}, *WRITE),
    },
    ("/experience/block", "post"): {
        "summary": "The reference block to inject for a task (empty when no lesson qualifies)",
        "requestBody": request_body(
            closed(
                ("task", "scope"),
                task=STRING,
                scope=SCOPE,
                env=ENV,
                layout={"enum": ["compact", "verbose"]},
                max_records=integer(1),
                max_bytes=integer(MIN_BYTES),
                max_tokens=integer(MIN_TOKENS),
            )
        ),
        "responses": answers(
            {200: done(_object(("block", "lessons"), block=STRING, lessons={"type": "array", "items": STRING}))},
            *WRITE,
        ),
    },
    ("/experience/lessons", "get"): {
        "summary": "Stored lessons the scope sees, newest first, each with whether it may be injected",
        "parameters": [
            *SCOPE_QUERY,
            query_param("status", {"enum": [status.value for status in Status]}),
            query_param("limit", integer(1, LIMITS.page)),
            query_param("offset", integer(0, MAX_PAGE)),
        ],
        "responses": answers(
            {200: done(_object(("lessons",), lessons={"type": "array", "items": _ref("ListedLesson")}))}, *READ
        ),
    },
    ("/experience/lessons", "post"): {
        "summary": "Import lessons as they are (idempotent by id)",
        "requestBody": request_body(
            closed(("lessons",), lessons={"type": "array", "minItems": 1, "items": lesson_import()})
        ),
        "responses": answers(
            {
                201: done(_object(("stored", "received"), stored={"type": "integer"}, received={"type": "integer"})),
                200: done(_object(("stored", "received"), stored={"const": 0}, received={"type": "integer"})),
            },
            *WRITE,
        ),
    },
    ("/experience/lessons/{lesson_id}", "get"): {
        "summary": "One lesson the scope sees",
        "parameters": [path_param("lesson_id"), *SCOPE_QUERY],
        "responses": answers({200: LESSON}, *READ),
    },
    ("/experience/lessons/{lesson_id}", "delete"): {
        "summary": "Forget a lesson the scope sees: deleted with its search rows and vectors; false when none",
        "parameters": [path_param("lesson_id"), *SCOPE_QUERY],
        "responses": answers(
            {200: done(_object(("deleted",), deleted={"type": "boolean"}))}, 400, 401, 403, 404, 429, 501
        ),
    },
    ("/experience/users/{user}/lessons", "delete"): {
        "summary": "Erase a user: every lesson stored for them in the tenant, any app or project (a key bound to a "
        "project is refused)",
        "parameters": [path_param("user", NAME), query_param("tenant", NAME, about="The key's own tenant, if given")],
        "responses": answers(
            {
                200: done(
                    _object(("deleted", "ids"), deleted={"type": "integer"}, ids={"type": "array", "items": STRING})
                )
            },
            *(400, 401, 403, 404, 429, 501),
        ),
    },
    ("/experience/lessons/{lesson_id}/outcome", "post"): {
        "summary": "One more reuse outcome for a lesson: confidence and status follow",
        "parameters": [path_param("lesson_id")],
        "requestBody": request_body(
            closed(
                ("scope", "success"),
                scope=SCOPE,
                success={"type": "boolean"},
                key={
                    **NAME,
                    "maxLength": ID["maxLength"],
                    "description": "The outcome's own id (e.g. the run's): counted once",
                },
                task={"type": "string", "description": "A success's request, in its words: the lesson is found by it"},
            )
        ),
        "responses": answers({200: LESSON}, 409, *WRITE),
    },
    ("/experience/lessons/{lesson_id}/status", "post"): {
        "summary": "A person's decision: revoke, supersede or mark a lesson stale (never injected), or reinstate it",
        "parameters": [path_param("lesson_id")],
        "requestBody": request_body(
            closed(
                ("scope", "status"),
                scope=SCOPE,
                status={"type": "string", "enum": ["revoked", "superseded", "stale", "validated"]},
                reason={**text(Experience.REASON_CHARS, blank=True), "description": "Why: kept with the lesson"},
            )
        ),
        "responses": answers({200: LESSON}, 409, *WRITE),
    },
    ("/experience/runs", "post"): {
        "summary": "Learn a finished run that carries the host's checks",
        "requestBody": request_body(closed(("run",), run=_ref("Run"), given=GIVEN)),
        "responses": answers(LEARNED, *WRITE),
    },
}
