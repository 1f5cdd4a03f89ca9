"""Every route that reads a body honours ``Content-Encoding`` as ``POST /v1/traces`` does: gzip is decoded
(under the route's body limit once decompressed too: 413), ``identity`` or none is taken as is, and any
other encoding is 415 naming ``content-encoding``.

Before (h22 #3): only ``/v1/traces`` looked at the header. A gzipped ``/events`` body was 400 ``body: is not
JSON: invalid character (byte 0)``, a gzipped batch ``body: is not UTF-8 text`` (the error blamed the body,
not the header the client set), and a plain JSON body sent as ``content-encoding: br`` was stored (202)."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from afteraction.memory import Memory
from afteraction.server import create_app
from afteraction.server.offload import INLINE_BYTES
from afteraction.store.events import EventStore
from tests.server.conftest import LIMITS, tenant_from_header
from tests.server.keyed import bearer, keyed
from tests.server.test_ingest import event

SCOPE = {"app": "support", "project": "refunds"}
JSON = {"content-type": "application/json"}

#: Each body-reading route of the development server, with a body it takes, and the statuses it answers.
ROUTES: list[tuple[str, Any, tuple[int, ...]]] = [
    ("/events", event("enc-1"), (202,)),
    ("/events/batch", [event("enc-2"), event("enc-3")], (202,)),
    ("/experience/search", {"query": "refund", "scope": SCOPE}, (200,)),
    ("/experience/block", {"task": "refund", "scope": SCOPE}, (200,)),
    ("/experience/lessons/nowhere/outcome", {"scope": SCOPE, "success": True}, (404,)),
    ("/experience/lessons/nowhere/status", {"scope": SCOPE, "status": "revoked"}, (404,)),
    ("/sessions/nowhere/verdict", {"scope": SCOPE, "evidence": [{"id": "c", "passed": True}]}, (404,)),
]


@pytest.fixture
def http(events: EventStore) -> Iterator[TestClient]:
    memory = Memory(events.store, embedder=None)
    app = create_app(events, tenant=tenant_from_header, limits=LIMITS, memory=memory)
    with TestClient(app, raise_server_exceptions=False) as found:
        yield found
    memory.close()


def _paths(routes: list[tuple[str, Any, tuple[int, ...]]]) -> list[str]:
    return [path.split("/")[-1] if "nowhere" in path else path for path, _, _ in routes]


@pytest.mark.parametrize(("path", "body", "statuses"), ROUTES, ids=_paths(ROUTES))
@pytest.mark.parametrize("encoding", ["gzip", "x-gzip", "GZip"])
def test_a_gzip_body_is_decoded_on_every_route(
    http: TestClient, path: str, body: Any, statuses: tuple[int, ...], encoding: str
) -> None:
    answer = http.post(
        path, content=gzip.compress(json.dumps(body).encode()), headers={**JSON, "content-encoding": encoding}
    )
    assert answer.status_code in statuses, answer.text


def test_a_large_gzip_body_is_decoded_in_a_worker_and_its_events_stored(http: TestClient) -> None:
    batch = [event(f"big-{n}", payload={"task": "x" * 200}) for n in range(60)]
    raw = gzip.compress(json.dumps(batch).encode(), compresslevel=0)  # stored: over INLINE_BYTES compressed
    assert len(raw) > INLINE_BYTES
    answer = http.post("/events/batch", content=raw, headers={**JSON, "content-encoding": "gzip"})
    assert answer.status_code == 202 and answer.json()["added"] == 60, answer.text


@pytest.mark.parametrize(("path", "body", "statuses"), ROUTES, ids=_paths(ROUTES))
@pytest.mark.parametrize("encoding", ["br", "deflate", "gzip, br", "zstd"])
def test_another_encoding_is_415_naming_content_encoding(
    http: TestClient, path: str, body: Any, statuses: tuple[int, ...], encoding: str
) -> None:
    answer = http.post(path, content=json.dumps(body).encode(), headers={**JSON, "content-encoding": encoding})
    assert answer.status_code == 415, answer.text
    assert answer.json()["errors"][0] == {
        "field": "content-encoding",
        "message": f"must be gzip or none, got {encoding!r}",
    }


@pytest.mark.parametrize(("path", "body", "statuses"), ROUTES, ids=_paths(ROUTES))
def test_identity_is_taken_as_is(http: TestClient, path: str, body: Any, statuses: tuple[int, ...]) -> None:
    answer = http.post(path, content=json.dumps(body).encode(), headers={**JSON, "content-encoding": "identity"})
    assert answer.status_code in statuses, answer.text


def test_a_plain_body_said_to_be_br_stores_nothing(http: TestClient) -> None:
    answer = http.post(
        "/events", content=json.dumps(event("br-1")).encode(), headers={**JSON, "content-encoding": "br"}
    )
    assert answer.status_code == 415
    assert http.get("/sessions/ses-1/events").status_code == 404  # no session: nothing stored


@pytest.mark.parametrize("path", ["/events", "/experience/search"])
def test_a_gzip_body_past_the_limit_once_decompressed_is_413(http: TestClient, path: str) -> None:
    bomb = gzip.compress(b" " * (LIMITS.event_bytes + 1))  # ~1 KiB compressed
    answer = http.post(path, content=bomb, headers={**JSON, "content-encoding": "gzip"})
    assert answer.status_code == 413, answer.text
    assert "once decompressed" in answer.json()["errors"][0]["message"]


def test_a_body_that_is_not_gzip_is_400_naming_the_body(http: TestClient) -> None:
    answer = http.post(
        "/events", content=json.dumps(event("nz-1")).encode(), headers={**JSON, "content-encoding": "gzip"}
    )
    assert answer.status_code == 400
    assert answer.json()["errors"][0]["field"] == "body" and "gzip" in answer.json()["errors"][0]["message"]


def test_ndjson_lessons_and_runs_take_gzip_too(http: TestClient) -> None:
    lines = "\n".join(json.dumps(event(f"nd-{n}")) for n in range(3)).encode()
    answer = http.post(
        "/events/batch",
        content=gzip.compress(lines),
        headers={"content-type": "application/x-ndjson", "content-encoding": "gzip"},
    )
    assert answer.status_code == 202 and answer.json()["added"] == 3, answer.text
    for path, body in (("/experience/lessons", {"lessons": []}), ("/experience/runs", {"run": None})):
        answer = http.post(
            path, content=gzip.compress(json.dumps(body).encode()), headers={**JSON, "content-encoding": "gzip"}
        )
        assert answer.status_code == 400 and answer.json()["errors"][0]["field"] in ("lessons", "run"), answer.text


def test_admin_keys_take_gzip_and_refuse_another_encoding(tmp_path: Path) -> None:
    with keyed(tmp_path / "keys.db") as server:
        admin = bearer(server.token(scopes="admin"))
        body = json.dumps({"scopes": ["read"], "name": "zipped"}).encode()
        made = server.client.post(
            "/admin/keys", content=gzip.compress(body), headers={**admin, **JSON, "content-encoding": "gzip"}
        )
        assert made.status_code == 201 and made.json()["key"]["name"] == "zipped", made.text
        refused = server.client.post("/admin/keys", content=body, headers={**admin, **JSON, "content-encoding": "br"})
        assert refused.status_code == 415 and refused.json()["errors"][0]["field"] == "content-encoding"
        assert [key["name"] for key in server.client.get("/admin/keys", headers=admin).json()["keys"]] == [
            None,
            "zipped",
        ]
