"""GET /metrics: JSON by default, Prometheus text when asked; the caller's tenant only."""

from __future__ import annotations

import re

import pytest
from starlette.testclient import TestClient

from tests.server.test_ingest import event


def ingest_some(client: TestClient) -> None:
    client.post("/events", json=event("1", type="task.created"))
    client.post("/events", json=event("2", type="task.completed"))
    client.post("/events", json=event("3", type="task.failed", session_id="s2"))
    client.post("/events", json=event("1", type="task.created"))  # a duplicate
    client.post("/events", json=event("bad", type="nope"))  # rejected
    client.post("/events/batch", json=[event("4", type="tool.called"), event("x", time="noon")])
    client.post("/events", json=event("1"), headers={"x-test-tenant": "other"})


def test_json_metrics_count_the_callers_tenant_only(client: TestClient) -> None:
    ingest_some(client)
    body = client.get("/metrics").json()
    assert body["tenant"] == "dev"
    assert body["replica"] == {"events_ingested": 4, "duplicates": 1, "rejected": 2}
    stored = body["stored"]
    assert stored["events"] == 4 and stored["sessions"] == 2
    assert (stored["runs_completed"], stored["runs_failed"]) == (1, 1)
    assert stored["events_by_type"] == {"task.completed": 1, "task.created": 1, "task.failed": 1, "tool.called": 1}
    other = client.get("/metrics", headers={"x-test-tenant": "other"}).json()
    assert other["replica"] == {"events_ingested": 1, "duplicates": 0, "rejected": 0}
    assert other["stored"]["events"] == 1
    assert client.get("/metrics", headers={"x-test-tenant": "nobody"}).json()["stored"]["events"] == 0


_SAMPLE = re.compile(r'^afteraction_[a-z_]+\{tenant="[^"]*"(,[a-z]+="[^"]*")*\} \d+$')


@pytest.mark.parametrize(
    ("params", "headers"),
    [
        ({"format": "prometheus"}, {}),
        ({}, {"accept": "text/plain;version=0.0.4"}),
        ({}, {"accept": "application/openmetrics-text; version=1.0.0,text/plain;q=0.5"}),
    ],
)
def test_prometheus_text_when_asked(client: TestClient, params: dict[str, str], headers: dict[str, str]) -> None:
    ingest_some(client)
    answer = client.get("/metrics", params=params, headers=headers)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    lines = answer.text.splitlines()
    for line in lines:
        assert line.startswith(("# HELP ", "# TYPE ")) or _SAMPLE.match(line), line
    assert 'afteraction_events_ingested_total{tenant="dev"} 4' in lines
    assert 'afteraction_events_duplicate_total{tenant="dev"} 1' in lines
    assert 'afteraction_events_rejected_total{tenant="dev"} 2' in lines
    assert 'afteraction_events_stored{tenant="dev",type="tool.called"} 1' in lines
    assert 'afteraction_sessions_stored{tenant="dev"} 2' in lines
    assert 'afteraction_runs_ended{tenant="dev",outcome="failed"} 1' in lines
    assert "other" not in answer.text


def test_json_wins_when_accept_prefers_it_and_a_bad_format_is_400(client: TestClient) -> None:
    assert client.get("/metrics", headers={"accept": "application/json, text/plain"}).json()["tenant"] == "dev"
    answer = client.get("/metrics", params={"format": "xml"})
    assert answer.status_code == 400 and answer.json()["errors"][0]["field"] == "format"


@pytest.mark.parametrize(
    ("accept", "prometheus"),
    [
        ("text/plain;q=0.1, application/json", False),
        ("application/json;q=0.1, text/plain", True),
        ("application/openmetrics-text; version=1.0.0, */*;q=0.5", True),
        ("text/plain;q=0, application/json", False),
        ("image/png", False),
    ],
)
def test_accept_is_read_by_its_q_values(client: TestClient, accept: str, prometheus: bool) -> None:
    answer = client.get("/metrics", headers={"accept": accept})
    assert answer.headers["content-type"].startswith("text/plain") is prometheus


def test_a_tenant_name_is_escaped_in_labels(client: TestClient) -> None:
    client.post("/events", json=event(), headers={"x-test-tenant": 'we"ird\\'})
    text = client.get("/metrics", params={"format": "prometheus"}, headers={"x-test-tenant": 'we"ird\\'}).text
    assert 'afteraction_sessions_stored{tenant="we\\"ird\\\\"} 1' in text.splitlines()


def test_rejected_counts_events_refused_by_validation_on_either_route(client: TestClient) -> None:
    """h30: a single event over the body limit (413) or sent `Content-Encoding: br` (415) counted as rejected, the
    same refusals of a batch did not; neither is an event refused by validation, as the counter says."""
    big = event("big", payload={"text": "x" * (70 * 1024)})  # over the tests' 64 KiB event limit
    assert client.post("/events", json=big).status_code == 413
    br = {"content-type": "application/json", "content-encoding": "br"}
    assert client.post("/events", content=b'{"id": "1"}', headers=br).status_code == 415
    assert client.post("/events/batch", content=b"[{}]", headers=br).status_code == 415
    assert client.post("/events", json=event("bad", type="nope")).status_code == 400
    assert client.post("/events/batch", json=[event("x", time="noon")]).status_code == 400
    assert client.get("/metrics").json()["replica"]["rejected"] == 2
