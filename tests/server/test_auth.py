"""Every route needs a key: 401 without a valid one (a revoked key reads nothing), 403 without the
route's scope, each tenant sees and deduplicates against its own events only, and every refusal
is the one JSON error shape."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.server.keyed import SECRET_TEXT, Keyed, bearer, keyed
from tests.server.test_ingest import event


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Keyed]:
    with keyed(tmp_path / "keyed.db") as found:
        yield found


ROUTES = [("POST", "/events"), ("POST", "/events/batch"), ("GET", "/sessions"), ("GET", "/sessions/s/events"),
          ("GET", "/sessions/s/tree"), ("GET", "/admin/keys"), ("POST", "/admin/keys"), ("DELETE", "/admin/keys/x"),
          ("GET", "/no/such/route")]  # fmt: skip


def refusal(answer: Any, status: int, *, ingest: bool = False) -> str:
    """The one error shape, with ``accepted: false`` on ingest routes; its field and message."""
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == "application/json"
    body = answer.json()
    assert set(body) == ({"accepted", "error", "errors"} if ingest else {"error", "errors"})
    assert body.get("accepted", False) is False
    (error,) = body["errors"]
    assert set(error) == {"field", "message"} and error["message"]
    return str(error["field"]) + ": " + str(error["message"])


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_every_route_without_a_key_is_401(server: Keyed, method: str, path: str) -> None:
    answer = server.client.request(method, path, json=event())
    message = refusal(answer, 401, ingest=path.startswith("/events"))
    assert message.startswith("authorization: is required")
    assert answer.headers["www-authenticate"].startswith("Bearer")


@pytest.mark.parametrize(
    "header",
    ["Bearer", "Bearer afa_0123456789abcdef", "Bearer afa_0123456789abcdef_" + "A" * 43, "Basic dXNlcjpwYXNz",
     "bearer not-a-key", "Bearer  " + "x" * 5000],
)  # fmt: skip
def test_a_malformed_or_unknown_key_is_401(server: Keyed, header: str) -> None:
    answer = server.client.get("/sessions", headers={"authorization": header})
    assert refusal(answer, 401).startswith("authorization: ")


def test_the_right_id_with_a_wrong_secret_is_401_as_an_unknown_key_is(server: Keyed) -> None:
    token = server.token()
    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    unknown = refusal(server.client.get("/sessions", headers=bearer("afa_0123456789abcdef_" + "A" * 43)), 401)
    assert refusal(server.client.get("/sessions", headers=bearer(forged)), 401) == unknown
    assert server.client.get("/sessions", headers=bearer(token)).status_code == 200


def test_the_sdk_header_and_scheme_case_are_accepted(server: Keyed) -> None:
    token = server.token()
    for header in (f"Bearer {token}", f"bearer {token}", f"BEARER   {token}  "):
        assert server.client.get("/sessions", headers={"Authorization": header}).status_code == 200


def test_a_revoked_key_reads_and_writes_nothing(server: Keyed) -> None:
    key, token = server.key()
    assert server.client.post("/events", json=event(), headers=bearer(token)).status_code == 202
    assert server.client.get("/sessions/ses-1/events", headers=bearer(token)).status_code == 200
    server.keys.revoke(key.id, at=server.auth.now())
    for method, path in [("GET", "/sessions"), ("GET", "/sessions/ses-1/events"), ("POST", "/events")]:
        answer = server.client.request(method, path, json=event("evt-2"), headers=bearer(token))
        assert "was revoked" in refusal(answer, 401, ingest=path.startswith("/events"))


@pytest.mark.parametrize(
    ("scopes", "method", "path", "needed"),
    [("read", "POST", "/events", "write"), ("read", "POST", "/events/batch", "write"),
     ("write", "GET", "/sessions", "read"), ("write", "GET", "/sessions/ses-1/tree", "read"),
     ("read,write", "GET", "/admin/keys", "admin"), ("read,write", "POST", "/admin/keys", "admin"),
     ("admin", "GET", "/sessions", "read"), ("admin", "POST", "/events", "write")],
)  # fmt: skip
def test_a_key_without_the_routes_scope_is_403(server: Keyed, scopes: str, method: str, path: str, needed: str) -> None:
    key, token = server.key(scopes=scopes)
    answer = server.client.request(method, path, json=event(), headers=bearer(token))
    message = refusal(answer, 403, ingest=path.startswith("/events"))
    assert f"lacks the '{needed}' scope" in message and key.id in message


def test_each_scope_opens_its_routes(server: Keyed) -> None:
    assert server.client.post("/events", json=event(), headers=bearer(server.token(scopes="write"))).status_code == 202
    assert server.client.get("/sessions", headers=bearer(server.token(scopes="read"))).status_code == 200
    assert server.client.get("/admin/keys", headers=bearer(server.token(scopes="admin"))).status_code == 200


def test_a_tenants_key_cannot_read_or_dedupe_against_another_tenants_events(server: Keyed) -> None:
    acme, globex = bearer(server.token("acme")), bearer(server.token("globex"))
    assert server.client.post("/events", json=event(payload={"by": "globex"}), headers=globex).status_code == 202
    assert server.client.get("/sessions/ses-1/events", headers=acme).status_code == 404
    assert server.client.get("/sessions/ses-1/tree", headers=acme).status_code == 404
    assert server.client.get("/sessions", headers=acme).json()["sessions"] == []
    first = server.client.post("/events", json=event(payload={"by": "acme"}), headers=acme)
    assert first.status_code == 202 and first.json()["duplicate"] is False  # same id, other tenant: new
    batch = server.client.post("/events/batch", json=[event(), event("evt-2")], headers=acme)
    assert [r["duplicate"] for r in batch.json()["results"]] == [True, False]
    for headers, by in ((acme, "acme"), (globex, "globex")):
        found = server.client.get("/sessions/ses-1/events", headers=headers).json()["events"]
        assert {e["payload"]["by"] for e in found if e["id"] == "evt-1"} == {by}
    assert [e["id"] for e in server.client.get("/sessions/ses-1/events", headers=globex).json()["events"]] == ["evt-1"]


def test_a_cursor_of_one_tenant_does_not_page_another(server: Keyed) -> None:
    acme, globex = bearer(server.token("acme")), bearer(server.token("globex"))
    for i in range(3):
        server.client.post("/events", json=event(f"e{i}", session_id=f"s{i}"), headers=acme)
    page = server.client.get("/sessions", params={"limit": 1}, headers=acme).json()
    assert page["next_cursor"]
    answer = server.client.get("/sessions", params={"limit": 1, "cursor": page["next_cursor"]}, headers=globex)
    assert answer.status_code == 400 and answer.json()["errors"][0]["field"] == "cursor"


def test_keys_and_secrets_never_reach_the_log(server: Keyed, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    _, token = server.key()
    revoked, revoked_token = server.key()
    server.keys.revoke(revoked.id, at=server.auth.now())
    server.client.post("/events", json=event(), headers=bearer(token))
    server.client.get("/sessions", headers=bearer(revoked_token))
    server.client.get("/sessions", headers=bearer(token[:-1]))
    logged = caplog.text + "".join(str(r.args) for r in caplog.records)
    for secret in (token, revoked_token, token[:-1], token.split("_", 2)[2], SECRET_TEXT):  # afa_<id>_<secret>
        assert secret not in logged


def test_a_key_store_that_fails_is_503_in_the_one_shape(server: Keyed) -> None:
    token = server.token()
    server.store.close()
    answer = server.client.get("/sessions", headers=bearer(token))
    assert refusal(answer, 503) == "None: the service cannot answer now; try again later"
