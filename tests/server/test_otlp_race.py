"""Two exports of one trace that race, or come in the wrong order, on SQLite and PostgreSQL: spans exported after
their agent's session was stored join it at once (they were held until the buffer's age, 15 minutes, then placed as
they were); children held by one request while another placed their root (two replicas, or two workers of one:
the holder's commit landing after the other looked in the buffer) are placed by the rooting request once its own
events are stored (they stayed held, and a verdict meanwhile learned a run with no steps)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from typing import Any

import pytest
from starlette.testclient import TestClient

import afteraction.server.otlp as otlp
from afteraction.core.otlp_spans import decode_traces
from afteraction.server import Limits, create_app
from afteraction.store.events import EventStore
from afteraction.store.spans import Bounds, HeldSpan, Released, SpanBuffer, TraceSummary, open_spans
from tests.server.conftest import tenant_from_header
from tests.server.test_otlp import stored
from tests.server.test_otlp_retention import ACME, Clock, buffer, client, clock, events, export, span

__all__ = ["buffer", "client", "clock", "events"]  # fixtures

AGENT = span(1, 1, None, "invoke_agent", **{"gen_ai.agent.name": "bot"})
SESSION = f"{1:032x}-{1:016x}"


def tools(*ids: int) -> list[dict[str, Any]]:
    return [span(1, i, 1, "execute_tool", **{"gen_ai.tool.name": f"tool{i}"}) for i in ids]


def tool_names(client: TestClient) -> list[str]:
    found = [e for e in stored(client, "acme") if e.type == "tool.called" and e.session_id == SESSION]
    return sorted(str(e.payload["tool_name"]) for e in found)


def test_a_span_exported_after_its_agents_session_joins_it_at_once(client: TestClient, buffer: SpanBuffer) -> None:
    export(client, AGENT, *tools(2))
    export(client, *tools(3, 4))  # their parent's session is stored: nothing to wait for
    assert buffer.summary("acme") == []
    assert tool_names(client) == ["tool2", "tool3", "tool4"]


class Racing:
    """The buffer, with ``meanwhile`` run once right after the first ``release`` that names a trace: another
    request's hold landing after this request looked in the buffer, before its events are stored."""

    def __init__(self, inner: SpanBuffer, meanwhile: Callable[[], None]) -> None:
        self.inner, self.meanwhile = inner, meanwhile
        self.raced = False

    def hold(self, tenant: str, spans: Sequence[HeldSpan], *, now: float) -> None:
        self.inner.hold(tenant, spans, now=now)

    def release(self, tenant: str, traces: Collection[str], *, now: float, bounds: Bounds) -> Released:
        found = self.inner.release(tenant, traces, now=now, bounds=bounds)
        if traces and not self.raced:
            self.raced = True
            self.meanwhile()
        return found

    def drop(self, tenant: str, spans: Sequence[tuple[str, str]]) -> None:
        self.inner.drop(tenant, spans)

    def summary(self, tenant: str) -> list[TraceSummary]:
        return self.inner.summary(tenant)


@pytest.fixture
def racing(events: EventStore, clock: Clock, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    """A client whose root export races a children export held while it places the root."""
    inner = open_spans(events.store)
    children = decode_traces({"resourceSpans": [{"scopeSpans": [{"spans": tools(2, 3, 4)}]}]}).spans

    def hold_children() -> None:  # what the other request does: nothing of the root is stored yet, so it holds
        ready, freed = otlp.gather(
            inner, "acme", children, now=clock.now, placed=lambda ids: {i for i in ids if events.session("acme", i)}
        )
        assert (ready, freed) == ([], [])

    monkeypatch.setattr(otlp, "open_spans", lambda store: Racing(inner, hold_children))
    app = create_app(events, tenant=tenant_from_header, limits=Limits(page=500))
    with TestClient(app, raise_server_exceptions=False) as found:
        yield found


def test_children_held_while_their_root_was_placed_are_placed_by_the_rooting_request(
    racing: TestClient, events: EventStore
) -> None:
    export(racing, AGENT)
    assert open_spans(events.store).summary("acme") == []  # nothing left held
    assert tool_names(racing) == ["tool2", "tool3", "tool4"]
    replica = racing.get("/metrics", headers=ACME).json()["replica"]
    assert replica == {"events_ingested": 8, "duplicates": 0, "rejected": 0}  # placing the root again is no duplicate


def test_a_late_span_places_only_the_spans_under_the_stored_session(client: TestClient, buffer: SpanBuffer) -> None:
    """Tool 5 waits under span 4, not a session of its own and not sent yet: a late tool of the stored agent
    placed every held span of the trace as it was, so tool 5 became a detached session of no run."""
    export(client, AGENT, *tools(2))
    export(client, *tools(3), span(1, 5, 4, "execute_tool", **{"gen_ai.tool.name": "tool5"}))
    assert tool_names(client) == ["tool2", "tool3"] and [s.spans for s in buffer.summary("acme")] == [1]
    export(client, span(1, 4, 1, "step"))  # the span tool 5 ran under: walked through, into the agent's session
    assert buffer.summary("acme") == []
    assert tool_names(client) == ["tool2", "tool3", "tool5"]
    assert {e.session_id for e in stored(client, "acme")} == {SESSION}
