"""Routing is exact: a 405 says which methods the path takes (``Allow``, field ``method``); every id in a
path, whatever it holds, reaches its route's id check (400 naming it); nothing is redirected.

Before (h22 #4, #5): a 405 carried no ``Allow`` and named no field; ``GET /sessions/`` was a 405 from the
DELETE route; an id holding a percent-encoded newline was a field-less 404 on every ``{id:path}`` route
(Starlette's ``.*`` stops at a newline) and one ending in a newline matched the id without it (its ``$``
matches before a final newline: ``DELETE /sessions/a%0A`` deleted session ``a``); ``DELETE
/admin/keys/abc%2F`` was a 307 to ``/admin/keys/abc``, which a client following redirects then revoked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from afteraction.memory import Memory
from afteraction.server import create_app
from afteraction.store.events import EventStore
from tests.server.conftest import LIMITS, tenant_from_header
from tests.server.keyed import Keyed, bearer, keyed
from tests.server.test_ingest import event

SCOPE = {"app": "support", "project": "refunds"}
ID_RULE = "must be 1 to 256 characters without control characters"


@pytest.fixture
def http(events: EventStore) -> Iterator[TestClient]:
    memory = Memory(events.store, embedder=None)
    app = create_app(events, tenant=tenant_from_header, limits=LIMITS, memory=memory)
    with TestClient(app, raise_server_exceptions=False, follow_redirects=False) as found:
        yield found
    memory.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Keyed]:
    with keyed(tmp_path / "keys.db") as found:
        found.client.follow_redirects = False
        yield found


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("PUT", "/sessions", "GET, HEAD"),
        ("OPTIONS", "/events", "POST"),
        ("POST", "/health", "GET, HEAD"),
        ("GET", "/events/batch", "POST"),
        ("PUT", "/experience/lessons", "GET, HEAD, POST"),  # two routes: Starlette's Allow named the first only
        ("PATCH", "/sessions/ses-1", "DELETE"),
    ],
)
def test_a_405_names_the_method_and_allows_what_the_path_takes(
    http: TestClient, method: str, path: str, allow: str
) -> None:
    answer = http.request(method, path)
    assert answer.status_code == 405, answer.text
    assert answer.headers["allow"] == allow
    assert answer.json()["errors"] == [
        {"field": "method", "message": f"{method} is not allowed on {path}; it takes {allow}"}
    ]
    assert answer.json()["error"] == f"method: {method} is not allowed on {path}; it takes {allow}"


def test_admin_keys_405_lists_both_of_its_routes(server: Keyed) -> None:
    answer = server.client.put("/admin/keys", headers=bearer(server.token(scopes="admin")))
    assert answer.status_code == 405 and answer.headers["allow"] == "GET, HEAD, POST"
    assert answer.json()["errors"][0]["field"] == "method"


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT"])
def test_an_empty_session_id_is_400_naming_it_whatever_the_method(http: TestClient, method: str) -> None:
    answer = http.request(method, "/sessions/")
    assert answer.status_code == 400, answer.text
    assert answer.json()["errors"] == [{"field": "session_id", "message": ID_RULE}]
    assert http.get("/sessions//events").json()["errors"] == [{"field": "session_id", "message": ID_RULE}]


#: Every ``{…:path}`` route of the development server, with ``{}`` where the id goes.
ID_ROUTES = [
    ("GET", "/sessions/{}/events", "session_id"),
    ("GET", "/sessions/{}/tree", "session_id"),
    ("GET", "/sessions/{}/export", "session_id"),
    ("DELETE", "/sessions/{}", "session_id"),
    ("GET", "/workflows/{}", "trace_id"),
    ("GET", "/experience/lessons/{}?app=support&project=refunds", "lesson_id"),
    ("DELETE", "/experience/lessons/{}?app=support&project=refunds", "lesson_id"),
    ("POST", "/experience/lessons/{}/outcome", "lesson_id"),
    ("POST", "/experience/lessons/{}/status", "lesson_id"),
    ("DELETE", "/experience/users/{}/lessons", "user"),
    ("POST", "/sessions/{}/verdict", "session_id"),
]


@pytest.mark.parametrize(("method", "path", "field"), ID_ROUTES, ids=[f"{m} {p}" for m, p, _ in ID_ROUTES])
@pytest.mark.parametrize("id", ["a%0Ab", "a%0A", "%0Aa", "a%0Db", "a%09b", "a%7Fb", "a%1Bb"])
def test_an_id_holding_a_control_character_is_400_naming_it_on_every_route(
    http: TestClient, method: str, path: str, field: str, id: str
) -> None:
    answer = http.request(method, path.format(id), json={"scope": SCOPE, "success": True})
    assert answer.status_code == 400, answer.text
    assert answer.json()["errors"] == [{"field": field, "message": ID_RULE}]


def test_an_id_ending_in_a_newline_does_not_reach_the_id_without_it(http: TestClient) -> None:
    assert http.post("/events", json=event("nl-1", session_id="a")).status_code == 202
    assert http.delete("/sessions/a%0A").status_code == 400
    assert http.get("/sessions/a%0A/events").status_code == 400
    assert http.get("/sessions/a/events").json()["events"][0]["id"] == "nl-1"  # still there
    assert http.get("/health%0A").status_code == 404


def test_an_id_holding_a_percent_encoded_slash_is_routed_as_one_id(http: TestClient) -> None:
    assert http.post("/events", json=event("sl-1", session_id="a/b")).status_code == 202
    assert http.get("/sessions/a%2Fb/events").json()["events"][0]["id"] == "sl-1"
    assert http.delete("/sessions/a%2Fb").status_code == 200


@pytest.mark.parametrize("id", ["abc%2F", "a%2Fb", "%2Fabc"])
def test_an_admin_key_id_holding_a_slash_is_that_id_never_a_redirect(server: Keyed, id: str) -> None:
    kept, _ = server.key()
    admin = bearer(server.token(scopes="admin"))
    answer = server.client.delete(f"/admin/keys/{id}", headers=admin)
    assert answer.status_code == 404 and "location" not in answer.headers, answer.text
    assert answer.json()["errors"][0]["field"] == "key_id"
    kept_id = kept.id + "%2F"  # a real key's id with a "/" after it names another key: not that one
    assert server.client.delete(f"/admin/keys/{kept_id}", headers=admin).status_code == 404
    assert server.keys.find(kept.id) is not None and server.keys.find(kept.id)[0].active  # type: ignore[index]


@pytest.mark.parametrize("id", ["a%0Ab", "a%0A", "a%09b", ""])
def test_an_admin_key_id_holding_a_control_character_is_400_naming_it(server: Keyed, id: str) -> None:
    answer = server.client.delete(f"/admin/keys/{id}", headers=bearer(server.token(scopes="admin")))
    assert answer.status_code == 400, answer.text
    assert answer.json()["errors"] == [{"field": "key_id", "message": ID_RULE}]


@pytest.mark.parametrize("path", ["/health/", "/sessions/?", "/events/", "/metrics/", "/admin/keys/x/"])
def test_no_path_is_redirected(server: Keyed, path: str) -> None:
    answer = server.client.request("GET", path, headers=bearer(server.token(scopes="read,admin")))
    assert answer.status_code != 307 and "location" not in answer.headers, (answer.status_code, answer.text)
