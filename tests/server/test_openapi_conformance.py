"""The server holds to the document it serves (``/openapi.json``), so a client generator may take it literally.

- Every answer below (a success and a 400 of each operation, and the other media types: exports as CSV and
  NDJSON, Prometheus text, OTLP protobuf) has a status the operation documents, a media type documented for
  that status, and, when JSON, a body that validates (``jsonschema``) against the documented schema.
- Requests generated from the document's request schemas (schemathesis' hypothesis strategies, derandomized)
  are never answered 5xx, and are refused with 400 only for a rule the document states in words (``STATED``).
- The document's numeric bounds are the server's: each bound is accepted, one past it refused naming the field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import jsonschema
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from starlette.testclient import TestClient

from afteraction.errors import ValidationError
from afteraction.model._check import name as checked_name
from afteraction.server import Limits
from afteraction.server.openapi import OPERATIONS, document
from afteraction.server.openapi_parts import SCOPE_LIST
from afteraction.server.openapi_schemas import NAME
from afteraction.store.keys import parse_scopes
from tests.server.keyed import Keyed, bearer, keyed

EVENT = {"specversion": "0.2.0", "source": "probe", "trace_id": "t1", "session_id": "s1", "payload": {}}
SCOPE = {"app": "a", "project": "p"}
LESSON = {
    "id": "L1",
    "task_id": "T1",
    "task": "fix the refund bug",
    "lesson": "run the refund tests first",
    "status": "validated",
    "confidence": 0.8,
    "scope": {"tenant": "acme", **SCOPE},
    "created_at": "2026-01-01T00:00:00Z",
}
RUN = {
    "id": "r1",
    "task": "fix the refund bug",
    "scope": {"tenant": "acme", **SCOPE},
    "started_at": "2026-01-01T00:00:00Z",
    "state": "completed",
    "attempts": [{"index": 0, "calls": [{"tool": "pytest", "args": {}}]}],
    "evidence": [{"id": "tests", "passed": True}],
}


def event(id: str, type: str, minute: int = 0) -> dict[str, Any]:
    return {**EVENT, "id": id, "type": type, "time": f"2026-01-01T00:0{minute}:00Z"}


class Server:
    """The keyed app (as ``serve`` runs it: default limits, an experience store), seeded, with an all-scope key."""

    def __init__(self, found: Keyed) -> None:
        self.found = found
        self.http: TestClient = found.client
        self.headers = bearer(found.token(scopes="read,write,admin"))
        self.spare = found.key(scopes="read")[0].id  # a key to revoke
        self.document = self.http.get("/openapi.json").json()
        seed = [event("e1", "task.created"), event("e2", "tool.called", 1), event("e3", "task.completed", 2)]
        seed[0]["payload"] = {"task": "fix the refund bug"}
        seed[1]["payload"] = {"tool": "pytest", "args": {}}
        assert self.call("POST", "/events/batch", json=seed).status_code == 202
        assert self.call("POST", "/experience/lessons", json={"lessons": [LESSON]}).status_code == 201

    def call(self, method: str, url: str, **options: Any) -> httpx.Response:
        headers = {**self.headers, **options.pop("headers", {})}
        return self.http.request(method, url, headers=headers, **options)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    path = tmp_path_factory.mktemp("conformance") / "served.db"
    with keyed(path, experience=True, limits=Limits()) as found:
        yield Server(found)


def holds(document: dict[str, Any], path: str, method: str, answer: httpx.Response) -> None:
    """The answer's status, media type and (JSON) body are those the document gives the operation."""
    responses = document["paths"][path][method.lower()]["responses"]
    status = str(answer.status_code)
    assert status in responses, f"{method} {path}: {status} is undocumented: {answer.text[:300]}"
    media = answer.headers.get("content-type", "").split(";", 1)[0].strip()
    content = responses[status]["content"]
    assert media in content, f"{method} {path} {status}: {media!r} is not one of {sorted(content)}"
    if media == "application/json":
        schema = {"allOf": [content[media]["schema"]], "components": document["components"]}
        errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(answer.json())]
        assert not errors, f"{method} {path} {status}: {errors[:3]}: {answer.text[:300]}"


L = "/experience/lessons"
#: (operation, a request it answers with success, one it answers 400); None: the operation takes no input to refuse.
EXAMPLES: list[tuple[str, str, dict[str, Any] | None, dict[str, Any] | None]] = [
    ("post", "/events", {"json": event("e4", "task.updated")}, {"json": event("e5", "bogus")}),
    ("post", "/events/batch", {"json": [event("e6", "task.updated")]}, {"json": [event("e7", "bogus")]}),
    ("post", "/v1/traces", {"json": {}}, {"content": b"{", "headers": {"content-type": "application/json"}}),
    ("get", "/sessions", {}, {"params": {"limit": 0}}),
    ("delete", "/sessions/{session_id}", {"url": "/sessions/gone"}, {"url": "/sessions/%09"}),
    ("get", "/sessions/{session_id}/events", {"url": "/sessions/s1/events"}, {"url": "/sessions/s1/events?q="}),
    ("get", "/sessions/{session_id}/tree", {"url": "/sessions/s1/tree"}, {"url": "/sessions/%09/tree"}),
    ("get", "/sessions/{session_id}/export", {"url": "/sessions/s1/export"}, {"url": "/sessions/s1/export?format=x"}),
    ("get", "/export", {}, {"params": {"type": "bogus"}}),
    ("get", "/workflows/{trace_id}", {"url": "/workflows/t1"}, {"url": "/workflows/%09"}),
    ("get", "/metrics", {}, {"params": {"format": "xml"}}),
    (
        "post",
        "/sessions/{session_id}/verdict",
        {"url": "/sessions/s1/verdict", "json": {"scope": SCOPE, "evidence": [{"id": "tests", "passed": True}]}},
        {"url": "/sessions/s1/verdict", "json": {"scope": SCOPE, "evidence": []}},
    ),
    ("post", "/experience/search", {"json": {"query": "refund", "scope": SCOPE}}, {"json": {"query": "r", "k": 0}}),
    ("post", "/experience/block", {"json": {"task": "refund bug", "scope": SCOPE}},
     {"json": {"task": "t", "scope": {}}}),
    ("get", L, {"params": SCOPE}, {"params": {**SCOPE, "limit": 0}}),
    ("post", L, {"json": {"lessons": [{**LESSON, "id": "L2"}]}}, {"json": {"lessons": []}}),
    ("get", L + "/{lesson_id}", {"url": L + "/L1", "params": SCOPE}, {"url": L + "/%09", "params": SCOPE}),
    ("delete", L + "/{lesson_id}", {"url": L + "/L2", "params": SCOPE}, {"url": L + "/%09", "params": SCOPE}),
    ("delete", "/experience/users/{user}/lessons", {"url": "/experience/users/bob/lessons"},
     {"url": "/experience/users/%20bob/lessons"}),
    ("post", L + "/{lesson_id}/outcome", {"url": L + "/L1/outcome", "json": {"scope": SCOPE, "success": True}},
     {"url": L + "/L1/outcome", "json": {"scope": SCOPE, "success": "yes"}}),
    ("post", L + "/{lesson_id}/status", {"url": L + "/L1/status", "json": {"scope": SCOPE, "status": "stale"}},
     {"url": L + "/L1/status", "json": {"scope": SCOPE, "status": "bogus"}}),
    ("post", "/experience/runs", {"json": {"run": RUN}}, {"json": {"run": {}}}),
    ("post", "/admin/keys", {"json": {"scopes": ["read"]}}, {"json": {"scopes": []}}),
    ("get", "/admin/keys", {}, None),
    ("delete", "/admin/keys/{key_id}", {"url": "/admin/keys/{spare}"}, {"url": "/admin/keys/%09"}),
    ("get", "/health", {}, None),
    ("get", "/ready", {}, None),
    ("get", "/openapi.json", {}, None),
]  # fmt: skip


def test_every_operation_has_an_example() -> None:
    assert {(path, method) for method, path, _, _ in EXAMPLES} == set(OPERATIONS)


@pytest.mark.parametrize(("method", "path", "ok", "bad"), EXAMPLES, ids=[f"{m} {p}" for m, p, _, _ in EXAMPLES])
def test_a_success_and_a_refusal_of_each_operation_are_as_documented(
    server: Server, method: str, path: str, ok: dict[str, Any], bad: dict[str, Any] | None
) -> None:
    for request, expected in ((ok, range(200, 300)), (bad, (400,))):
        if request is None:
            continue
        options = dict(request)
        url = options.pop("url", path).replace("{spare}", server.spare)
        answer = server.call(method.upper(), url, **options)
        assert answer.status_code in expected, f"{method} {path}: {answer.status_code} {answer.text[:300]}"
        holds(server.document, path, method, answer)


@pytest.mark.parametrize(
    ("path", "params", "media"),
    [
        ("/export", {"format": "csv"}, "text/csv"),
        ("/export", {"format": "ndjson"}, "application/x-ndjson"),
        ("/sessions/s1/export", {"format": "csv", "type": "task.created"}, "text/csv"),
        ("/metrics", {"format": "prometheus"}, "text/plain"),
    ],
)
def test_the_other_media_types_are_documented(server: Server, path: str, params: dict[str, str], media: str) -> None:
    answer = server.call("GET", path, params=params)
    assert answer.status_code == 200 and answer.headers["content-type"].startswith(media)
    holds(server.document, path.replace("s1", "{session_id}"), "get", answer)
    if "export" in path:
        documented = server.document["paths"][path.replace("s1", "{session_id}")]["get"]
        assert "content-disposition" in documented["responses"]["200"]["headers"]
        assert "attachment" in answer.headers["content-disposition"]
        assert any(p["name"] == "type" for p in documented["parameters"])


def test_otlp_answers_a_protobuf_request_in_protobuf_as_documented(server: Server) -> None:
    protobuf = {"content-type": "application/x-protobuf"}
    for body, status in ((b"", 200), (b"\xff\xff", 400)):
        answer = server.call("POST", "/v1/traces", content=body, headers=protobuf)
        assert answer.status_code == status
        holds(server.document, "/v1/traces", "post", answer)


def test_a_request_without_a_key_is_a_documented_401(server: Server) -> None:
    answer = server.http.get("/sessions")
    assert answer.status_code == 401
    holds(server.document, "/sessions", "get", answer)


#: Refusals a request the document calls valid may still get: rules JSON Schema cannot state, which the
#: document states in words (the third item: the text it says it in). (field, what the message says, text.)
STATED = [
    (r"cursor", "issued", "this server issued for the same list"),
    (r"to", "must be later than from", "must be later than from"),
    (r"(events\[\d+\]\.)?time", "ahead of this server's clock", "at most 24 hours ahead of the server's clock"),
    (r"(events\[\d+\]\.)?time", "outside the years", "in the years 1 to 9999 in UTC"),
    (r"lessons\[\d+\]\.id", "repeats", "ids are unique within one request"),
    (r"(events\[\d+\]\.)?signature(\..+)?", "", "Verified with the key's signing secret"),  # a batch's 400 holds them
    (r".+", "must be an integer", "without a fraction or an exponent (5, not 5.0)"),
    (r".+", "beyond 2^53 in a signed event", "a signed event holding an integer beyond 2^53 is refused"),
]


def stated(field: str | None, message: str) -> bool:
    return any(re.fullmatch(name, field or "") and part in message for name, part, _ in STATED)


def test_the_rules_the_document_states_in_words_are_in_it() -> None:
    text = json.dumps(document("test"))
    for _, _, words in STATED:
        assert words in text


def test_requests_generated_from_the_document_are_refused_only_for_a_rule_it_states(server: Server) -> None:
    api = schemathesis.openapi.from_dict(server.document)
    for path, method in sorted(OPERATIONS):
        conforms(server, api[path][method.upper()], path, method)


def conforms(server: Server, operation: Any, path: str, method: str) -> None:
    """A bounded, derandomized run of requests generated from ``operation``'s schemas."""

    @given(case=operation.as_strategy())
    @settings(
        max_examples=12,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    def check(case: schemathesis.Case) -> None:
        options = case.as_transport_kwargs(base_url="http://testserver")
        options.pop("cookies", None)
        answer = server.call(options.pop("method"), options.pop("url"), **options)
        seen = f"{method.upper()} {path} → {answer.status_code}: {answer.text[:300]}; sent {options}"
        assert answer.status_code < 500, seen
        holds(server.document, path, method, answer)
        if answer.status_code == 400 and answer.headers["content-type"].startswith("application/json"):
            errors = answer.json()["errors"]
            assert all(stated(e["field"], e["message"]) for e in errors), seen

    check()


@pytest.mark.parametrize(
    ("path", "name", "edge", "past"),
    [
        ("/experience/block", "max_bytes", 256, 255),
        ("/experience/block", "max_tokens", 64, 63),
        ("/experience/block", "max_records", 1, 0),
        ("/experience/search", "k", 100, 101),
        ("/experience/search", "k", 1, 0),
    ],
)
def test_the_documented_bounds_are_the_servers(server: Server, path: str, name: str, edge: int, past: int) -> None:
    schema = OPERATIONS[(path, "post")]["requestBody"]["content"]["application/json"]["schema"]["properties"][name]
    assert edge in (schema.get("minimum"), schema.get("maximum"))
    body = {"scope": SCOPE, "query" if path.endswith("search") else "task": "refund"}
    assert server.call("POST", path, json={**body, name: edge}).status_code == 200
    refused = server.call("POST", path, json={**body, name: past})
    assert refused.status_code == 400 and refused.json()["errors"][0]["field"] == name


def test_lesson_list_bounds_are_the_servers(server: Server) -> None:
    parameters = {p["name"]: p["schema"] for p in OPERATIONS[(L, "get")]["parameters"]}
    for name in ("limit", "offset"):
        low, high = parameters[name]["minimum"], parameters[name]["maximum"]
        for edge, past in ((low, low - 1), (high, high + 1)):
            assert server.call("GET", L, params={**SCOPE, name: edge}).status_code == 200, (name, edge)
            refused = server.call("GET", L, params={**SCOPE, name: past})
            assert refused.status_code == 400 and refused.json()["errors"][0]["field"] == name, (name, past)


def _patterns(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "pattern" and isinstance(value, str):
                yield value
            else:
                yield from _patterns(value)
    elif isinstance(node, list):
        for value in node:
            yield from _patterns(value)


def test_the_patterns_mean_the_same_in_every_regex_engine() -> None:
    """JSON Schema reads a pattern as ECMA-262, whose ``\\s`` holds U+FEFF and not U+0085 or U+001C–U+001F
    (Python's the reverse): the document refused `app=a\\ufeff`, which the server takes. No class escape whose
    meaning differs by engine is used; white space is spelled out as ``str.strip`` has it."""
    patterns = set(_patterns(document("test")))
    assert patterns
    for pattern in patterns:
        assert not re.search(r"(?<!\\)(?:\\\\)*\\[sSdDwWbB]", pattern), pattern


def test_a_name_and_a_scope_list_are_refused_by_the_document_as_by_the_server() -> None:
    """Every character of the Basic Multilingual Plane's first 12,544 (and U+FEFF, U+205F, an emoji) at either end
    and inside a scope name and a key's scope list: the pattern (read as jsonschema reads it, ``re.search``) takes
    exactly what the server does."""
    characters = [chr(c) for c in range(0x3100)] + ["\ufeff", "\u205f", "\U0001f600"]
    differ = []
    for character in characters:
        for value in (f"a{character}", f"{character}a", f"a{character}b"):
            if bool(re.search(NAME["pattern"], value)) != _takes(lambda v: checked_name(v, "app"), value):
                differ.append(value)
        for value in (f"read{character}", f"{character}read, write", f"read,{character}write"):
            if bool(re.search(SCOPE_LIST, value)) != _takes(parse_scopes, value):
                differ.append(value)
    assert not differ, differ[:20]


def _takes(check: Any, value: str) -> bool:
    try:
        check(value)
    except ValidationError:
        return False
    return True
