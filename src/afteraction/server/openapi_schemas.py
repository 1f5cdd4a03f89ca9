"""The schemas of the OpenAPI document (``server.openapi``): what requests and answers hold.

Each bound is read from the constant the code checks it with (``model._check``, ``Experience``,
``feedback``, ``reads``, ``Limits``), so the document cannot drift from the rules; where the rule has
no constant (a block's ``max_bytes``), ``tests/server/test_openapi_conformance.py`` holds the number to
the server: it accepts the bound and refuses one past it.
"""

from __future__ import annotations

from typing import Any

from afteraction.feedback import MAX_GIVEN
from afteraction.model import AGENT_ROLES, EVENT_TYPES, SPECVERSION
from afteraction.model._check import MAX_ID, MAX_ITEMS, MAX_NAME, MAX_TEXT
from afteraction.model.experience import Experience
from afteraction.model.scope import Scope, Status

__all__ = [
    "COMPONENTS",
    "END",
    "ID",
    "NAME",
    "SPACE",
    "STRING",
    "Schema",
    "closed",
    "lesson_import",
    "obj",
    "ref",
    "text",
]

Schema = dict[str, Any]

_CONTROL = r"\x00-\x1f\x7f"
#: White space as ``str.strip`` has it (``str.isspace``), spelled out: a regex engine's ``\s`` differs by engine
#: (ECMA-262's, which JSON Schema names, holds U+FEFF and not U+0085 or U+001C–U+001F; Python's the reverse).
SPACE = r"\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
#: Not blank, no control character (``server.common.path_id``, ``Event``'s ids).
#: The end of the text in both engines: Python's ``$`` also matches before a last ``\n`` (``a\n`` passed).
END = r"$(?!\n)"
_ID_PATTERN = rf"^[^{_CONTROL}]*[^{SPACE}{_CONTROL}][^{_CONTROL}]*{END}"
#: ``model._check.name``: not blank, no control character, no whitespace at either end.
_NAME_PATTERN = rf"^[^{SPACE}{_CONTROL}](?:[^{_CONTROL}]*[^{SPACE}{_CONTROL}])?{END}"

STRING: Schema = {"type": "string"}
ID: Schema = {"type": "string", "minLength": 1, "maxLength": MAX_ID, "pattern": _ID_PATTERN}
NAME: Schema = {"type": "string", "minLength": 1, "maxLength": MAX_NAME, "pattern": _NAME_PATTERN}
_TIME: Schema = {"type": "string", "format": "date-time", "description": "RFC 3339 with an offset (Z or ±hh:mm)"}
_INT: Schema = {"type": "integer"}
_COUNT: Schema = {"type": "integer", "minimum": 0}
_BOOL: Schema = {"type": "boolean"}


def ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


def text(limit: int = MAX_TEXT, *, blank: bool = False) -> Schema:
    """``model._check.text``: at most ``limit`` characters; not blank unless ``blank``."""
    found: Schema = {"type": "string", "maxLength": limit}
    return found if blank else {**found, "minLength": 1, "pattern": f"[^{SPACE}]"}


def name(limit: int) -> Schema:
    return {**NAME, "maxLength": limit}


def obj(required: tuple[str, ...], /, **properties: Schema) -> Schema:
    return {"type": "object", "required": list(required), "properties": properties}


def closed(required: tuple[str, ...], /, **properties: Schema) -> Schema:
    """An object whose other fields are refused (400 naming the field), not ignored."""
    return {**obj(required, **properties), "additionalProperties": False}


def _list(items: Schema, limit: int | None = MAX_ITEMS) -> Schema:
    return {"type": "array", "items": items} if limit is None else {"type": "array", "items": items, "maxItems": limit}


_STRINGS: Schema = {"type": "array", "items": STRING}
_ENV: Schema = {
    "type": "object",
    "maxProperties": MAX_ITEMS,
    "propertyNames": NAME,
    "additionalProperties": text(MAX_NAME * 5, blank=True),
}
_NULLABLE_NUMBER: Schema = {"type": ["number", "null"]}
_NULLABLE_INT: Schema = {"type": ["integer", "null"]}
_NULLABLE_STRING: Schema = {"type": ["string", "null"]}

_EVIDENCE = obj(
    ("id", "passed"),
    id=NAME,
    passed=_BOOL,
    method={"enum": ["check", "approval", "tool", "classifier"]},
    detail=text(blank=True),
    approver=NAME,
    required={"type": "boolean", "description": "false: a failing check does not fail the run (default true)"},
)

_SESSION = obj(
    ("session_id", "trace_id", "parent_session_id", "source", "started_at", "ended_at", "events"),
    session_id=STRING,
    trace_id=STRING,
    parent_session_id=_NULLABLE_STRING,
    source=_NULLABLE_STRING,
    started_at=STRING,
    ended_at=STRING,
    events=_INT,
)

_SCENARIO = {"task": text(), "environment": _ENV, "symptoms": _list(text()), "failure_signature": text(blank=True)}
_TRIED = {"attempt": _COUNT, "tool": NAME, "error_class": text(MAX_NAME), "args": {"type": "object"}}
_SOLUTION = {"tried": {"type": "array", "items": closed(("attempt", "tool", "error_class"), **_TRIED)}}
_SOLUTION.update(worked=text(blank=True), steps=_list(text()))
_SKILL = {
    "statement": text(4096),
    "authored_by": NAME,
    "applicable_when": _list(text()),
    "not_applicable_when": _list(text()),
}
_LESSON_REQUIRED = ("id", "task_id", "task", "lesson", "status", "confidence", "scope", "created_at")
_LESSON: dict[str, Schema] = {
    "id": name(MAX_ID),
    "task_id": name(MAX_ID),
    "task": text(),
    "lesson": text(),
    "status": {"enum": [status.value for status in Status]},
    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    "scope": ref("RecordScope"),
    "created_at": _TIME,
    "summary": text(blank=True),
    "checks": _list(text(MAX_NAME)),
    "supporting": _COUNT,
    "contradicting": _COUNT,
    "revision": {"type": "integer", "minimum": 1, "maximum": Experience.MAX_IMPORTED_REVISION},
    "updated_at": _TIME,
    "expires_at": _TIME,
    "source": NAME,
    "wordings": _list(text(Experience.WORDING_CHARS), Experience.MAX_WORDINGS),
    "outcome_keys": _list(text(MAX_ID), Experience.MAX_OUTCOME_KEYS),
    "status_reason": text(Experience.REASON_CHARS, blank=True),
}


def lesson_import() -> Schema:
    """A lesson as ``POST /experience/lessons`` takes it: a field at any depth that is none is refused."""
    found = closed(
        _LESSON_REQUIRED,
        **_LESSON,
        scenario=closed(("task",), **_SCENARIO),
        solution=closed((), **_SOLUTION),
        skill=closed(("statement", "authored_by"), **_SKILL),
    )
    found["description"] = "A lesson as exported; ids are unique within one request and per tenant"
    return found


def _lesson_answer(*extra: str, **more: Schema) -> Schema:
    """A stored lesson as an answer shows it (``Experience.to_dict``): read whatever its lists hold."""
    strings = {"type": "array", "items": STRING}
    properties: dict[str, Schema] = {
        **dict.fromkeys(("id", "task_id", "task", "lesson", "summary", "source", "status_reason"), STRING),
        **dict.fromkeys(("created_at", "updated_at", "expires_at"), STRING),
        **{part: {"type": "object"} for part in ("scenario", "solution", "skill")},
        **dict.fromkeys(("checks", "wordings", "outcome_keys"), strings),
        "status": _LESSON["status"],
        "confidence": _LESSON["confidence"],
        "scope": ref("RecordScope"),
        "supporting": _COUNT,
        "contradicting": _COUNT,
        "revision": {"type": "integer", "minimum": 1, "maximum": Experience.MAX_REVISION},
        **more,
    }
    return obj(("id", "task_id", "task", "lesson", "status", "confidence", "scope", "created_at", *extra), **properties)


_CALL = obj(
    ("tool",),
    tool=NAME,
    args={"type": "object"},
    result={},
    error=text(blank=True),
    call_id=NAME,
    at=_TIME,
)
_RUN = obj(
    ("id", "task", "scope", "started_at"),
    id=name(MAX_ID),
    task=text(),
    scope=ref("RecordScope"),
    started_at=_TIME,
    attempts={
        "type": "array",
        "items": obj(("index",), index=_COUNT, calls=_list(_CALL, None), error=text(blank=True)),
    },
    env=_ENV,
    ended_at=_TIME,
    state={"enum": ["running", "completed", "failed"]},
    error=text(blank=True),
    evidence=_list(ref("Evidence"), None),
    session_id=NAME,
    trace_id=NAME,
    agent=NAME,
    parent_id=NAME,
)

_KEY = obj(
    ("id", "tenant", "project", "name", "scopes", "created_at", "revoked_at"),
    id=STRING,
    tenant=STRING,
    project=_NULLABLE_STRING,
    name=_NULLABLE_STRING,
    scopes={"type": "array", "items": {"enum": ["read", "write", "admin"]}},
    rate=_NULLABLE_NUMBER,
    burst=_NULLABLE_INT,
    event_rate=_NULLABLE_NUMBER,
    event_burst=_NULLABLE_INT,
    legacy_signatures=_BOOL,
    require_signatures=_BOOL,
    created_at=STRING,
    revoked_at=_NULLABLE_STRING,
)

_EVENT_TIME = {
    **_TIME,
    "description": "RFC 3339 with an offset, in the years 1 to 9999 in UTC, and at most 24 hours ahead of the "
    "server's clock (later is refused: 400 naming time)",
}

COMPONENTS: Schema = {
    "schemas": {
        "Error": obj(
            ("error", "errors"),
            error={"type": "string", "description": "The first error as one line: 'field: message'"},
            accepted={"const": False, "description": "On the ingest routes (/events…) only"},
            errors={
                "type": "array",
                "minItems": 1,
                "items": obj(("field", "message"), field=_NULLABLE_STRING, message=STRING),
            },
        ),
        "Scope": {
            **closed(Scope.REQUIRED[1:], **dict.fromkeys(Scope.REQUIRED + Scope.OPTIONAL, NAME)),
            "description": "tenant: the key's own, if given (another is 403)",
        },
        "RecordScope": {
            **closed(Scope.REQUIRED, **dict.fromkeys(Scope.REQUIRED + Scope.OPTIONAL, NAME)),
            "description": "A record's scope: tenant (the key's own; another is 403), app and project",
        },
        "Event": obj(
            ("specversion", "id", "time", "source", "type", "session_id", "trace_id", "payload"),
            specversion={"const": SPECVERSION},
            id=ID,
            time=_EVENT_TIME,
            source={**ID, "maxLength": 1024},
            type={"enum": list(EVENT_TYPES)},
            session_id=ID,
            trace_id=ID,
            parent_session_id=STRING,
            agent_role={"enum": list(AGENT_ROLES)},
            subject=STRING,
            causation_id=STRING,
            idempotency_key=STRING,
            schema=STRING,
            content_type=STRING,
            tenant=STRING,
            labels={"type": "object", "additionalProperties": STRING},
            extensions={"type": "object"},
            signature={
                "type": "object",
                "description": "Verified with the key's signing secret (docs/server-auth.md): a bad one is 401; a "
                "signed event holding an integer beyond 2^53 is refused (400 naming it): send it as a string",
            },
            payload={"type": "object", "properties": {"$schema": STRING}},
        ),
        "Evidence": _EVIDENCE,
        "Run": _RUN,
        "Lesson": _lesson_answer(),
        "ListedLesson": _lesson_answer(
            "eligible", "reason", eligible=_BOOL, reason={**_NULLABLE_STRING, "description": "why not eligible"}
        ),
        "Hit": obj(
            ("id", "task_id", "score", "relevance", "factors", "experience"),
            id=STRING,
            task_id=STRING,
            score={"type": "number"},
            relevance={"type": "number"},
            factors={"type": "object", "additionalProperties": {"type": "number"}},
            experience=ref("Lesson"),
        ),
        "Session": _SESSION,
        "SessionTree": {
            **_SESSION,
            "required": [*_SESSION["required"], "children"],
            "properties": {**_SESSION["properties"], "children": {"type": "array", "items": ref("SessionTree")}},
        },
        "Key": _KEY,
        "Learned": obj(
            ("lesson",),
            lesson={"anyOf": [ref("Lesson"), {"type": "null"}]},
            judged_before={"const": True, "description": "the run was judged before: its lesson, this verdict unused"},
        ),
    },
}

#: Ids of the lessons a run was given (``POST /experience/runs``, a verdict).
GIVEN: Schema = {
    **_list(text(MAX_ID), MAX_GIVEN),
    "description": (
        "Ids of the lessons the run was given (a block's lessons): each whose fix the run applied "
        "(it called every tool of the lesson's worked steps) gets its verdict, once per run"
    ),
}
