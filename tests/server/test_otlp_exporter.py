"""The OpenTelemetry SDK's own OTLP/HTTP exporter, pointed at a real ``afteraction serve --dev`` on
loopback, delivers GenAI spans that become the run they describe: an exporter works unchanged."""

from __future__ import annotations

import json
from collections.abc import Sequence

import httpx
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExportResult
from opentelemetry.trace import Status, StatusCode

from afteraction.core.assemble import assemble
from afteraction.model import Event
from tests.core.test_otlp_conformance import SCOPE
from tests.server.test_serve import server  # noqa: F401  (the fixture: a real server in a subprocess)


class Recording(OTLPSpanExporter):
    """The SDK exporter, remembering what each export returned."""

    results: list[SpanExportResult]

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        result = super().export(spans)
        self.results.append(result)
        return result


def test_the_sdk_exporter_delivers_a_run_to_a_real_server(server: str) -> None:  # noqa: F811
    exporter = Recording(endpoint=f"{server}/v1/traces", compression=Compression.Gzip, timeout=10)
    exporter.results = []
    provider = TracerProvider(resource=Resource.create({"service.name": "exporter-test"}))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    tracer = provider.get_tracer("test.genai")
    user = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Refund order 42"}]}])
    asked = json.dumps([{"role": "assistant", "parts": [{"type": "tool_call", "id": "call_7", "name": "refund",
                                                          "arguments": {"order": 42}}]}])  # fmt: skip
    call = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "refund",
        "gen_ai.tool.call.arguments": '{"order": 42}',
    }
    with tracer.start_as_current_span("invoke_agent refunder") as agent:
        agent.set_attributes({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "refunder"})
        with tracer.start_as_current_span("chat m") as chat:
            chat.set_attributes({"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
                                 "gen_ai.input.messages": user, "gen_ai.output.messages": asked})  # fmt: skip
        with tracer.start_as_current_span("execute_tool refund") as tool:
            tool.set_attributes({**call, "error.type": "LockHeldError"})
            tool.record_exception(RuntimeError("refund lock is held"))
            tool.set_status(Status(StatusCode.ERROR, "refund lock is held"))
        with tracer.start_as_current_span("execute_tool refund") as retry:
            retry.set_attributes({**call, "gen_ai.tool.call.result": "issued"})
    assert provider.force_flush(10_000)
    provider.shutdown()
    assert exporter.results and all(r is SpanExportResult.SUCCESS for r in exporter.results)

    with httpx.Client(base_url=server, timeout=10) as http:
        sessions = http.get("/sessions").json()["sessions"]
        events = [
            Event.from_dict(e)
            for s in sessions
            for e in http.get(f"/sessions/{s['session_id']}/events").json()["events"]
        ]
    (run,) = assemble(events, SCOPE)
    assert (run.agent, run.task, run.state) == ("refunder", "Refund order 42", "completed")
    assert [(c.tool, dict(c.args), c.call_id, c.error, c.result) for c in run.calls] == [
        ("refund", {"order": 42}, "call_7", "LockHeldError: refund lock is held", None),
        ("refund", {"order": 42}, None, None, "issued"),
    ]
