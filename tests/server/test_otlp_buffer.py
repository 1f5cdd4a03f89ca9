"""The span buffer behind ``POST /v1/traces``: a tenant's held spans are placed only by that
tenant's later export; a trace past the buffer's bounds is resolved as it is; spans that arrive
after their trace's root was placed wait for the age bound, then are placed as they are; held spans
survive a kill -9 of the server."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from starlette.testclient import TestClient

from afteraction.core.assemble import assemble
from afteraction.core.otlp_events import map_spans
from afteraction.core.otlp_spans import Span, decode_traces
from afteraction.model import Event
from afteraction.server import Limits, create_app
from afteraction.server.otlp import gather
from afteraction.store.events import EventStore
from afteraction.store.spans import Bounds, SpanBuffer, open_spans
from tests.core.test_otlp_conformance import CAPTURES, EXPECTED, SCOPE, check_runs
from tests.server.conftest import tenant_from_header
from tests.server.test_otlp import stored
from tests.serving import started

FOLDER = "openai-agents-openinference"


@pytest.fixture
def otlp(events: EventStore) -> Iterator[TestClient]:
    app = create_app(events, tenant=tenant_from_header, limits=Limits(page=500))
    with TestClient(app, raise_server_exceptions=False) as found:
        yield found


def _capture() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The capture as OTLP JSON data, and its spans (one resource, one scope)."""
    data = MessageToDict(ExportTraceServiceRequest.FromString((CAPTURES / FOLDER / "request-1.pb").read_bytes()))
    (resource,) = data["resourceSpans"]
    (scope,) = resource["scopeSpans"]
    return data, scope["spans"]


def _request(spans: list[dict[str, Any]]) -> dict[str, Any]:
    data, _ = _capture()
    data["resourceSpans"][0]["scopeSpans"][0]["spans"] = spans
    return data


def test_a_tenant_cannot_see_or_complete_another_tenants_buffered_spans(otlp: TestClient, events: EventStore) -> None:
    _, spans = _capture()
    children = [s for s in spans if s.get("parentSpanId")]
    roots = [s for s in spans if not s.get("parentSpanId")]
    acme, globex = {"x-test-tenant": "acme"}, {"x-test-tenant": "globex"}
    assert otlp.post("/v1/traces", json=_request(children), headers=acme).status_code == 200
    assert stored(otlp, "acme") == []  # held: nothing above them yet

    assert otlp.post("/v1/traces", json=_request(roots), headers=globex).status_code == 200
    (theirs,) = assemble(stored(otlp, "globex"), SCOPE)  # the root alone: acme's spans are not placed
    assert (theirs.agent, theirs.calls) == ("trip_planner", ())
    buffer = open_spans(events.store)
    assert buffer.summary("globex") == []
    assert sum(s.spans for s in buffer.summary("acme")) == len(children)

    assert otlp.post("/v1/traces", json=_request(roots), headers=acme).status_code == 200
    check_runs(assemble(stored(otlp, "acme"), SCOPE), EXPECTED[FOLDER][1])
    assert buffer.summary("acme") == []


def _spans() -> list[Span]:
    return list(decode_traces(_request(_capture()[1])).spans)


@pytest.fixture
def buffer(events: EventStore) -> SpanBuffer:
    return open_spans(events.store)


def test_a_trace_over_the_per_trace_bound_is_resolved_as_it_is(buffer: SpanBuffer) -> None:
    spans = _spans()
    children = [s for s in spans if s.parent_id is not None]
    small = Bounds(trace_spans=3, tenant_spans=1_000, age=60)
    ready, freed = gather(buffer, "acme", children[:3], now=100.0, bounds=small)
    assert (ready, freed) == ([], [])
    ready, freed = gather(buffer, "acme", children[3:5], now=101.0, bounds=small)
    assert sorted(s.span_id for s in ready) == sorted(s.span_id for s in children[:5])
    assert sorted(freed) == sorted((s.trace_id, s.span_id) for s in children[:5])
    assert map_spans(ready).events  # placed as they are: a detached session of their tool and model calls


def test_held_spans_are_resolved_as_they_are_once_they_pass_the_age_bound(buffer: SpanBuffer) -> None:
    spans = _spans()
    root = next(s for s in spans if s.parent_id is None)
    late = [s for s in spans if s.parent_id is not None]
    bounds = Bounds(trace_spans=100, tenant_spans=1_000, age=60)
    assert gather(buffer, "acme", [root], now=100.0, bounds=bounds) == ([root], [])  # the root first: placed
    assert gather(buffer, "acme", late, now=101.0, bounds=bounds) == ([], [])  # after it: wait
    assert gather(buffer, "acme", [], now=160.0, bounds=bounds) == ([], [])
    ready, freed = gather(buffer, "acme", [], now=161.0, bounds=bounds)  # the next export after 60 s
    assert sorted(s.span_id for s in ready) == sorted(s.span_id for s in late) and len(freed) == len(late)


def test_over_the_tenant_bound_the_oldest_trace_is_resolved_first(buffer: SpanBuffer) -> None:
    spans = _spans()
    children = [s for s in spans if s.parent_id is not None]
    other = [Span(**{**_fields(s), "trace_id": "f" * 32}) for s in children[:2]]
    bounds = Bounds(trace_spans=100, tenant_spans=len(children), age=60)
    assert gather(buffer, "acme", children, now=100.0, bounds=bounds) == ([], [])
    ready, freed = gather(buffer, "acme", other, now=101.0, bounds=bounds)
    assert {s.trace_id for s in ready} == {children[0].trace_id}
    buffer.drop("acme", freed)  # what the route does once their events are stored
    assert [s.spans for s in buffer.summary("acme")] == [2]


def _fields(span: Span) -> dict[str, Any]:
    return {name: getattr(span, name) for name in Span.__slots__}


def test_held_spans_survive_kill_9_of_the_server_and_are_placed_after_the_restart(tmp_path: Path) -> None:
    _, spans = _capture()
    children = [s for s in spans if s.get("parentSpanId")]
    roots = [s for s in spans if not s.get("parentSpanId")]
    db = tmp_path / "held.db"
    with started(db, "--dev") as (process, url):
        assert httpx.post(f"{url}/v1/traces", json=_request(children), timeout=30).status_code == 200
        os.kill(process.pid, signal.SIGKILL)  # acknowledged, held, and no shutdown
        process.wait()
    with started(db, "--dev") as (_, url), httpx.Client(base_url=url, timeout=30) as http:
        assert http.get("/sessions").json()["sessions"] == []
        assert http.post("/v1/traces", json=_request(roots)).status_code == 200
        sessions = http.get("/sessions").json()["sessions"]
        events = [
            Event.from_dict(data)
            for session in sessions
            for data in http.get(f"/sessions/{session['session_id']}/events").json()["events"]
        ]
    check_runs(assemble(events, SCOPE), EXPECTED[FOLDER][1])


def test_a_waiting_span_is_held_scrubbed_of_secrets(buffer: SpanBuffer) -> None:
    """Secrets are never stored, not even while a span waits for its ancestors (the buffer is a table)."""
    key = "sk-proj-Held0123456789abcdefghijklmn"
    child = next(s for s in _spans() if s.parent_id is not None)
    dirty = Span(
        **{
            **_fields(child),
            "name": f"execute_tool lookup {key}",
            "attributes": {**child.attributes, "gen_ai.tool.call.arguments": f'{{"api_key": "{key}"}}'},
            "resource": {**child.resource, "service.name": "svc https://admin:s3cretHeldpw@host/"},
        }
    )
    assert gather(buffer, "acme", [dirty], now=100.0) == ([], [])
    released = buffer.release("acme", {dirty.trace_id}, now=101.0, bounds=Bounds())
    (held,) = released.spans
    assert key not in held.data and "s3cretHeldpw" not in held.data
    assert "execute_tool lookup" in held.data  # the rest is kept
