"""``/openapi.json`` names exactly the routes the app serves, and a schema-driven fuzz run
(schemathesis) over every operation finds no 5xx and no non-JSON error."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.testclient import TestClient

from afteraction.memory import Memory
from afteraction.server import create_app
from afteraction.server.openapi import OPERATIONS
from afteraction.store.sqlite import SQLiteStore
from afteraction.store.sqlite_events import SQLiteEvents
from tests.server.conftest import LIMITS
from tests.server.keyed import keyed


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Starlette]:
    """An app per test: schemathesis shuts the lifespan of each app it called down once its test ends, and the
    group committer of an app shut down stores nothing more (requests built from the document store events)."""
    events = SQLiteEvents(SQLiteStore(tmp_path / "served.db"))
    yield create_app(events, limits=LIMITS, memory=Memory(events.store))
    events.store.close()


def served(app: Starlette) -> set[tuple[str, str]]:
    found = set()
    for route in app.routes:
        assert isinstance(route, Route)
        for method in route.methods or ():
            if method != "HEAD":
                found.add((re.sub(r"\{(\w+):\w+\}", r"{\1}", route.path), method.lower()))  # OpenAPI has no converters
    return found


def test_the_document_names_exactly_the_routes(app: Starlette, tmp_path: Path) -> None:
    admin = {op for op in OPERATIONS if op[0].startswith("/admin")}
    assert admin and served(app) == set(OPERATIONS) - admin  # development mode: no keys, no admin routes
    with keyed(tmp_path / "keyed.db") as server, TestClient(server.app) as http:
        assert served(server.app) == set(OPERATIONS)
        document = http.get("/openapi.json").json()
    assert {(path, method) for path, ops in document["paths"].items() for method in ops} == set(OPERATIONS)
    assert document["openapi"].startswith("3.1") and document["security"] == [{"apiKey": []}]


def test_the_development_document_names_no_route_or_security_it_does_not_serve(app: Starlette) -> None:
    """``serve --dev`` has no keys: its document lists no /admin route, no bearer security and no 401."""
    http = TestClient(app)  # no lifespan: the module's app stays open for the fuzzing below
    document = http.get("/openapi.json").json()
    assert http.get("/admin/keys").status_code == 404
    assert {(path, method) for path, ops in document["paths"].items() for method in ops} == served(app)
    assert "security" not in document and "securitySchemes" not in document["components"]
    assert not [op for ops in document["paths"].values() for op in ops.values() if "401" in op["responses"]]


@pytest.fixture
def api_schema(app: Starlette) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_asgi("/openapi.json", app)


def operations() -> list[str]:
    return sorted(f"{method.upper()} {path}" for path, method in OPERATIONS)


@pytest.fixture(scope="module")
def keyed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[schemathesis.BaseSchema, str]]:
    """The app with API keys on, and a key holding every scope."""
    with keyed(tmp_path_factory.mktemp("keyed") / "keyed.db") as server:
        yield schemathesis.openapi.from_asgi("/openapi.json", server.app), server.token(scopes="read,write,admin")


@pytest.mark.parametrize("operation", operations())
def test_no_input_makes_the_server_fail(
    api_schema: schemathesis.BaseSchema, keyed_server: tuple[schemathesis.BaseSchema, str], operation: str
) -> None:
    method, path = operation.split(" ", 1)
    headers: dict[str, str] = {}
    if path.startswith("/admin"):  # only there with keys: fuzz it with a key that may use it
        api_schema, token = keyed_server
        headers = {"authorization": f"Bearer {token}"}
    found = api_schema[path][method]

    @given(case=found.as_strategy())
    @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    def check(case: schemathesis.Case) -> None:
        response = case.call(headers=headers)
        assert response.status_code < 500, f"{operation} → {response.status_code}: {response.text[:500]}"
        if response.status_code >= 400:
            media = response.headers.get("content-type", [""])[0]
            assert media.startswith("application/json"), response.text[:500]
            assert response.json()["errors"], response.text[:500]

    check()


def test_the_document_says_which_routes_need_no_key_and_that_every_other_may_be_rate_limited(tmp_path: Path) -> None:
    public = {path for (path, _), op in OPERATIONS.items() if op.get("security") == []}
    assert public == {"/health", "/ready", "/openapi.json"}
    with keyed(tmp_path / "keyed.db") as server, TestClient(server.app) as http:
        for path in public:
            assert http.get(path).status_code == 200  # no key
        assert http.get("/sessions").status_code == 401
    for (path, method), op in OPERATIONS.items():
        if path not in public:
            assert "429" in op["responses"], (method, path)


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/experience/search", {"query": "refund", "scope": {"app": "a", "project": "p"}, "max_record": 3}),
        ("/experience/block", {"task": "refund", "scope": {"app": "a", "project": "p"}, "layuot": "verbose"}),
    ],
)
def test_an_experience_body_with_a_field_it_does_not_take_is_refused_naming_it(
    app: Starlette, path: str, body: dict[str, object]
) -> None:
    with TestClient(app) as http:
        answer = http.post(path, json=body)
    assert answer.status_code == 400
    (error,) = answer.json()["errors"]
    assert error["field"] in ("max_record", "layuot") and "is not a field of this request" in error["message"]


def test_every_deletion_route_names_the_501_of_an_append_only_deployment() -> None:
    for path in ("/sessions/{session_id}", "/experience/lessons/{lesson_id}", "/experience/users/{user}/lessons"):
        answer = OPERATIONS[(path, "delete")]["responses"]["501"]
        assert "does not delete" in answer["description"]


def test_the_document_states_the_bounds_of_the_limits_the_app_runs_with(app: Starlette) -> None:
    """``create_app(limits=…)``: its document bounds every list's ``limit`` and a batch's events by those limits
    (it stated ``Limits()``'s 500 and 10000 whatever the app took), and the app refuses just past them."""
    http = TestClient(app)
    document = http.get("/openapi.json").json()
    bounds = {
        (path, method): parameter["schema"]["maximum"]
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
        for parameter in operation.get("parameters", ())
        if parameter["name"] == "limit"
    }
    assert len(bounds) >= 3 and set(bounds.values()) == {LIMITS.page}
    batch = document["paths"]["/events/batch"]["post"]["requestBody"]["content"]
    assert {media["schema"]["maxItems"] for media in batch.values()} == {LIMITS.batch_events}
    for path, method in bounds:
        if method == "get" and "{" not in path:
            scope = {"app": "support", "project": "refunds"} if path.startswith("/experience") else {}
            assert http.get(path, params={**scope, "limit": LIMITS.page}).status_code == 200, path
            refused = http.get(path, params={**scope, "limit": LIMITS.page + 1})
            assert refused.status_code == 400 and refused.json()["errors"][0]["field"] == "limit", path
