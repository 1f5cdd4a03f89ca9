"""POST /events and /events/batch answer as the AEP reference server does, and bad input gets a
4xx JSON error naming the problem."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.requests import Request
from starlette.testclient import TestClient

from afteraction.server import create_app, ingest
from afteraction.store.events import EventStore
from tests.conftest import CONFORMANCE
from tests.server.conftest import LIMITS

FIXTURES = CONFORMANCE / "aep" / "fixtures"
VALID = sorted((FIXTURES / "valid").glob("*.json"))
INVALID = sorted((FIXTURES / "invalid").glob("*.json"))
# The field each invalid fixture is at fault for.
INVALID_FIELD = {
    "bad-agent-role.json": "agent_role",
    "bad-specversion.json": "specversion",
    "bad-time-format.json": "time",
    "empty-id.json": "id",
    "missing-payload.json": "payload",
    "missing-required-fields.json": None,  # any of the required ones
    "unknown-type.json": "type",
}
REQUIRED = {"specversion", "id", "time", "source", "type", "session_id", "trace_id", "payload"}


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def event(id: str = "evt-1", **changes: Any) -> dict[str, Any]:
    return {
        "specversion": "0.2.0",
        "id": id,
        "time": "2026-01-01T10:00:00Z",
        "source": "agent://test",
        "type": "task.created",
        "session_id": "ses-1",
        "trace_id": "trc-1",
        "payload": {},
        **changes,
    }


def test_the_fixture_sets_are_all_here() -> None:
    assert len(VALID) == 12
    assert sorted(p.name for p in INVALID) == sorted(INVALID_FIELD)


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_every_valid_fixture_is_accepted_then_a_duplicate(client: TestClient, path: Path) -> None:
    data = load(path)
    first = client.post("/events", json=data)
    assert first.status_code == 202, first.text
    assert first.json() == {"accepted": True, "duplicate": False, "id": data["id"]}
    again = client.post("/events", json=data)
    assert again.status_code == 200
    assert again.json() == {"accepted": True, "duplicate": True, "id": data["id"]}


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.name)
def test_every_invalid_fixture_is_refused_naming_the_field(client: TestClient, path: Path) -> None:
    answer = client.post("/events", json=load(path))
    assert answer.status_code == 400
    body = answer.json()
    assert body["accepted"] is False
    (error,) = body["errors"]
    expected = INVALID_FIELD[path.name]
    assert error["field"] == expected if expected else error["field"] in REQUIRED
    assert error["message"]


def test_the_same_id_in_two_tenants_is_two_events(client: TestClient) -> None:
    assert client.post("/events", json=event(), headers={"x-test-tenant": "a"}).status_code == 202
    assert client.post("/events", json=event(), headers={"x-test-tenant": "b"}).status_code == 202
    assert client.post("/events", json=event(), headers={"x-test-tenant": "a"}).status_code == 200
    for tenant in ("a", "b"):
        found = client.get("/sessions/ses-1/events", headers={"x-test-tenant": tenant}).json()
        assert [e["id"] for e in found["events"]] == ["evt-1"]
    assert client.get("/sessions/ses-1/events", headers={"x-test-tenant": "c"}).status_code == 404


def test_a_secret_in_a_field_beyond_the_envelope_is_not_stored(client: TestClient) -> None:
    key = "sk-proj-Beyond0123456789abcdefghij"
    sent = event(metadata={"api_key": key, "note": f"token {key}"}, http_headers={"Authorization": f"Bearer {key}"})
    assert client.post("/events", json=sent).status_code == 202
    found = client.get("/sessions/ses-1/events")
    assert key not in found.text
    (stored,) = found.json()["events"]
    assert stored["metadata"]["api_key"] == "[REDACTED]"


@pytest.mark.parametrize("time", ["9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00+01:00"])
def test_a_time_with_no_utc_instant_is_400_and_reads_keep_working(client: TestClient, time: str) -> None:
    """Stored and ordered in UTC: a time past the years' ends there broke every read of the tenant (500)."""
    answer = client.post("/events", json=event(time=time))
    assert answer.status_code == 400 and answer.json()["errors"][0]["field"] == "time"
    assert client.get("/sessions").status_code == 200


def test_a_wrong_type_is_named_in_json_words(client: TestClient) -> None:
    answer = client.post("/events", json=event(payload=None))
    assert answer.json()["errors"][0] == {"field": "payload", "message": "must be an object, got null"}
    answer = client.post("/events", json=event(source=7))
    assert answer.json()["errors"][0] == {"field": "source", "message": "must be a string, got a number"}


def test_a_body_over_the_limit_is_413_before_parsing(client: TestClient) -> None:
    big = json.dumps(event(payload={"text": "x" * LIMITS.event_bytes}))
    answer = client.post("/events", content=big, headers={"content-type": "application/json"})
    assert answer.status_code == 413
    assert answer.json()["accepted"] is False


def test_a_chunked_body_over_the_limit_is_413(client: TestClient) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"payload": "'
        for _ in range(LIMITS.event_bytes // 1024 + 1):
            yield b"x" * 1024
        yield b'"}'

    answer = client.post("/events", content=chunks(), headers={"content-type": "application/json"})
    assert answer.status_code == 413
    assert "limit" in answer.json()["errors"][0]["message"]


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded"])
def test_a_wrong_content_type_is_415(client: TestClient, content_type: str | None) -> None:
    headers = {} if content_type is None else {"content-type": content_type}
    answer = client.post("/events", content=json.dumps(event()), headers=headers)
    assert answer.status_code == 415
    assert answer.json()["errors"][0]["field"] == "content-type"


def test_json_with_a_charset_is_accepted(client: TestClient) -> None:
    answer = client.post(
        "/events", content=json.dumps(event()), headers={"content-type": "application/json; charset=utf-8"}
    )
    assert answer.status_code == 202


@pytest.mark.parametrize(
    "body",
    [b"{", b"not json", b'{"a": NaN}', b"\xff\xfe", b'{"id": "\xff"}', b'[{"id": "\xff"}]', b"[" * 50_000, b""],
    ids=["cut", "text", "nan", "bytes", "bytes-in-string", "bytes-in-array", "deep", "empty"],
)
def test_malformed_json_is_400(client: TestClient, body: bytes) -> None:
    answer = client.post("/events", content=body, headers={"content-type": "application/json"})
    assert answer.status_code == 400
    assert answer.json()["accepted"] is False
    assert answer.json()["errors"][0]["field"] == "body"


def test_an_id_of_10000_characters_is_400_naming_id(client: TestClient) -> None:
    answer = client.post("/events", json=event("x" * 10_000))
    assert answer.status_code == 400
    assert answer.json()["errors"][0]["field"] == "id"


def test_a_time_without_offset_is_400(client: TestClient) -> None:
    answer = client.post("/events", json=event(time="2026-01-01T10:00:00"))
    assert answer.status_code == 400
    assert answer.json()["errors"][0]["field"] == "time"


def test_a_json_array_batch_is_answered_per_event(client: TestClient) -> None:
    client.post("/events", json=event("old"))
    batch = [event("new-1"), event("old"), event("bad", type="nope"), event("new-1")]
    answer = client.post("/events/batch", json=batch)
    assert answer.status_code == 202
    body = answer.json()
    assert [r.get("duplicate") for r in body["results"]] == [False, True, None, True]
    assert [r["accepted"] for r in body["results"]] == [True, True, False, True]
    assert body["results"][2]["errors"][0]["field"] == "events[2].type"
    assert (body["added"], body["duplicates"], body["rejected"]) == (1, 2, 1)


def test_an_ndjson_batch_is_accepted(client: TestClient) -> None:
    lines = "\n".join(json.dumps(event(f"n-{i}")) for i in range(5)) + "\n{oops\n"
    answer = client.post("/events/batch", content=lines, headers={"content-type": "application/x-ndjson"})
    assert answer.status_code == 202
    body = answer.json()
    assert body["added"] == 5
    assert body["results"][5]["errors"][0]["field"] == "events[5]"
    again = client.post("/events/batch", content=lines, headers={"content-type": "application/x-ndjson"})
    assert again.status_code == 200 and again.json()["duplicates"] == 5


def test_a_batch_with_no_valid_event_is_400(client: TestClient) -> None:
    answer = client.post("/events/batch", json=[event(time="yesterday")])
    assert answer.status_code == 400
    assert answer.json()["errors"][0]["field"] == "events[0].time"


def test_a_batch_over_the_event_limit_is_413(client: TestClient) -> None:
    answer = client.post("/events/batch", json=[event(f"e{i}") for i in range(LIMITS.batch_events + 1)])
    assert answer.status_code == 413


def test_errors_elsewhere_are_json_of_the_same_shape(client: TestClient) -> None:
    for answer in (client.get("/nowhere"), client.get("/events"), client.delete("/sessions")):
        assert answer.headers["content-type"] == "application/json"
        assert answer.status_code in (404, 405)
        assert set(answer.json()) <= {"accepted", "error", "errors"} and answer.json()["errors"][0]["message"]


def test_a_batch_item_that_is_not_an_object_is_named_by_its_index(client: TestClient) -> None:
    answer = client.post("/events/batch", json=[event("ok"), 42])
    assert answer.status_code == 202
    assert answer.json()["results"][1]["errors"][0]["field"] == "events[1]"


def test_an_unexpected_failure_is_a_json_500_without_a_traceback(events: EventStore) -> None:
    def broken(request: Request) -> str:
        raise RuntimeError("secret detail")

    with TestClient(create_app(events, tenant=broken), raise_server_exceptions=False) as client:
        answer = client.post("/events", json=event())
    assert answer.status_code == 500
    assert answer.json() == {
        "accepted": False,
        "error": "internal error",
        "errors": [{"field": None, "message": "internal error"}],
    }


# --- the event loop is never blocked by one request ------------------------------------------------------------------


def record_where(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[str]:
    """Where each call of ``module.name`` runs, in order: "loop" (the event loop's thread) or "worker"."""
    where: list[str] = []
    wrapped = getattr(module, name)

    def spy(*args: Any) -> Any:
        try:
            asyncio.get_running_loop()
            where.append("loop")
        except RuntimeError:
            where.append("worker")
        return wrapped(*args)

    monkeypatch.setattr(module, name, spy)
    return where


def _record_where_events_are_cleaned(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Where ``clean_event`` (the scrubbing, the slow part of validation) runs: "loop" or "worker"."""
    return record_where(monkeypatch, ingest, "clean_event")


def test_a_large_event_is_validated_off_the_event_loop(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 1 MiB event of digit groups took 19 s to scrub on the loop, and /health waited as long."""
    where = _record_where_events_are_cleaned(monkeypatch)
    assert client.post("/events", json=event(payload={"output": "1234 5678 " * 1000})).status_code == 202
    assert client.post("/events", json=event("small")).status_code == 202  # under INLINE_BYTES: the hop costs more
    assert where == ["worker", "loop"]


@pytest.mark.parametrize("ndjson", [False, True])
def test_a_batch_is_validated_off_the_event_loop(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, ndjson: bool
) -> None:
    where = _record_where_events_are_cleaned(monkeypatch)
    batch = [event(f"w-{i}", payload={"output": "1234 5678 " * 200}) for i in range(3)]
    if ndjson:
        body = "\n".join(json.dumps(e) for e in batch)
        answer = client.post("/events/batch", content=body, headers={"content-type": "application/x-ndjson"})
    else:
        answer = client.post("/events/batch", json=batch)
    assert answer.status_code == 202
    assert where == ["worker"] * 3


# --- the event limit of a batch is checked before its items are decoded ---------------------------------------------


@pytest.mark.parametrize("blank", ["", "\n \n"])
def test_an_ndjson_batch_over_the_event_limit_is_413_before_any_line_is_decoded(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, blank: str
) -> None:
    """16 MiB of ``{}`` lines took 34 s and 1.2 GB before the 413: every line was parsed first."""
    decoded: list[object] = []
    monkeypatch.setattr(ingest, "parse_json", lambda data, field: decoded.append(data))
    body = ("{}\n" + blank) * (LIMITS.batch_events * 50)
    answer = client.post("/events/batch", content=body, headers={"content-type": "application/x-ndjson"})
    assert answer.status_code == 413
    assert f"the limit is {LIMITS.batch_events}" in answer.json()["errors"][0]["message"]
    assert decoded == []


def test_blank_lines_do_not_count_toward_the_event_limit(client: TestClient) -> None:
    lines = [json.dumps(event(f"b-{i}")) for i in range(LIMITS.batch_events)]
    body = "\n\n  \r\n".join(lines) + "\n\t\n"
    answer = client.post("/events/batch", content=body, headers={"content-type": "application/x-ndjson"})
    assert answer.status_code == 202 and answer.json()["added"] == LIMITS.batch_events


def test_a_json_array_over_the_event_limit_is_413_before_any_item_is_validated(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    where = _record_where_events_are_cleaned(monkeypatch)
    answer = client.post("/events/batch", json=[event(f"e{i}") for i in range(LIMITS.batch_events + 1)])
    assert answer.status_code == 413
    assert where == []
