"""POST /v1/traces answers as an OTLP/HTTP collector does, stores the runs every capture describes
(read back through the API), dedups a re-sent export, and gives bad input a 4xx, never a 5xx."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from starlette.testclient import TestClient

from afteraction.core.assemble import assemble
from afteraction.model import Event
from afteraction.server import Limits, create_app
from afteraction.server import otlp as otlp_route
from afteraction.store.sqlite_events import SQLiteEvents
from tests.core.test_otlp_conformance import CAPTURES, EXPECTED, SCOPE, check_runs, encodings
from tests.server.conftest import tenant_from_header

JSON_TYPE = {"content-type": "application/json"}
PB_TYPE = {"content-type": "application/x-protobuf"}
LIMIT = 256 * 1024
FIELD = descriptor_pb2.FieldDescriptorProto
CASES = [(folder, n, path) for folder in sorted(EXPECTED) for n in (1, 2) for path in encodings(folder, n)]


@pytest.fixture
def otlp(events: SQLiteEvents) -> Iterator[TestClient]:
    app = create_app(events, tenant=tenant_from_header, limits=Limits(traces_bytes=LIMIT, page=500))
    with TestClient(app, raise_server_exceptions=False) as found:
        yield found


def post(client: TestClient, path: Path, **headers: str) -> Any:
    media = "application/x-protobuf" if path.suffix == ".pb" else "application/json"
    return client.post("/v1/traces", content=path.read_bytes(), headers={"content-type": media, **headers})


def stored(client: TestClient, tenant: str = "dev") -> list[Event]:
    """Every event of the tenant, read back through the API."""
    headers = {"x-test-tenant": tenant}
    sessions = client.get("/sessions", params={"limit": 500}, headers=headers).json()["sessions"]
    found = []
    for session in sessions:
        answer = client.get(f"/sessions/{session['session_id']}/events", headers=headers)
        found += [Event.from_dict(data) for data in answer.json()["events"]]
    return found


def trace_request(*spans: dict[str, Any]) -> dict[str, Any]:
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "t"}, "spans": list(spans)}]}]}


def span(span_id: str, name: str, parent: str = "", **attributes: Any) -> dict[str, Any]:
    return {
        "traceId": "0af7651916cd43dd8448eb211c80319c",
        "spanId": span_id,
        "parentSpanId": parent,
        "name": name,
        "startTimeUnixNano": "1795964213578647569",
        "endTimeUnixNano": "1795964213637800709",
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attributes.items()],
    }


AGENT = span("b7ad6b7169203331", "invoke_agent a", **{"gen_ai.operation.name": "invoke_agent"})


@pytest.mark.parametrize(("folder", "n", "path"), CASES, ids=[f"{f}-{p.name}" for f, _, p in CASES])
def test_every_capture_in_every_encoding_is_stored_as_the_runs_of_its_run_md(
    otlp: TestClient, folder: str, n: int, path: Path
) -> None:
    answer = post(otlp, path)
    assert answer.status_code == 200, answer.text
    if path.suffix == ".pb":
        assert answer.headers["content-type"] == "application/x-protobuf"
        assert ExportTraceServiceResponse.FromString(answer.content) == ExportTraceServiceResponse()
    else:
        assert answer.json() == {}
    check_runs(assemble(stored(otlp), SCOPE), EXPECTED[folder][n])


def test_a_re_sent_export_adds_nothing_and_a_gzipped_one_is_the_same(otlp: TestClient) -> None:
    path = CAPTURES / "langgraph-openllmetry" / "request-1.pb"
    assert post(otlp, path).status_code == 200
    first = sorted(e.id for e in stored(otlp))
    zipped = gzip.compress(path.read_bytes())
    again = otlp.post("/v1/traces", content=zipped, headers={**PB_TYPE, "content-encoding": "gzip"})
    assert again.status_code == 200
    assert sorted(e.id for e in stored(otlp)) == first
    json_twin = post(otlp, CAPTURES / "langgraph-openllmetry" / "request-1.json")
    assert json_twin.status_code == 200 and sorted(e.id for e in stored(otlp)) == first


def test_tenants_do_not_share_dedup(otlp: TestClient) -> None:
    path = CAPTURES / "agent-framework-builtin" / "request-2.pb"
    assert post(otlp, path).status_code == 200
    assert post(otlp, path, **{"x-test-tenant": "other"}).status_code == 200
    assert sorted(e.id for e in stored(otlp)) == sorted(e.id for e in stored(otlp, "other")) != []


def test_spans_that_cannot_be_read_are_rejected_by_count_in_the_request_encoding(otlp: TestClient) -> None:
    bad = {**span("00f067aa0ba902b7", "execute_tool x"), "traceId": "zz"}
    tool = span("00f067aa0ba902b8", "execute_tool t", AGENT["spanId"], **{"gen_ai.tool.name": "t"})
    answer = otlp.post("/v1/traces", json=trace_request(AGENT, bad, tool))
    assert answer.status_code == 200
    partial = answer.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "1" and "traceId" in partial["errorMessage"]
    (run,) = assemble(stored(otlp), SCOPE)
    assert [c.tool for c in run.calls] == ["t"]

    message = ExportTraceServiceRequest()
    message.resource_spans.add().scope_spans.add().spans.add(trace_id=b"\x01" * 16, span_id=b"", name="x")
    answer = otlp.post("/v1/traces", content=message.SerializeToString(), headers=PB_TYPE)
    assert answer.status_code == 200
    assert ExportTraceServiceResponse.FromString(answer.content).partial_success.rejected_spans == 1


@pytest.mark.parametrize(
    ("headers", "body", "status", "field"),
    [
        (JSON_TYPE, b"{not json", 400, "body"),
        (JSON_TYPE, b"[1, 2]", 400, "body"),
        (JSON_TYPE, b'{"resourceSpans": {"a": 1}}', 400, "resourceSpans"),
        (
            JSON_TYPE,
            b'{"resourceSpans": [{"scopeSpans": [{"spans": 7}]}]}',
            400,
            "resourceSpans[0].scopeSpans[0].spans",
        ),
        (JSON_TYPE, b"\xff\xfe", 400, "body"),
        (JSON_TYPE, b"[" * 100_000, 400, "body"),
        ({"content-type": "text/plain"}, b"{}", 415, "content-type"),
        ({}, b"{}", 415, "content-type"),
        ({**JSON_TYPE, "content-encoding": "br"}, b"{}", 415, "content-encoding"),
        ({**JSON_TYPE, "content-encoding": "gzip"}, b"not gzip at all", 400, "body"),
        ({**JSON_TYPE, "content-encoding": "gzip"}, gzip.compress(b"{}")[:-6], 400, "body"),
        (JSON_TYPE, b" " * (LIMIT + 1), 413, None),
    ],
    ids=[
        "malformed-json",
        "json-not-an-object",
        "resourceSpans-not-a-list",
        "spans-not-a-list",
        "not-utf8",
        "deeply-nested",
        "text-plain",
        "no-content-type",
        "brotli",
        "bad-gzip",
        "truncated-gzip",
        "over-the-limit",
    ],
)
def test_bad_input_gets_a_4xx_json_error_naming_the_problem(
    otlp: TestClient, headers: dict[str, str], body: bytes, status: int, field: str | None
) -> None:
    answer = otlp.post("/v1/traces", content=body, headers=headers)
    assert answer.status_code == status, answer.text
    (error,) = answer.json()["errors"]
    assert error["field"] == field and error["message"]


def _status_class() -> Any:
    """google.rpc.Status (code = 1, message = 2), built here: its package is not a dependency."""
    proto = descriptor_pb2.FileDescriptorProto(name="test_status.proto", package="test.rpc")
    message = proto.message_type.add(name="Status")
    message.field.add(name="code", number=1, type=FIELD.TYPE_INT32, label=FIELD.LABEL_OPTIONAL)
    message.field.add(name="message", number=2, type=FIELD.TYPE_STRING, label=FIELD.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("test.rpc.Status"))


@pytest.mark.parametrize(
    ("headers", "body", "status", "code", "text"),
    [
        (PB_TYPE, b"\x0a\xff\xff\xff\xff\x0f", 400, 3, "body: is not a protobuf ExportTraceServiceRequest"),
        ({**PB_TYPE, "content-encoding": "gzip"}, b"not gzip", 400, 3, "body: is not valid gzip"),
        ({**PB_TYPE, "content-encoding": "br"}, b"", 415, 12, "content-encoding: must be gzip or none"),
        (PB_TYPE, b"\0" * (LIMIT + 1), 413, 8, "the limit"),
    ],
    ids=["truncated", "bad-gzip", "brotli", "over-the-limit"],
)
def test_a_protobuf_client_gets_its_error_as_a_protobuf_status(
    otlp: TestClient, headers: dict[str, str], body: bytes, status: int, code: int, text: str
) -> None:
    answer = otlp.post("/v1/traces", content=body, headers=headers)
    assert answer.status_code == status
    assert answer.headers["content-type"] == "application/x-protobuf"
    found = _status_class().FromString(answer.content)
    assert found.code == code and text in found.message


def test_every_truncation_of_a_protobuf_capture_gets_200_or_400(otlp: TestClient) -> None:
    body = (CAPTURES / "agent-framework-builtin" / "request-1.pb").read_bytes()
    statuses = {otlp.post("/v1/traces", content=body[:cut], headers=PB_TYPE).status_code for cut in range(0, 600, 7)}
    assert statuses <= {200, 400} and 400 in statuses


def test_a_gzip_bomb_gets_413_without_inflating_it(otlp: TestClient) -> None:
    bomb = gzip.compress(b"\0" * (64 << 20))  # 64 MiB of zeros in ~64 KiB
    assert len(bomb) < LIMIT
    answer = otlp.post("/v1/traces", content=bomb, headers={**JSON_TYPE, "content-encoding": "gzip"})
    assert answer.status_code == 413
    assert "decompressed" in answer.json()["errors"][0]["message"]


def test_a_huge_attribute_value_is_stored_cut_not_refused(otlp: TestClient) -> None:
    huge = "x" * 200_000
    tool = span("00f067aa0ba902b8", "execute_tool t", AGENT["spanId"], **{"gen_ai.tool.name": "t"})
    tool["attributes"].append({"key": "gen_ai.tool.call.result", "value": {"stringValue": huge}})
    answer = otlp.post("/v1/traces", json=trace_request(AGENT, tool))
    assert answer.status_code == 200
    (run,) = assemble(stored(otlp), SCOPE)
    assert isinstance(run.calls[0].result, str) and 4096 <= len(run.calls[0].result) < 5000


def test_secrets_in_content_attributes_are_redacted_before_they_are_stored(otlp: TestClient) -> None:
    key = "sk-proj-" + "Ab3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5kL7n"
    args = json.dumps({"city": "Lisbon", "api_key": "hunter2", "note": f"use {key}"})
    tool = span("00f067aa0ba902b8", "execute_tool t", AGENT["spanId"], **{"gen_ai.tool.call.arguments": args})
    tool["attributes"].append({"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}})
    assert otlp.post("/v1/traces", json=trace_request(AGENT, tool)).status_code == 200
    text = json.dumps([e.to_dict() for e in stored(otlp)])
    assert "hunter2" not in text and key not in text and "Lisbon" in text


def test_secrets_anywhere_in_a_span_are_redacted_before_they_are_stored(otlp: TestClient) -> None:
    """Not only the content attributes: the span's name, the agent's and tool's names, the scope and
    the resource reach the stored events too (source, subject, payload, extensions)."""
    key = "ghp_" + "Dd1Ee2Ff3Gg4Hh5Jj6Kk7Ll8Mm9Nn0Pp1Qq2"
    agent = span("b7ad6b7169203331", f"invoke_agent a {key}", **{"gen_ai.operation.name": "invoke_agent"})
    agent["attributes"].append({"key": "gen_ai.agent.name", "value": {"stringValue": f"agent {key}"}})
    tool = span("00f067aa0ba902b8", f"execute_tool t {key}", agent["spanId"], **{"gen_ai.tool.name": f"tool_{key}"})
    tool["attributes"].append({"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}})
    request = trace_request(agent, tool)
    request["resourceSpans"][0]["resource"] = {
        "attributes": [{"key": "service.name", "value": {"stringValue": "svc https://admin:s3cretResourcepw@host/"}}]
    }
    request["resourceSpans"][0]["scopeSpans"][0]["scope"] = {"name": f"scope {key}"}
    assert otlp.post("/v1/traces", json=request).status_code == 200
    text = json.dumps([e.to_dict() for e in stored(otlp)])
    assert "execute_tool" in text
    assert key[4:] not in text and "s3cretResourcepw" not in text


def test_events_from_traces_are_counted_in_the_metrics(otlp: TestClient) -> None:
    path = CAPTURES / "agent-framework-builtin" / "request-1.pb"
    assert post(otlp, path).status_code == 200
    first = otlp.get("/metrics").json()["replica"]
    assert first["events_ingested"] == len(stored(otlp)) > 0 and first["duplicates"] == 0
    assert post(otlp, path).status_code == 200
    again = otlp.get("/metrics").json()["replica"]
    assert again["events_ingested"] == first["events_ingested"] and again["duplicates"] == first["events_ingested"]
    bad = trace_request({**AGENT, "spanId": "zz"})
    assert otlp.post("/v1/traces", json=bad).status_code == 200
    assert otlp.get("/metrics").json()["replica"]["rejected"] == 1


def test_a_span_that_is_its_own_parent_or_a_cycle_does_not_hang(otlp: TestClient) -> None:
    one = span("00f067aa0ba902b1", "invoke_agent a", "00f067aa0ba902b2", **{"gen_ai.operation.name": "invoke_agent"})
    two = span("00f067aa0ba902b2", "invoke_agent b", "00f067aa0ba902b1", **{"gen_ai.operation.name": "invoke_agent"})
    three = span("00f067aa0ba902b3", "invoke_agent c", "00f067aa0ba902b3", **{"gen_ai.operation.name": "invoke_agent"})
    assert otlp.post("/v1/traces", json=trace_request(one, two, three)).status_code == 200
    runs = assemble(stored(otlp), SCOPE)
    assert sorted(run.agent or "" for run in runs) == ["a", "b", "c"]
    assert otlp.get(f"/sessions/{runs[0].id}/tree").status_code == 200


def test_a_run_split_over_two_exports_children_first_is_the_same_run(otlp: TestClient) -> None:
    """A batching exporter sends children as they end, the agent span later (here: its own export)."""
    path = CAPTURES / "agent-framework-builtin" / "request-1.pb"
    whole = ExportTraceServiceRequest.FromString(path.read_bytes())
    spans = list(whole.resource_spans[0].scope_spans[0].spans)
    root = next(s for s in spans if not s.parent_span_id)
    for part in ([s for s in spans if s is not root], [root]):
        message = ExportTraceServiceRequest()
        message.CopyFrom(whole)
        del message.resource_spans[0].scope_spans[0].spans[:]
        message.resource_spans[0].scope_spans[0].spans.extend(part)
        assert otlp.post("/v1/traces", content=message.SerializeToString(), headers=PB_TYPE).status_code == 200
    check_runs(assemble(stored(otlp), SCOPE), EXPECTED["agent-framework-builtin"][1])
    before = sorted(e.id for e in stored(otlp))
    assert post(otlp, path).status_code == 200
    assert sorted(e.id for e in stored(otlp)) == before  # the whole export, re-sent, adds nothing


def _tiny_spans(count: int) -> bytes:
    """A protobuf export of ``count`` spans of one trace, the smallest a span can be."""
    request = ExportTraceServiceRequest()
    spans = request.resource_spans.add().scope_spans.add().spans
    for i in range(count):
        spans.add(trace_id=b"\1" * 16, span_id=(i + 1).to_bytes(8, "big"), name="execute_tool t")
    return request.SerializeToString()


def test_an_export_of_more_spans_than_the_cap_is_413_before_it_is_mapped(events: SQLiteEvents) -> None:
    """159,670 tiny spans in 16 MiB took 333 s and 1.4 GB: there was no cap on spans per request."""
    app = create_app(events, tenant=tenant_from_header, limits=Limits(traces_bytes=16 << 20))
    body = _tiny_spans(otlp_route.SPANS_PER_REQUEST + 1)
    with TestClient(app, raise_server_exceptions=False) as client:
        answer = client.post("/v1/traces", content=body, headers=PB_TYPE)
        assert answer.status_code == 413
        found = _status_class().FromString(answer.content)
        assert found.code == 8 and f"the limit is {otlp_route.SPANS_PER_REQUEST}" in found.message
        as_json = json.dumps(MessageToDict(ExportTraceServiceRequest.FromString(body)))
        answer = client.post("/v1/traces", content=as_json, headers=JSON_TYPE)
        assert answer.status_code == 413
        assert f"the limit is {otlp_route.SPANS_PER_REQUEST}" in answer.json()["errors"][0]["message"]
    assert stored(client) == []


def test_an_export_at_the_span_cap_is_taken(otlp: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(otlp_route, "SPANS_PER_REQUEST", 3)
    assert otlp.post("/v1/traces", content=_tiny_spans(3), headers=PB_TYPE).status_code == 200
    assert otlp.post("/v1/traces", content=_tiny_spans(4), headers=PB_TYPE).status_code == 413
    spans = [span(f"{i:016x}", "execute_tool t", "b7ad6b7169203331") for i in range(1, 5)]
    assert otlp.post("/v1/traces", json=trace_request(AGENT, *spans[:2])).status_code == 200
    assert otlp.post("/v1/traces", json=trace_request(AGENT, *spans)).status_code == 413


def test_the_span_cap_counts_snake_case_json_too(otlp: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(otlp_route, "SPANS_PER_REQUEST", 2)
    spans = [span(f"{i:016x}", "execute_tool t") for i in range(1, 4)]
    body = {"resource_spans": [{"scope_spans": [{"spans": spans[:2]}, {"spans": spans[2:]}]}]}
    assert otlp.post("/v1/traces", json=body).status_code == 413
