"""A run that reaches the service over several exports is the same run: every capture, split at
every span boundary into two exports and into one export per span, in several orders, sent to a
real ``afteraction serve --dev``, becomes exactly the runs its ``run.md`` describes.

The orders are those an exporter can produce: a span is exported when it ends, after its children,
so the export that holds a trace's root comes last; the exports before it may come in any order
(here: end order, parents before children, shuffled), and so may the spans inside each export.
Each case gets trace ids of its own, so the cases share one server without seeing each other.
"""

from __future__ import annotations

import base64
import hashlib
import random
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from afteraction.core.assemble import assemble
from afteraction.model import Event
from tests.core.test_otlp_conformance import CAPTURES, EXPECTED, REQUESTS, SCOPE, check_runs
from tests.serving import serving

Entry = tuple[int, int, dict[str, Any]]  # resource index, scope index, span (OTLP JSON, ids in base64)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    db = tmp_path_factory.mktemp("split") / "served.db"
    with serving(db, "--dev") as url:
        yield url, db


def _hex(value: str) -> str:
    return base64.b64decode(value).hex() if value else ""


class Capture:
    """One capture's spans, in the order the exporter sent them (end order), and its envelopes."""

    def __init__(self, folder: str, n: int) -> None:
        data = MessageToDict(ExportTraceServiceRequest.FromString((CAPTURES / folder / f"request-{n}.pb").read_bytes()))
        self.expected = EXPECTED[folder][n]
        self.envelopes: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
        self.entries: list[Entry] = []
        for r, resource_spans in enumerate(data["resourceSpans"]):
            scopes = []
            for s, scope_spans in enumerate(resource_spans["scopeSpans"]):
                scopes.append({key: value for key, value in scope_spans.items() if key != "spans"})
                self.entries += [(r, s, span) for span in scope_spans["spans"]]
            self.envelopes.append(({"resource": resource_spans.get("resource", {})}, scopes))

    def is_root(self, entry: Entry) -> bool:
        return not entry[2].get("parentSpanId")

    def children_first(self, seed: int) -> list[Entry]:
        """A random order in which every span comes after all the spans below it."""
        parent = {e[2]["spanId"]: e[2].get("parentSpanId", "") for e in self.entries}
        depth = {}
        for entry in self.entries:
            span_id, steps = entry[2]["spanId"], 0
            while parent.get(span_id) and steps < len(parent):
                span_id, steps = parent[span_id], steps + 1
            depth[entry[2]["spanId"]] = steps
        shuffled = random.Random(seed).sample(self.entries, len(self.entries))
        return sorted(shuffled, key=lambda e: -depth[e[2]["spanId"]])

    def request(self, entries: list[Entry], case: str) -> dict[str, Any]:
        """One export of ``entries``, every trace id renamed for ``case`` (ids in hex)."""
        resources: list[dict[str, Any]] = []
        for r, (resource, scopes) in enumerate(self.envelopes):
            scope_spans = []
            for s, scope in enumerate(scopes):
                spans = [_renamed(span, case) for (er, es, span) in entries if (er, es) == (r, s)]
                if spans:
                    scope_spans.append({**scope, "spans": spans})
            if scope_spans:
                resources.append({**resource, "scopeSpans": scope_spans})
        return {"resourceSpans": resources}

    def traces(self, case: str) -> set[str]:
        return {_trace(span["traceId"], case) for _, _, span in self.entries}


def _trace(trace_id: str, case: str) -> str:
    return hashlib.sha256(f"{case}\0{_hex(trace_id)}".encode()).hexdigest()[:32]


def _renamed(span: dict[str, Any], case: str) -> dict[str, Any]:
    return {
        **span,
        "traceId": _trace(span["traceId"], case),
        "spanId": _hex(span["spanId"]),
        "parentSpanId": _hex(span.get("parentSpanId", "")),
    }


def _runs(http: httpx.Client, capture: Capture, case: str) -> list[Any]:
    events = []
    for trace_id in sorted(capture.traces(case)):
        answer = http.get(f"/workflows/{trace_id}")
        if answer.status_code == 404:
            continue
        pending = list(answer.json()["sessions"])
        while pending:
            session = pending.pop()
            pending += session["children"]
            found = http.get(f"/sessions/{session['session_id']}/events", params={"limit": 500}).json()
            events += [Event.from_dict(data) for data in found["events"]]
    return assemble(events, SCOPE)


def _send(http: httpx.Client, capture: Capture, exports: list[list[Entry]], case: str) -> None:
    for export in exports:
        answer = http.post("/v1/traces", json=capture.request(export, case))
        assert answer.status_code == 200 and answer.json() == {}, answer.text
    check_runs(_runs(http, capture, case), capture.expected)


def _two_ways(capture: Capture, order: list[Entry], reverse_inside: bool) -> Iterator[list[list[Entry]]]:
    for cut in range(1, len(order)):
        parts = [order[:cut], order[cut:]]
        yield [part[::-1] for part in parts] if reverse_inside else parts


def _one_per_span(capture: Capture, order: list[Entry], roots_last: bool = True) -> list[list[Entry]]:
    """One export per span; the non-root spans in ``order``, the roots after them."""
    rest = [e for e in order if not capture.is_root(e)]
    roots = [e for e in order if capture.is_root(e)]
    return [[entry] for entry in (rest + roots if roots_last else order)]


CASES = [(folder, n) for folder, n in REQUESTS]
IDS = [f"{folder}-request-{n}" for folder, n in CASES]


@pytest.mark.parametrize(("folder", "n"), CASES, ids=IDS)
def test_split_in_two_at_every_span_boundary_is_the_run_of_its_run_md(
    served: tuple[str, Path], folder: str, n: int
) -> None:
    capture = Capture(folder, n)
    with httpx.Client(base_url=served[0], timeout=30) as http:
        for reverse_inside in (False, True):
            for k, exports in enumerate(_two_ways(capture, capture.entries, reverse_inside)):
                _send(http, capture, exports, f"{folder}-{n}-two-{k}-{reverse_inside}")


@pytest.mark.parametrize(("folder", "n"), CASES, ids=IDS)
def test_one_export_per_span_in_several_orders_is_the_run_of_its_run_md(
    served: tuple[str, Path], folder: str, n: int
) -> None:
    capture = Capture(folder, n)
    orders = {
        "end-order": _one_per_span(capture, capture.entries),
        "parents-first": _one_per_span(capture, capture.entries[::-1]),
        **{f"shuffled-{seed}": _one_per_span(capture, capture.children_first(seed)) for seed in range(3)},
        **{f"children-first-{seed}": _one_per_span(capture, capture.children_first(seed), False) for seed in range(2)},
    }
    with httpx.Client(base_url=served[0], timeout=30) as http:
        for name, exports in orders.items():
            _send(http, capture, exports, f"{folder}-{n}-each-{name}")


@pytest.mark.parametrize(("folder", "n"), CASES, ids=IDS)
def test_split_in_three_exports_sent_in_any_order_before_the_root_is_the_run_of_its_run_md(
    served: tuple[str, Path], folder: str, n: int
) -> None:
    capture = Capture(folder, n)
    with httpx.Client(base_url=served[0], timeout=30) as http:
        for seed in range(4):
            order = [entry for (entry,) in _one_per_span(capture, capture.children_first(seed))]
            inner = len([e for e in order if not capture.is_root(e)])  # the roots are at the end
            if inner < 2:
                pytest.skip("fewer than two spans below the roots")
            a, b = sorted(random.Random(seed).sample(range(1, inner + 1), 2))
            first, second, last = order[:a], order[a:b], order[b:]
            _send(http, capture, [second, first, last], f"{folder}-{n}-three-{seed}")


def test_no_span_is_left_in_the_buffer_once_every_run_is_placed(served: tuple[str, Path]) -> None:
    """Runs after the capture tests (same module, same server): they freed every span they held."""
    with closing(sqlite3.connect(f"file:{served[1]}?mode=ro", uri=True)) as db:
        assert db.execute("SELECT count(*) FROM otlp_spans").fetchone() == (0,)
