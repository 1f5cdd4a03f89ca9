"""Admin routes manage the admin key's own tenant's keys (its project's, when bound to one); the
secret is shown once, never listed; per-key rate limits answer 429 with Retry-After."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from afteraction.server.ratelimit import RateLimiter
from tests.server.keyed import SECRET, Keyed, bearer, keyed
from tests.server.test_ingest import event


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Keyed]:
    with keyed(tmp_path / "admin.db") as found:
        yield found


def create(server: Keyed, admin: str, **body: Any) -> Any:
    return server.client.post("/admin/keys", json={"scopes": ["read", "write"], **body}, headers=bearer(admin))


def test_an_admin_creates_a_working_key_shown_once(server: Keyed) -> None:
    admin = server.token(scopes="admin")
    answer = create(server, admin, name="ingest bot", rate=5, burst=10, require_signatures=True)
    assert answer.status_code == 201
    body = answer.json()
    key = body["key"]
    assert key["tenant"] == "acme" and key["scopes"] == ["read", "write"] and key["name"] == "ingest bot"
    assert (key["rate"], key["burst"], key["require_signatures"], key["revoked_at"]) == (5.0, 10, True, None)
    assert body["api_key"].startswith(key["id"] + "_")
    assert body["signing_secret"] == SECRET.signing_secret(key["id"])
    assert server.client.get("/sessions", headers=bearer(body["api_key"])).status_code == 200
    listed = server.client.get("/admin/keys", headers=bearer(admin))
    assert key in listed.json()["keys"]
    stored = server.keys.find(key["id"])
    assert stored is not None
    for secret in (body["api_key"], body["api_key"].split("_", 2)[2], body["signing_secret"], stored[1]):
        assert secret not in listed.text


def test_an_admin_revokes_a_key_of_its_tenant_only(server: Keyed) -> None:
    admin = server.token(scopes="admin")
    mine, my_token = server.key()
    theirs, their_token = server.key("globex")
    answer = server.client.delete(f"/admin/keys/{theirs.id}", headers=bearer(admin))
    assert answer.status_code == 404
    assert answer.json()["errors"][0]["message"] == f"no key {theirs.id!r} in tenant 'acme'"
    assert server.client.get("/sessions", headers=bearer(their_token)).status_code == 200
    gone = server.client.delete(f"/admin/keys/{mine.id}", headers=bearer(admin))
    assert gone.status_code == 200 and gone.json()["key"]["revoked_at"] is not None
    assert server.client.get("/sessions", headers=bearer(my_token)).status_code == 401
    assert server.client.delete(f"/admin/keys/{mine.id}", headers=bearer(admin)).json() == gone.json()
    assert server.client.delete("/admin/keys/afa_0000000000000000", headers=bearer(admin)).status_code == 404


def test_an_admin_lists_and_creates_in_its_own_tenant_only(server: Keyed) -> None:
    admin = server.token(scopes="admin")
    server.key("globex")
    assert {k["tenant"] for k in server.client.get("/admin/keys", headers=bearer(admin)).json()["keys"]} == {"acme"}
    answer = create(server, admin, tenant="globex")
    assert answer.status_code == 403 and answer.json()["errors"][0]["field"] == "tenant"
    assert create(server, admin, tenant="acme").status_code == 201


def test_an_admin_bound_to_a_project_manages_that_project_only(server: Keyed) -> None:
    admin = server.token(scopes="admin", project="refunds")
    other, _ = server.key(project="billing")
    assert create(server, admin, project="billing").status_code == 403
    made = create(server, admin).json()["key"]
    assert made["project"] == "refunds"
    listed = server.client.get("/admin/keys", headers=bearer(admin)).json()["keys"]
    assert other.id not in {k["id"] for k in listed} and made["id"] in {k["id"] for k in listed}
    assert server.client.delete(f"/admin/keys/{other.id}", headers=bearer(admin)).status_code == 404


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [({"scopes": ["root"]}, 400, "scopes"), ({"scopes": []}, 400, "scopes"), ({}, 400, "scopes"),
     ({"scopes": ["read"], "rate": -1}, 400, "rate"), ({"scopes": ["read"], "burst": 5}, 400, "burst"),
     ({"scopes": ["read"], "name": 7}, 400, "name"), ({"scopes": ["read"], "secret": "mine"}, 400, "secret"),
     ({"scopes": ["read"], "legacy_signatures": "yes"}, 400, "legacy_signatures"), ([1], 400, "body")],
)  # fmt: skip
def test_a_bad_key_request_is_400_naming_the_field(server: Keyed, body: Any, status: int, field: str) -> None:
    answer = server.client.post("/admin/keys", json=body, headers=bearer(server.token(scopes="admin")))
    assert answer.status_code == status and answer.json()["errors"][0]["field"] == field, answer.text


def test_an_admin_request_that_is_not_json_is_refused(server: Keyed) -> None:
    headers = bearer(server.token(scopes="admin"))
    assert server.client.post("/admin/keys", content=b"scopes=read", headers=headers).status_code == 415
    broken = server.client.post("/admin/keys", content=b"{", headers={**headers, "content-type": "application/json"})
    assert broken.status_code == 400 and broken.json()["errors"][0]["field"] == "body"


def test_a_key_over_its_rate_gets_429_with_retry_after_and_others_do_not(server: Keyed) -> None:
    limited = server.token(rate=0.2, burst=2)
    free = server.token()
    answers = [server.client.post("/events", json=event(f"r{i}"), headers=bearer(limited)) for i in range(3)]
    assert [a.status_code for a in answers] == [202, 202, 429]
    refused = answers[2]
    assert refused.headers["retry-after"] in ("4", "5")  # one token at 0.2/s: 5 s, less the time taken
    body = refused.json()
    assert body["accepted"] is False and body["errors"][0]["field"] is None and "rate" in body["errors"][0]["message"]
    assert server.client.get("/sessions", headers=bearer(limited)).status_code == 429  # every route counts
    assert all(server.client.get("/sessions", headers=bearer(free)).status_code == 200 for _ in range(5))


def test_the_bucket_refills_at_the_rate_up_to_the_burst() -> None:
    now = [0.0]
    limiter = RateLimiter(lambda: now[0])
    assert [limiter.take("k", 2.0, 3) for _ in range(4)] == [0, 0, 0, 1]
    now[0] = 0.5  # one token back
    assert [limiter.take("k", 2.0, 3) for _ in range(2)] == [0, 1]
    now[0] = 100.0  # full again, never above the burst
    assert [limiter.take("k", 2.0, 3) for _ in range(4)] == [0, 0, 0, 1]
    assert limiter.take("other", 2.0, 3) == 0
    assert limiter.take("slow", 0.01, 1) == 0 and limiter.take("slow", 0.01, 1) == 100


@pytest.mark.postgres
def test_keys_kept_in_postgres_authenticate_and_are_administered_over_http(tmp_path: Path, pg_url: str) -> None:
    from starlette.testclient import TestClient

    from afteraction.server import KeyAuth, create_app
    from afteraction.store.keys import hash_token, mint, open_keys
    from afteraction.store.postgres import PostgresStore
    from afteraction.store.sqlite import SQLiteStore
    from afteraction.store.sqlite_events import SQLiteEvents

    shared, local = PostgresStore(pg_url), SQLiteStore(tmp_path / "events.db")
    try:
        keys = open_keys(shared)
        auth = KeyAuth(keys, SECRET)
        admin, token = mint("acme", "admin", now=auth.now())
        keys.add(admin, hash_token(token))
        with TestClient(create_app(SQLiteEvents(local), auth=auth), raise_server_exceptions=False) as client:
            made = client.post("/admin/keys", json={"scopes": ["read"]}, headers=bearer(token)).json()
            reader = bearer(made["api_key"])
            assert client.get("/sessions", headers=reader).status_code == 200
            assert client.post("/events", json=event(), headers=reader).status_code == 403
            listed = client.get("/admin/keys", headers=bearer(token))
            assert [k["id"] for k in listed.json()["keys"]] == [admin.id, made["key"]["id"]]
            assert made["api_key"] not in listed.text
            assert client.delete(f"/admin/keys/{made['key']['id']}", headers=bearer(token)).status_code == 200
            assert client.get("/sessions", headers=reader).status_code == 401
    finally:
        shared.close()
        local.close()
