"""Every capture in ``conformance/otlp-genai/`` becomes the runs its ``run.md`` describes.

The expectations below are written from each folder's ``run.md`` (task, agents, tool calls in order with
their arguments and call ids, which call failed, the outcome), not from the mapping's output. Call ids
are expected only where the capture carries them (on the tool span, or in the model output that asked
for the call): the official openai-agents package records neither.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from afteraction.core.assemble import assemble
from afteraction.core.otlp_events import map_spans
from afteraction.core.otlp_spans import decode_traces
from afteraction.model import Event, Run, Scope
from tests.conftest import CONFORMANCE

CAPTURES = CONFORMANCE / "otlp-genai"
SCOPE = Scope(tenant="t", app="otlp", project="conformance")
TRIP = "Plan 2 nights in Lisbon: weather and a hotel."
DIVIDE = "What is 1 divided by 0?"
WEATHER = ("get_weather", {"city": "Lisbon"}, "call_weather_1", None)
HOTEL = ("book_hotel", {"city": "Lisbon", "nights": 2}, "call_hotel_1", "")
DIV = ("divide", {"a": 1, "b": 0}, "call_div_1", "division by zero")


@dataclass(frozen=True)
class Expected:
    agent: str
    parent: str | None  # the agent of the parent run
    state: str
    task: str | None  # None: the capture holds no content, the task is the agent's name
    calls: tuple[tuple[str, dict[str, Any], str | None, str | None], ...] = ()  # tool, args, call id, error text
    error: str | None = None  # text the run's error contains


def _oai(task: bool, ids: bool) -> dict[int, list[Expected]]:
    def call(spec: tuple[str, dict[str, Any], str, str | None]) -> tuple[str, dict[str, Any], str | None, str | None]:
        tool, args, call_id, error = spec
        return tool, args, call_id if ids else None, "Error running tool" if error == "" else error

    return {
        1: [
            Expected("trip_planner", None, "completed", TRIP if task else None),
            Expected("triage", "trip_planner", "completed", TRIP if task else None),
            Expected(
                "travel_assistant", "trip_planner", "completed", TRIP if task else None, (call(WEATHER), call(HOTEL))
            ),
        ],
        2: [
            Expected("calculator_run", None, "failed", DIVIDE if task else None, error="division by zero"),
            Expected(
                "calculator", "calculator_run", "failed", DIVIDE if task else None, (call(DIV),), "division by zero"
            ),
        ],
    }


_NO_ROOMS = (*HOTEL[:3], "no rooms left in Lisbon")
EXPECTED: dict[str, dict[int, list[Expected]]] = {
    "agent-framework-builtin": {
        1: [Expected("travel_assistant", None, "completed", TRIP, (WEATHER, _NO_ROOMS))],
        2: [Expected("calculator", None, "failed", DIVIDE, error="upstream returned 503")],
    },
    "langgraph-openllmetry": {
        1: [Expected("travel_assistant", None, "completed", TRIP, (WEATHER, _NO_ROOMS))],
        2: [Expected("calculator", None, "failed", DIVIDE, (DIV,), "division by zero")],
    },
    "openai-agents-openinference": _oai(task=True, ids=True),
    "openai-agents-otel-contrib": _oai(task=False, ids=False),
    "openai-agents-otel-contrib-otlpjson": _oai(task=False, ids=False),
}
FOLDERS = sorted(EXPECTED)
REQUESTS = [(folder, n) for folder in FOLDERS for n in (1, 2)]


def request_data(path: Path) -> Any:
    """A capture as OTLP JSON data: JSON files as they are, protobuf through its JSON mapping."""
    if path.suffix == ".pb":
        return MessageToDict(ExportTraceServiceRequest.FromString(path.read_bytes()))
    return json.loads(path.read_text(encoding="utf-8"))


def encodings(folder: str, n: int) -> list[Path]:
    found = [CAPTURES / folder / f"request-{n}.{suffix}" for suffix in ("json", "pb", "otlp.json")]
    return [path for path in found if path.exists()]


def check_runs(runs: list[Run], expected: list[Expected]) -> None:
    """The runs are exactly the expected ones, in order."""
    by_id = {run.id: run for run in runs}
    assert [run.agent for run in runs] == [e.agent for e in expected]
    for run, want in zip(runs, expected, strict=True):
        parent = by_id[run.parent_id].agent if run.parent_id in by_id else None
        assert (run.agent, parent, run.state) == (want.agent, want.parent, want.state)
        assert run.task == (want.task or want.agent)
        assert len(run.attempts) == 1
        calls = [(c.tool, dict(c.args), c.call_id) for c in run.calls]
        assert calls == [(tool, args, call_id) for tool, args, call_id, _ in want.calls]
        for call, (_, _, _, error) in zip(run.calls, want.calls, strict=True):
            if error is None:
                assert call.ok and call.result == "Sunny, 21C in Lisbon"
            else:
                assert call.error is not None and error in call.error
        if want.error is None:
            assert run.error is None
        else:
            assert run.error is not None and want.error in run.error
        assert run.trace_id == runs[0].trace_id  # one trace per run in every capture


def runs_of(events: list[Event]) -> list[Run]:
    return assemble(events, SCOPE)


@pytest.mark.parametrize(("folder", "n"), REQUESTS, ids=[f"{f}-request-{n}" for f, n in REQUESTS])
def test_every_encoding_of_a_capture_maps_to_the_same_events_and_the_runs_of_its_run_md(folder: str, n: int) -> None:
    mapped = []
    for path in encodings(folder, n):
        batch = decode_traces(request_data(path))
        assert batch.rejected == 0
        result = map_spans(batch.spans)
        assert result.rejected == 0
        mapped.append([event.to_dict() for event in result.events])
        check_runs(runs_of(list(result.events)), EXPECTED[folder][n])
    assert len(mapped) >= 2
    assert all(events == mapped[0] for events in mapped[1:])


def test_the_agent_framework_model_failure_is_the_attempts_error() -> None:
    (run,) = runs_of(
        list(map_spans(decode_traces(request_data(CAPTURES / "agent-framework-builtin" / "request-2.pb")).spans).events)
    )
    assert run.attempts[0].error is not None and "ChatClientInvalidResponseException" in run.attempts[0].error


def test_the_handoff_is_an_event_of_the_agent_that_handed_off_not_a_tool_call() -> None:
    events = map_spans(
        decode_traces(request_data(CAPTURES / "openai-agents-openinference" / "request-1.pb")).spans
    ).events
    (started,) = [e for e in events if e.type == "handoff.started"]
    assert started.payload["from_agent"] == "triage" and started.payload["to_agent"] == "travel_assistant"


def test_every_folder_is_covered() -> None:
    assert sorted(p.name for p in CAPTURES.iterdir() if p.is_dir()) == FOLDERS
