"""Request bodies are worked on off the event loop, a few at a time, and a body that is only ever
small (a query, an outcome, a status, a verdict) is held to the small limit.

Before: the experience routes decoded every body on the event loop, up to the batch limit (16 MiB
of ``[{},{},…]``: 0.2-0.4 s with every other request waiting, and ~0.45 GB), and ingest worked on
as many large bodies at once as the thread pool had threads (40), each holding its decoded objects."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from starlette.testclient import TestClient

from afteraction.server import experience, ingest
from afteraction.server.offload import AT_ONCE, INLINE_BYTES
from tests.server.conftest import LIMITS
from tests.server.test_experience import SCOPE, http  # noqa: F401  (the fixture)
from tests.server.test_ingest import event, record_where


def test_a_query_over_the_event_limit_is_413_while_lessons_may_reach_the_batch_limit(
    http: TestClient,  # noqa: F811
) -> None:
    padding = "x" * (LIMITS.event_bytes + 1024)  # over the event limit, under the batch limit
    answer = http.post("/experience/search", json={"query": "refund", "scope": SCOPE, "note": padding})
    assert answer.status_code == 413, answer.text
    lessons = [{"id": f"big-{i}", "task": f"Refund ticket {i} {'is stuck ' * 400}", "scope": SCOPE} for i in range(10)]
    answer = http.post("/experience/lessons", json={"records": lessons})
    assert answer.status_code != 413, answer.text


def test_a_large_experience_body_is_decoded_off_the_event_loop(
    http: TestClient,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    where = record_where(monkeypatch, experience, "parse_json")
    long = "refund " * (INLINE_BYTES // 4)
    assert http.post("/experience/search", json={"query": long, "scope": SCOPE}).status_code == 200
    assert http.post("/experience/search", json={"query": "refund", "scope": SCOPE}).status_code == 200
    assert where == ["worker", "loop"]


def test_at_most_a_few_large_bodies_are_worked_on_at_once(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    lock, busy, most = threading.Lock(), [0], [0]
    clean = ingest.clean_event

    def slow(found: Any, limits: Any) -> Any:
        with lock:
            busy[0] += 1
            most[0] = max(most[0], busy[0])
        time.sleep(0.05)
        with lock:
            busy[0] -= 1
        return clean(found, limits)

    monkeypatch.setattr(ingest, "clean_event", slow)
    bodies = [event(f"big-{i}", payload={"output": "done " * INLINE_BYTES}) for i in range(8)]
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda body: client.post("/events", json=body), bodies))
    assert [a.status_code for a in answers] == [202] * 8
    assert most[0] == AT_ONCE  # never more, and the requests did overlap
