"""A key that requires signatures writes signed AEP events only: every other write route (OTLP
spans, lessons, runs, outcomes, verdicts) carries nothing the server could verify, so it is 403
naming the key's setting; reads stay open to it. On SQLite and PostgreSQL."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.routing import Route

from afteraction.core.canonical import attach_signature
from afteraction.server.auth import READ_POSTS, SIGNED_WRITES
from tests.core.test_otlp_conformance import CAPTURES
from tests.server.keyed import SECRET, Keyed, bearer, keyed
from tests.server.test_experience import RUN, SCOPE, lesson
from tests.server.test_ingest import event

OTLP = CAPTURES / "agent-framework-builtin" / "request-1"
WRITES: list[tuple[str, str, dict[str, Any]]] = [
    (
        "POST",
        "/v1/traces",
        {"content": OTLP.with_suffix(".json").read_bytes(), "headers": {"content-type": "application/json"}},
    ),
    (
        "POST",
        "/v1/traces",
        {"content": OTLP.with_suffix(".pb").read_bytes(), "headers": {"content-type": "application/x-protobuf"}},
    ),
    ("POST", "/experience/lessons", {"json": {"lessons": [lesson().to_dict()]}}),
    ("POST", "/experience/runs", {"json": {"run": RUN}}),
    ("POST", "/experience/lessons/exp_refund/outcome", {"json": {"scope": SCOPE, "success": True}}),
    ("POST", "/experience/lessons/exp_refund/status", {"json": {"scope": SCOPE, "status": "revoked"}}),
    ("DELETE", "/experience/lessons/exp_refund", {"params": SCOPE}),
    ("DELETE", "/experience/users/x/lessons", {}),
    ("DELETE", "/sessions/ses-1", {}),
    ("POST", "/sessions/ses-1/verdict", {"json": {"scope": SCOPE, "evidence": [{"id": "done", "passed": True}]}}),
]


@pytest.fixture
def server(database: str) -> Iterator[Keyed]:
    with keyed(database, experience=True) as found:
        yield found


def stored_events(server: Keyed, token: str) -> int:
    count: int = server.client.get("/metrics", headers=bearer(token)).json()["stored"]["events"]
    return count


def send(server: Keyed, method: str, path: str, request_: dict[str, Any], token: str) -> Any:
    options = {name: value for name, value in request_.items() if name != "headers"}
    return server.client.request(method, path, headers={**request_.get("headers", {}), **bearer(token)}, **options)


@pytest.mark.parametrize(("method", "path", "request_"), WRITES, ids=[f"{m} {p}" for m, p, _ in WRITES])
def test_a_write_that_carries_no_signature_is_403_for_a_key_requiring_signatures(
    server: Keyed, method: str, path: str, request_: dict[str, Any]
) -> None:
    strict = server.token(require_signatures=True)
    other = server.token()
    server.client.post("/events", json=event(), headers=bearer(other))  # a session for the verdict
    before = stored_events(server, other)
    answer = send(server, method, path, request_, strict)
    assert answer.status_code == 403, answer.text
    (error,) = answer.json()["errors"]
    assert error["field"] == "authorization"
    assert "--require-signatures" in error["message"] and "POST /events" in error["message"]
    assert stored_events(server, other) == before
    assert server.client.get("/experience/lessons", params=SCOPE, headers=bearer(other)).json()["lessons"] == []
    # the same request with a key that does not require signatures is taken
    taken = send(server, method, path, request_, other)
    assert taken.status_code != 403, taken.text


def test_every_write_route_but_the_signed_ones_is_closed_to_such_a_key(server: Keyed) -> None:
    """Fail closed: a write route added later is refused too until it verifies a signature."""
    strict = bearer(server.token(require_signatures=True))
    writes = {
        (method, route.path)
        for route in server.app.routes
        if isinstance(route, Route) and not route.path.startswith("/admin")
        for method in route.methods or ()
        if method not in ("GET", "HEAD") and route.path not in READ_POSTS
    }
    paths = {template: re.sub(r"\{[^}]+\}", "x", template) for _, template in writes}
    assert set(paths.values()) >= {path.replace("exp_refund", "x").replace("ses-1", "x") for _, path, _ in WRITES}
    for method, template in sorted(writes):
        path = paths[template]
        status = server.client.request(method, path, json={}, headers=strict).status_code
        assert (status != 403) is (template in SIGNED_WRITES), (method, template, status)


def test_such_a_key_still_reads_and_writes_signed_events(server: Keyed) -> None:
    key, token = server.key(require_signatures=True)
    writer = bearer(server.token())
    assert (
        server.client.post("/experience/lessons", json={"lessons": [lesson().to_dict()]}, headers=writer).status_code
        == 201
    )
    signed = attach_signature(event(), SECRET.signing_secret(key.id))
    assert server.client.post("/events", json=signed, headers=bearer(token)).status_code == 202
    assert server.client.post("/events/batch", json=[{**signed, "id": "x"}], headers=bearer(token)).status_code == 401
    reads = [
        server.client.get("/sessions/ses-1/events", headers=bearer(token)),
        server.client.get("/experience/lessons", params=SCOPE, headers=bearer(token)),
        server.client.post(
            "/experience/search", json={"query": "refund pending", "scope": SCOPE}, headers=bearer(token)
        ),
        server.client.post("/experience/block", json={"task": "refund pending", "scope": SCOPE}, headers=bearer(token)),
    ]
    assert [answer.status_code for answer in reads] == [200] * 4
    assert len(reads[1].json()["lessons"]) == 1


def test_an_admin_key_requiring_signatures_still_manages_keys(server: Keyed) -> None:
    admin = bearer(server.token(scopes="admin", require_signatures=True))
    made = server.client.post("/admin/keys", json={"scopes": ["read"]}, headers=admin)
    assert made.status_code == 201
    assert server.client.delete(f"/admin/keys/{made.json()['key']['id']}", headers=admin).status_code == 200
