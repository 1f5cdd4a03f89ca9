"""The pieces the OpenAPI document's operations (``server.openapi``) are built of: parameters, answers, bodies."""

from __future__ import annotations

from afteraction.model import EVENT_TYPES
from afteraction.server.common import Limits
from afteraction.server.export import FORMATS
from afteraction.server.openapi_schemas import END, ID, NAME, SPACE, STRING, Schema, closed
from afteraction.server.openapi_schemas import obj as _object
from afteraction.server.openapi_schemas import ref as _ref
from afteraction.server.otlp import PROTOBUF
from afteraction.store.keys import MAX_BURST, MAX_RATE, SCOPES

LIMITS = Limits()  # what ``serve`` runs with
ERROR: Schema = _ref("Error")
SCOPE: Schema = _ref("Scope")
JSON = "application/json"
MEDIA = {format: media.split(";", 1)[0] for format, media in FORMATS.items()}


def json_content(schema: Schema) -> Schema:
    return {JSON: {"schema": schema}}


REFUSAL = "refused; the body names the field and the rule"
REFUSED = {
    401: "no API key, or one that is unknown or revoked",
    404: "no such thing (or no such route: an id is sent percent-encoded)",
    501: "this deployment does not delete (its database role lacks DELETE); the body names the GRANT",
}


def done(schema: Schema, description: str = "done") -> Schema:
    return {"description": description, "content": json_content(schema)}


def answers(ok: dict[int, Schema], *refusals: int, also: dict[int, Schema] | None = None) -> Schema:
    """The answers of an operation: ``ok`` by status, then each refusal as an Error (``also``: one more media type)."""
    out: Schema = {str(status): answer for status, answer in ok.items()}
    for status in refusals:
        content = {**json_content(ERROR), **(also or {}).get(status, {})}
        out[str(status)] = {"description": REFUSED.get(status, REFUSAL), "content": content}
    return out


def request_body(schema: Schema, *, media: tuple[str, ...] = (JSON,)) -> Schema:
    return {"required": True, "content": {m: {"schema": schema} for m in media}}


def query_param(name: str, schema: Schema, *, required: bool = False, about: str = "") -> Schema:
    found = {"name": name, "in": "query", "required": required, "schema": schema}
    return {**found, "description": about} if about else found


def path_param(name: str, schema: Schema = ID) -> Schema:
    about = "An id as stored; a '/' in it is sent percent-encoded (%2F)"
    return {"name": name, "in": "path", "required": True, "schema": schema, "description": about}


def integer(minimum: int, maximum: int | None = None) -> Schema:
    found: Schema = {"type": "integer", "minimum": minimum}
    return found if maximum is None else {**found, "maximum": maximum}


PAGE = [
    query_param("limit", integer(1, LIMITS.page)),
    query_param(
        "cursor",
        {"type": "string", "minLength": 1},
        about="The next_cursor this server issued for the same list and tenant (another is refused: 400 cursor)",
    ),
]
TYPES = query_param(
    "type", {"type": "array", "items": {"enum": list(EVENT_TYPES)}}, about="Repeatable: keeps those types"
)
SCOPE_QUERY = [
    query_param("tenant", NAME, about="The key's own tenant, if given (another is 403)"),
    query_param("app", NAME, required=True),
    query_param("project", NAME, required=True),
    *(query_param(part, NAME) for part in ("team", "agent", "user")),
]
READ = (400, 401, 403, 404, 429)
WRITE = (400, 401, 403, 404, 413, 415, 429)
PUBLIC: list[Schema] = []  # no API key needed
SCOPE_NAME = f"(?:{'|'.join(SCOPES)})"
SCOPE_LIST = rf"^[{SPACE},]*{SCOPE_NAME}(?:[{SPACE}]*,[{SPACE},]*{SCOPE_NAME})*[{SPACE},]*{END}"  # ``parse_scopes``
ENV = {"type": "object", "additionalProperties": STRING}
DISPOSITION = {"content-disposition": {"schema": STRING, "description": 'attachment; filename="….json"'}}
EXPORT = {
    "description": "The events, streamed in the format asked for",
    "headers": DISPOSITION,
    "content": {
        MEDIA["json"]: {"schema": {"type": "array", "items": _ref("Event")}},
        MEDIA["ndjson"]: {"schema": {"type": "string", "description": "One event (JSON) per line"}},
        MEDIA["csv"]: {"schema": {"type": "string", "description": "A header row, then one row per event"}},
    },
}
FORMAT = query_param("format", {"enum": list(FORMATS)})
INGESTED = _object(("accepted", "duplicate", "id"), accepted={"const": True}, duplicate={"type": "boolean"}, id=STRING)
RESULT = {
    "anyOf": [
        _object(
            ("index", "accepted", "duplicate", "id"),
            index={"type": "integer"},
            accepted={"const": True},
            duplicate={"type": "boolean"},
            id=STRING,
        ),
        _object(
            ("index", "accepted", "errors"),
            index={"type": "integer"},
            accepted={"const": False},
            errors={"type": "array", "items": {"type": "object"}},
        ),
    ]
}
BATCH = _object(
    ("accepted", "received", "added", "duplicates", "rejected", "results"),
    accepted={"type": "boolean"},
    received={"type": "integer"},
    added={"type": "integer"},
    duplicates={"type": "integer"},
    rejected={"type": "integer"},
    results={"type": "array", "items": RESULT},
    errors={"type": "array", "items": {"type": "object"}},
)
BATCH_REFUSED = {
    "description": "no event valid: the answer per event (with the one status all got), or the body refused whole",
    "content": json_content({"anyOf": [BATCH, ERROR]}),
}
OTLP_OK = _object(
    (),
    partialSuccess=_object((), rejectedSpans={"type": "string"}, errorMessage={"type": "string"}),
)
PROTOBUF_OK = {PROTOBUF: {"schema": {"description": "An ExportTraceServiceResponse"}}}
PROTOBUF_ERROR = {PROTOBUF: {"schema": {"description": "A google.rpc.Status naming the field and the rule"}}}
DELETED_COUNT = done(_object(("deleted",), deleted={"type": "integer", "minimum": 0}))
LEARNED = {
    201: done(_ref("Learned"), "the lesson this call stored"),
    200: done(_ref("Learned"), "no verdict (lesson null), or judged before (judged_before)"),
}
LESSON = done(_ref("Lesson"))

#: Key administration: only with API keys (``serve`` without ``--dev``).
ADMIN_OPERATIONS: dict[tuple[str, str], Schema] = {
    ("/admin/keys", "post"): {
        "summary": "Create an API key in the admin key's tenant; the secret is in this answer only",
        "requestBody": request_body(
            {
                **closed(
                    ("scopes",),
                    scopes={
                        "oneOf": [
                            {"type": "array", "minItems": 1, "items": {"enum": list(SCOPES)}},
                            {
                                "type": "string",
                                "pattern": SCOPE_LIST,
                                "description": "Comma-separated, as the command line takes them",
                            },
                        ]
                    },
                    tenant={**NAME, "description": "The admin key's own tenant, if given (another is 403)"},
                    project=NAME,
                    name=NAME,
                    rate={
                        "type": "number",
                        "exclusiveMinimum": 0,
                        "maximum": MAX_RATE,
                        "description": "Requests per second (per replica); none: no limit",
                    },
                    burst={
                        **integer(1, MAX_BURST),
                        "description": "Requests at once (default: a second of rate, at least 1); needs rate",
                    },
                    event_rate={
                        "type": "number",
                        "exclusiveMinimum": 0,
                        "maximum": MAX_RATE,
                        "description": "Events and spans ingested per second (per replica); none: no limit",
                    },
                    event_burst={
                        **integer(1, MAX_BURST),
                        "description": "Events at once, and the most in one request (default: 10000, or "
                        "a second of event_rate when more); needs event_rate",
                    },
                    legacy_signatures={"type": "boolean"},
                    require_signatures={"type": "boolean", "description": "Not with legacy_signatures"},
                ),
                "dependentRequired": {"burst": ["rate"], "event_burst": ["event_rate"]},
                "not": {
                    "required": ["legacy_signatures", "require_signatures"],
                    "properties": {"legacy_signatures": {"const": True}, "require_signatures": {"const": True}},
                },
            }
        ),
        "responses": answers(
            {
                201: done(
                    _object(
                        ("key", "api_key", "signing_secret"), key=_ref("Key"), api_key=STRING, signing_secret=STRING
                    )
                )
            },
            *(400, 401, 403, 413, 415, 429),
        ),
    },
    ("/admin/keys", "get"): {
        "summary": "The admin key's tenant's keys (never their secrets)",
        "responses": answers(
            {200: done(_object(("keys",), keys={"type": "array", "items": _ref("Key")}))}, 401, 403, 429
        ),
    },
    ("/admin/keys/{key_id}", "delete"): {
        "summary": "Revoke a key of the admin key's tenant: it reads nothing from then on",
        "parameters": [path_param("key_id")],
        "responses": answers({200: done(_object(("key",), key=_ref("Key")))}, 400, 401, 403, 404, 429),
    },
}
