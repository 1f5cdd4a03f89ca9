"""Errors name the field the client sent and state the rule it broke, in the server's own words intact.

Before (h22 #2, #7): the 401s' hint ``send `Authorization: Bearer <key>``` was scrubbed as if ``<key>`` were a
token (``Bearer [REDACTED:bearer]``, its backticks broken); ``GET /experience/lessons?app=`` named
``scope.app`` (the parameter is ``app``); ``offset=9999999999999999999`` said "must be a whole number"; a JSON
integer of 4301 digits got msgspec's raw ``Integer value out of range - at `$[...][...]```; and
``POST /admin/keys`` with ``"tenant": null`` was 403 although ``"name": null`` is taken as absent."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from afteraction.memory import Memory
from afteraction.server import create_app
from afteraction.server.common import Problem, error_body
from afteraction.store.base import MAX_PAGE
from afteraction.store.events import EventStore
from tests.server.conftest import LIMITS, tenant_from_header
from tests.server.keyed import Keyed, bearer, keyed
from tests.server.test_ingest import event

REQUIRED = "is required: send `Authorization: Bearer <key>`"
INVALID = "is not a valid API key; send `Authorization: Bearer <key>` with a key from `afteraction keys create`"
TOO_LONG = (
    "is not JSON: an integer is longer than 4300 characters, the most read exactly; send such a number as a string"
)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Keyed]:
    with keyed(tmp_path / "keys.db", experience=True) as found:
        yield found


@pytest.fixture
def http(events: EventStore) -> Iterator[TestClient]:
    memory = Memory(events.store, embedder=None)
    app = create_app(events, tenant=tenant_from_header, limits=LIMITS, memory=memory)
    with TestClient(app, raise_server_exceptions=False, headers={"x-test-tenant": "acme"}) as found:
        yield found
    memory.close()


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        ({}, REQUIRED),
        ({"authorization": "  "}, REQUIRED),
        ({"authorization": "Bearer afa_0000000000000000_" + "x" * 43}, INVALID),
        ({"authorization": "Bearer not-a-key"}, INVALID),
    ],
    ids=["no header", "blank", "unknown key", "malformed key"],
)
def test_a_401s_hint_reaches_the_client_intact(server: Keyed, headers: dict[str, str], message: str) -> None:
    answer = server.client.get("/sessions", headers=headers)
    assert answer.status_code == 401
    assert answer.json() == {
        "error": f"authorization: {message}",
        "errors": [{"field": "authorization", "message": message}],
    }


def test_only_the_servers_own_text_goes_unscrubbed() -> None:
    echoed = "got `Authorization: Bearer abcdef0123456789ABCDEF`"  # a value the request sent
    assert "abcdef0123456789ABCDEF" not in json.dumps(error_body("authorization", echoed, ingest=False))
    assert error_body("authorization", REQUIRED, ingest=False, verbatim=True)["errors"][0]["message"] == REQUIRED
    assert Problem(401, "authorization", "x").verbatim is False  # a Problem is scrubbed unless it says otherwise


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        ({"app": "", "project": "p"}, "app", "is required"),
        ({"project": "p"}, "app", "is required"),
        ({"app": "a"}, "project", "is required"),
        ({"app": "a", "project": "p", "team": "t\tx"}, "team", "must not contain control characters"),
        ({"app": "a\nb", "project": "p"}, "app", "must not contain control characters"),
    ],
)
def test_a_query_scope_error_names_the_query_parameter(
    http: TestClient, params: dict[str, str], field: str, message: str
) -> None:
    for path in ("/experience/lessons", "/experience/lessons/some-id"):
        answer = http.get(path, params=params)
        assert answer.status_code == 400, answer.text
        assert answer.json()["errors"] == [{"field": field, "message": message}]


def test_a_query_tenant_of_another_tenant_is_403_naming_tenant(http: TestClient) -> None:
    answer = http.get("/experience/lessons", params={"app": "a", "project": "p", "tenant": "beta"})
    assert answer.status_code == 403 and answer.json()["errors"][0]["field"] == "tenant"


@pytest.mark.parametrize(
    ("offset", "message"),
    [
        ("9" * 19, f"must be at most {MAX_PAGE}, got '{'9' * 19}'"),
        ("9" * 40, f"must be at most {MAX_PAGE}, got '…'"),  # a cut word is left out whole (``echoed``)
        (str(MAX_PAGE + 1), f"must be at most {MAX_PAGE}, got '{MAX_PAGE + 1}'"),
        ("-1", f"must be an integer from 0 to {MAX_PAGE}, got '-1'"),
        ("1.5", f"must be an integer from 0 to {MAX_PAGE}, got '1.5'"),
    ],
)
def test_an_offset_out_of_range_says_at_most(http: TestClient, offset: str, message: str) -> None:
    answer = http.get("/experience/lessons", params={"app": "a", "project": "p", "offset": offset})
    assert answer.status_code == 400
    assert answer.json()["errors"] == [{"field": "offset", "message": message}]
    at_most = http.get("/experience/lessons", params={"app": "a", "project": "p", "offset": str(MAX_PAGE)})
    assert at_most.status_code == 200 and at_most.json() == {"lessons": []}


@pytest.mark.parametrize(("limit", "message"), [("0", "must be at least 1, got '0'"), ("9" * 30, "must be at most 50")])
def test_a_limit_out_of_range_says_which_end(http: TestClient, limit: str, message: str) -> None:
    for path, scope in (("/sessions", {}), ("/experience/lessons", {"app": "a", "project": "p"})):
        answer = http.get(path, params={"limit": limit, **scope})
        assert answer.status_code == 400 and answer.json()["errors"][0]["message"].startswith(message), answer.text


def _with_number(digits: str) -> bytes:
    return json.dumps(event("big-int", payload={"n": 0})).replace('"n": 0', f'"n": {digits}').encode()


@pytest.mark.parametrize("digits", ["9" * 4301, "-" + "9" * 4300, "9" * 10_000])
def test_an_integer_too_long_to_read_is_named_like_a_number_out_of_range(http: TestClient, digits: str) -> None:
    answer = http.post("/events", content=_with_number(digits), headers={"content-type": "application/json"})
    assert answer.status_code == 400
    assert answer.json()["errors"] == [{"field": "body", "message": TOO_LONG}]
    batch = b"[" + _with_number(digits) + b"]"
    answer = http.post("/events/batch", content=batch, headers={"content-type": "application/json"})
    assert answer.status_code == 400 and answer.json()["errors"] == [{"field": "body", "message": TOO_LONG}]


def test_an_integer_past_a_doubles_range_is_kept_exact_as_the_docs_say(http: TestClient) -> None:
    digits = "9" * 4300
    assert (
        http.post("/events", content=_with_number(digits), headers={"content-type": "application/json"}).status_code
        == 202
    )
    stored = http.get("/sessions/ses-1/events").json()["events"][0]["payload"]["n"]
    assert stored == int(digits)
    refused = http.post("/events", content=_with_number("1e400"), headers={"content-type": "application/json"})
    assert refused.json()["errors"][0]["message"] == "is not JSON: a number is beyond ±1.8e308, the range of a double"


def _create(server: Keyed, admin: str, **body: Any) -> Any:
    return server.client.post("/admin/keys", json={"scopes": ["read"], **body}, headers=bearer(admin))


def test_a_null_tenant_or_project_is_taken_as_absent(server: Keyed) -> None:
    admin = server.token(scopes="admin")
    made = _create(server, admin, tenant=None, name=None, project=None)
    assert made.status_code == 201, made.text
    assert made.json()["key"]["tenant"] == "acme" and made.json()["key"]["project"] is None
    bound = server.token(scopes="admin", project="refunds")
    made = _create(server, bound, tenant=None, project=None)
    assert made.status_code == 201 and made.json()["key"]["project"] == "refunds", made.text
    assert _create(server, admin, tenant="beta").status_code == 403
    assert _create(server, bound, project="other").status_code == 403


TOKEN = "ghp_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"


@pytest.mark.parametrize(
    "path",
    [f"/sessions?limit={TOKEN}", f"/sessions?limit=1{TOKEN}", f"/export?format={TOKEN}", f"/metrics?format={TOKEN}"],
)
def test_a_refused_value_is_never_echoed_cut_where_the_scrubber_cannot_see_it(server: Keyed, path: str) -> None:
    """h26: ``raw[:32]`` cut a token to a prefix no scrubber recognised: ``got 'ghp_abcdefghijklmnopqrstuvwxyz01'``."""
    answer = server.client.get(path, headers=bearer(server.token(scopes="read")))
    assert answer.status_code == 400, answer.text
    assert "aBcDeFgHiJ" not in answer.text


def test_a_token_sent_as_the_scheme_is_not_echoed(server: Keyed) -> None:
    answer = server.client.get("/sessions", headers={"Authorization": f"{TOKEN} x"})
    assert answer.status_code == 401 and "Bearer scheme" in answer.text and "aBcDeFgHiJ" not in answer.text
