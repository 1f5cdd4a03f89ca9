"""A key's event rate: every event or span a request carries takes one from the key's event bucket,
charged once they are counted and before any is stored. A batch over the key's event_burst is 413,
one the bucket lacks tokens for now is 429 with Retry-After, and either stores nothing; a key
without an event rate is not charged. Created and listed through /admin/keys and `keys create`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from afteraction.server import Limits
from afteraction.server import otlp as otlp_route
from afteraction.server.ratelimit import RateLimiter
from afteraction.store.keys import DEFAULT_EVENT_BURST
from tests.server.keyed import Keyed, bearer, keyed
from tests.server.test_auth_serve import cli
from tests.server.test_ingest import event
from tests.server.test_otlp import AGENT, JSON_TYPE, PB_TYPE, _status_class, span, trace_request


@pytest.fixture
def clock() -> list[float]:
    return [0.0]


@pytest.fixture
def server(tmp_path: Path, clock: list[float]) -> Iterator[Keyed]:
    """A server taking batches of up to 1,000 events, its buckets on a clock the test moves."""
    with keyed(tmp_path / "events.db", limits=Limits(batch_events=1000, batch_bytes=4 << 20)) as found:
        found.auth.limiter = RateLimiter(lambda: clock[0])
        yield found


def batch(prefix: str, n: int) -> list[dict[str, Any]]:
    return [event(f"{prefix}-{i}") for i in range(n)]


def stored(server: Keyed, token: str) -> int:
    answer = server.client.get("/metrics", headers=bearer(token))
    assert answer.status_code == 200, answer.text
    count: int = answer.json()["stored"]["events"]
    return count


# the limiter


def test_a_take_of_n_tokens_needs_n_and_a_refusal_takes_nothing() -> None:
    now = [0.0]
    limiter = RateLimiter(lambda: now[0])
    assert limiter.take("k", 10.0, 100, 60) == 0  # 40 left
    assert limiter.take("k", 10.0, 100, 50) == 1  # 10 short at 10/s: 1 s
    assert limiter.take("k", 10.0, 100, 40) == 0  # the refusal took nothing
    assert limiter.take("k", 10.0, 100, 100) == 10  # empty: 100 at 10/s
    now[0] = 10.0
    assert limiter.take("k", 10.0, 100, 100) == 0
    assert limiter.take("k", 10.0, 100) == 1  # the default cost is one token
    for cost in (0, 101):
        with pytest.raises(ValueError, match="cannot be taken"):
            limiter.take("k", 10.0, 100, cost)


def test_the_sweep_drops_a_bucket_only_once_it_is_full_again() -> None:
    now = [0.0]
    limiter = RateLimiter(lambda: now[0], sweep_every=1)  # every take sweeps
    assert limiter.take("big", 1.0, 10_000, 10_000) == 0  # full again after 10,000 s
    now[0] = 3601.0  # idle over an hour, not yet full: it stays, and the key gets no fresh bucket
    assert limiter.take("other", 1.0, 1) == 0
    assert limiter.take("big", 1.0, 10_000, 10_000) == 10_000 - 3601
    now[0] = 20_000.0  # both full again: dropped (made afresh, full, they are the same)
    assert limiter.take("third", 1.0, 1) == 0
    assert set(limiter._buckets) == {"third"}


def test_the_default_event_burst_is_the_most_the_server_takes_in_one_request() -> None:
    assert DEFAULT_EVENT_BURST == Limits().batch_events == otlp_route.SPANS_PER_REQUEST


# AEP ingest


def test_a_batch_over_the_event_burst_is_413_naming_it_and_stores_nothing(server: Keyed) -> None:
    key, token = server.key(event_rate=100, event_burst=100)
    answer = server.client.post("/events/batch", json=batch("big", 150), headers=bearer(token))
    assert answer.status_code == 413, answer.text
    error = answer.json()["errors"][0]["message"]
    assert "150 events" in error and key.id in error and "event_burst of 100" in error
    assert stored(server, token) == 0
    assert server.client.post("/events/batch", json=batch("fits", 100), headers=bearer(token)).status_code == 202
    assert stored(server, token) == 100


def test_a_batch_the_bucket_lacks_tokens_for_is_429_with_retry_after(server: Keyed, clock: list[float]) -> None:
    """A key limited to 1 request/s stored ~7,000 events/s through big batches: now its events count."""
    key, token = server.key(rate=1000, event_rate=50, event_burst=50)
    free = server.token()  # the same tenant, no event rate: never charged
    assert server.client.post("/events/batch", json=batch("a", 50), headers=bearer(token)).status_code == 202
    refused = server.client.post("/events/batch", json=batch("b", 50), headers=bearer(token))
    assert refused.status_code == 429 and refused.headers["retry-after"] == "1"  # 50 events at 50/s
    body = refused.json()
    assert body["accepted"] is False and body["errors"][0]["field"] is None
    assert body["error"].startswith(f"key {key.id} is over its event_rate of 50 events/s (event_burst 50)")
    ndjson = "\n".join(json.dumps(e) for e in batch("c", 2)).encode()
    headers = {**bearer(token), "content-type": "application/x-ndjson"}
    assert server.client.post("/events/batch", content=ndjson, headers=headers).status_code == 429
    assert server.client.post("/events", json=event("one"), headers=bearer(token)).status_code == 429
    assert stored(server, token) == 50
    for round in range(3):
        assert (
            server.client.post("/events/batch", json=batch(f"free{round}", 1000), headers=bearer(free)).status_code
            == 202
        )
    clock[0] = 1.0  # 50 tokens back
    assert server.client.post("/events/batch", json=batch("b", 50), headers=bearer(token)).status_code == 202
    assert stored(server, token) == 3100


def test_a_single_event_costs_one_and_a_rate_refusal_is_not_a_rejection(server: Keyed, clock: list[float]) -> None:
    _, token = server.key(event_rate=0.5, event_burst=1)
    assert server.client.post("/events", json=event("1"), headers=bearer(token)).status_code == 202
    refused = server.client.post("/events", json=event("2"), headers=bearer(token))
    assert refused.status_code == 429 and refused.headers["retry-after"] == "2"
    assert server.client.get("/metrics", headers=bearer(token)).json()["replica"]["rejected"] == 0
    clock[0] = 2.0
    assert server.client.post("/events", json=event("2"), headers=bearer(token)).status_code == 202


# OTLP


def test_otlp_spans_are_charged_one_each_in_either_encoding(server: Keyed, clock: list[float]) -> None:
    key, token = server.key(event_rate=5, event_burst=10)
    children = [span(f"{i:016x}", "execute_tool t", AGENT["spanId"]) for i in range(1, 11)]
    first = server.client.post("/v1/traces", json=trace_request(AGENT, *children[:5]), headers=bearer(token))
    assert first.status_code == 200, first.text  # 6 spans: 4 left
    after_first = stored(server, token)
    assert after_first > 0
    refused = server.client.post("/v1/traces", json=trace_request(*children[5:]), headers=bearer(token))
    assert refused.status_code == 429 and refused.headers["retry-after"] == "1"  # 5 spans, 4 there, 5/s
    assert f"key {key.id} is over its event_rate" in refused.json()["errors"][0]["message"]
    message = ExportTraceServiceRequest()
    message.resource_spans.add().scope_spans.add().spans.add(trace_id=b"\1" * 16, span_id=b"\2" * 8, name="x")
    for _ in range(4):
        message.resource_spans[0].scope_spans[0].spans.add(trace_id=b"\1" * 16, span_id=b"\3" * 8, name="y")
    as_protobuf = server.client.post(
        "/v1/traces", content=message.SerializeToString(), headers={**bearer(token), **PB_TYPE}
    )
    assert as_protobuf.status_code == 429 and as_protobuf.headers["retry-after"] == "1"
    status = _status_class().FromString(as_protobuf.content)
    assert status.code == 8 and "event_rate" in status.message  # RESOURCE_EXHAUSTED
    too_many = [span(f"{i:016x}", "execute_tool t", AGENT["spanId"]) for i in range(20, 31)]
    over = server.client.post("/v1/traces", json=trace_request(*too_many), headers={**bearer(token), **JSON_TYPE})
    assert over.status_code == 413 and "event_burst of 10" in over.json()["errors"][0]["message"]
    assert stored(server, token) == after_first
    clock[0] = 1.0
    assert server.client.post("/v1/traces", json=trace_request(*children[5:]), headers=bearer(token)).status_code == 200


# creating keys


def test_an_admin_creates_and_lists_a_key_with_an_event_rate(server: Keyed) -> None:
    admin = bearer(server.token(scopes="admin"))
    body = {"scopes": ["write", "read"], "event_rate": 100, "event_burst": 120}
    made = server.client.post("/admin/keys", json=body, headers=admin)
    assert made.status_code == 201, made.text
    key = made.json()["key"]
    assert (key["event_rate"], key["event_burst"], key["rate"]) == (100.0, 120, None)
    assert key in server.client.get("/admin/keys", headers=admin).json()["keys"]
    token = made.json()["api_key"]
    assert server.client.post("/events/batch", json=batch("x", 121), headers=bearer(token)).status_code == 413
    default = server.client.post("/admin/keys", json={"scopes": ["write"], "event_rate": 2.5}, headers=admin)
    assert default.json()["key"]["event_burst"] == DEFAULT_EVENT_BURST


@pytest.mark.parametrize(
    ("options", "field", "rule"),
    [({"event_rate": -1}, "event_rate", "must be above 0"), ({"event_rate": 0}, "event_rate", "must be above 0"),
     ({"event_rate": "fast"}, "event_rate", "must be a number of events per second"),
     ({"event_rate": 1e300}, "event_rate", "at most 1e+06 events per second"),
     ({"event_burst": 5}, "event_burst", "needs an event_rate"),
     ({"event_rate": 1, "event_burst": 0}, "event_burst", "must be an integer from 1"),
     ({"event_rate": 1, "event_burst": 1.5}, "event_burst", "must be an integer from 1"),
     ({"event_rate": 1, "event_burst": True}, "event_burst", "must be an integer from 1")],
)  # fmt: skip
def test_a_bad_event_rate_is_400_naming_the_field_and_the_rule(
    server: Keyed, options: dict[str, Any], field: str, rule: str
) -> None:
    admin = bearer(server.token(scopes="admin"))
    answer = server.client.post("/admin/keys", json={"scopes": ["write"], **options}, headers=admin)
    assert answer.status_code == 400, answer.text
    error = answer.json()["errors"][0]
    assert error["field"] == field and rule in error["message"], answer.text


def test_keys_create_takes_an_event_rate_and_keys_list_shows_it(tmp_path: Path) -> None:
    db = str(tmp_path / "k.db")
    code, out = cli("keys", "create", "--db", db, "--tenant", "acme", "--scope", "write", "--json",
                    "--rate", "2/s", "--event-rate", "100/s", "--event-burst", "500")  # fmt: skip
    assert code == 0, out
    key = json.loads(out)["key"]
    assert (key["event_rate"], key["event_burst"]) == (100.0, 500)
    code, out = cli("keys", "create", "--db", db, "--tenant", "acme", "--scope", "read", "--event-rate", "0.5")
    assert code == 0, out
    listed = cli("keys", "list", "--db", db)[1].splitlines()
    assert "acme  write  2/s burst 2  100 events/s burst 500  active" in listed[0]
    assert f"acme  read  no rate limit  0.5 events/s burst {DEFAULT_EVENT_BURST}  active" in listed[1]


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--event-rate", "fast"], "--event-rate: must be events per second"), (["--event-burst", "5"], "--event-burst:"),
     (["--event-rate", "1/s", "--event-burst", "0"], "--event-burst:"), (["--event-rate", "0"], "--event-rate:")],
)  # fmt: skip
def test_keys_create_refuses_a_bad_event_rate(tmp_path: Path, args: list[str], message: str) -> None:
    code, out = cli("keys", "create", "--db", str(tmp_path / "k.db"), "--tenant", "acme", "--scope", "write", *args)
    assert code == 2 and message in out, out
