"""A hung embedder never takes the vector channel from another memory's: its own searches are refused once its
overdue jobs hold ``size - 1`` threads, and another owner gets a thread of its own while overdue jobs hold them
all; a slow but healthy embedder uses every thread."""

from __future__ import annotations

import threading
import time

import pytest

import afteraction as aa
from afteraction.query_pool import POOL, QueryPool, Stuck


def test_another_owner_gets_a_thread_while_overdue_jobs_hold_them_all() -> None:
    pool, release = QueryPool(name="test-query", size=2), threading.Event()
    hung, healthy = object(), object()
    started: list[str] = []

    def hang() -> str:
        started.append("hung")
        assert release.wait(10)
        return "hung"

    try:
        stuck = [pool.submit(hang, time.perf_counter() + 0.05, hung) for _ in range(2)]
        time.sleep(0.2)  # both threads run the hung owner's jobs, past their deadlines
        assert started == ["hung", "hung"] and pool.holding(hung) == 2
        assert pool.submit(lambda: "fine", time.perf_counter() + 60, healthy).result(2) == "fine"
        assert pool.threads <= 3  # one more, for the other owner, which ends with its job
        with pytest.raises(Stuck, match="this embedder's earlier searches"):
            pool.submit(hang, time.perf_counter() + 60, hung)
    finally:
        release.set()
    assert [future.result(5) for future in stuck] == ["hung"] * 2
    deadline = time.monotonic() + 2  # a result is delivered a moment before its thread is free
    while pool.threads > 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert pool.holding(hung) == 0 and pool.threads == 2  # back to its size


def test_a_slow_but_healthy_owner_uses_every_thread() -> None:
    """One memory's searches, each within its budget, run side by side: a cap of ``size - 1`` threads per
    embedder queued them one behind the other, late, and then refused them as hung (h20 #1)."""
    pool, owner = QueryPool(name="test-query", size=2), object()
    running, most, lock = [0], [0], threading.Lock()

    def slow() -> str:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.2)
        with lock:
            running[0] -= 1
        return "ok"

    futures = [pool.submit(slow, time.perf_counter() + 0.5, owner) for _ in range(4)]
    assert [future.result(3) for future in futures] == ["ok"] * 4
    assert most[0] == 2


def test_a_stuck_owner_is_refused_at_once_and_another_is_not() -> None:
    pool, release = QueryPool(name="test-query", size=2), threading.Event()
    hung, healthy = object(), object()
    try:
        pool.submit(lambda: release.wait(10), time.perf_counter() + 0.05, hung)
        time.sleep(0.2)  # its job runs past its deadline
        with pytest.raises(Stuck, match="this embedder's earlier searches still hold 1 of the 2 query threads"):
            pool.submit(lambda: None, time.perf_counter() + 60, hung)
        assert pool.submit(lambda: "fine", time.perf_counter() + 60, healthy).result(2) == "fine"
    finally:
        release.set()


class Hangs:
    model_id = "hangs"
    dimension = 8

    def __init__(self) -> None:
        self.release = threading.Event()

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.release.wait(30)
        return [[1.0] + [0.0] * 7 for _ in texts]


class Works:
    model_id = "works"
    dimension = 8

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [[1.0] + [0.0] * 7 for _ in texts]


def test_a_hung_embedder_never_takes_the_vector_channel_from_another_memory() -> None:
    scope = aa.Scope(tenant="t", app="a", project="p", agent="g")
    hangs = Hangs()
    bad = aa.Memory.open(":memory:", embedder=hangs, on_error=lambda *_: None)
    good = aa.Memory.open(":memory:", embedder=Works(), on_error=lambda *_: None)
    try:
        bad.wait_indexed(0.1)
        good.wait_indexed(5)
        for i in range(POOL.size + 3):  # its searches hold the threads, then it is refused as hung
            bad.search(f"refund ticket stuck {i}", scope=scope)
        assert bad.channel_status.reason == "timeout"
        assert "this embedder's earlier searches" in bad.channel_status.detail
        for i in range(3):
            good.search(f"another healthy query {i}", scope=scope)
            assert good.channel_status.reason == "ok", good.channel_status
    finally:
        hangs.release.set()
        bad.close(0.2)
        good.close()
