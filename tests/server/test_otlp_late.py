"""Spans that arrive after the span they hang under was stored as a session (an exporter's late batch, the retry
of a failed one, or a trace sent root first) give the sessions, events and trees of the trace sent whole: over
every capture in ``conformance/otlp-genai/``, each order sent under a tenant of its own (same trace ids), its
events compared, every field, with the whole post's.

Before, a model call (or handoff) under a stored session was dropped, a LangGraph ``.workflow`` span opened a
parentless session of its own, and a sub-agent lost its ``parent_session_id``.

What root-first order cannot give: the root's own ``task.created`` and end, stored before anything under it came
(the event store keeps the first event of an id). A root whose outcome, task, output or role come from what ran
under it (a workflow root that failed because its sub-agent failed) keeps what its own span said.
"""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from afteraction.store.events import EventStore
from afteraction.store.spans import open_spans
from tests.server.test_otlp_split import CASES, IDS, Capture, Entry


def _post(client: TestClient, capture: Capture, exports: list[list[Entry]], tenant: str) -> dict[str, Any]:
    """Every event of ``tenant`` once the exports are sent, by id."""
    for export in exports:
        answer = client.post("/v1/traces", json=capture.request(export, "late"), headers={"x-test-tenant": tenant})
        assert answer.status_code == 200 and answer.json() == {}, answer.text
    headers = {"x-test-tenant": tenant}
    sessions = client.get("/sessions", params={"limit": 50}, headers=headers).json()["sessions"]
    found: dict[str, Any] = {}
    for session in sessions:
        answer = client.get(f"/sessions/{session['session_id']}/events", params={"limit": 50}, headers=headers)
        found |= {data["id"]: data for data in answer.json()["events"]}
    return found


def _roots_own(capture: Capture) -> set[str]:
    """The ids of the root spans' own events (``task.created`` and the end) in the events' id scheme."""
    found = set()
    for root in (entry for entry in capture.entries if capture.is_root(entry)):
        span = capture.request([root], "late")["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
        found |= {f"otlp-{span['traceId']}-{span['spanId']}-{end}" for end in ("start", "end")}
    return found


@pytest.mark.parametrize(("folder", "n"), CASES, ids=IDS)
def test_a_retried_batch_of_every_span_but_the_root_adds_nothing(
    client: TestClient, events: EventStore, folder: str, n: int
) -> None:
    capture = Capture(folder, n)
    whole = _post(client, capture, [capture.entries], "whole")
    rest = [entry for entry in capture.entries if not capture.is_root(entry)]
    assert _post(client, capture, [capture.entries, rest], "retried") == whole
    assert open_spans(events.store).summary("retried") == []


@pytest.mark.parametrize(("folder", "n"), CASES, ids=IDS)
def test_a_trace_sent_root_first_is_the_trace_sent_whole_but_for_the_roots_own_events(
    client: TestClient, events: EventStore, folder: str, n: int
) -> None:
    capture = Capture(folder, n)
    whole = _post(client, capture, [capture.entries], "whole")
    roots = [entry for entry in capture.entries if capture.is_root(entry)]
    rest = [entry for entry in capture.entries if not capture.is_root(entry)]
    orders = {
        "rest-at-once": [roots, rest],
        "rest-one-by-one": [roots, *([entry] for entry in rest)],  # each span after those below it
        **{f"rest-in-two-{cut}": [roots, rest[:cut], rest[cut:]] for cut in range(1, len(rest))},
    }
    own = _roots_own(capture)
    for name, exports in orders.items():
        found = _post(client, capture, exports, name)
        assert set(found) == set(whole), name
        differ = {id for id in whole if found[id] != whole[id]}
        assert differ <= own, (name, sorted(differ - own))
        assert open_spans(events.store).summary(name) == [], name
