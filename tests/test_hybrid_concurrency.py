"""Concurrent searches on one memory: each waits for a query thread within its own budget (found
by a tester: past two in flight a search lost its vector channel at once), a hung embedder holds
no more than the pool's threads, a search given up while queued never runs, and each thread reads
its own ``channel_status``."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import afteraction as aa
from afteraction.query_pool import POOL
from afteraction.store import MemoryStore
from afteraction.vector_channel import DEFAULT_BUDGET
from tests.conformance.builders import NOW, SCOPE, experience
from tests.hybrid_doubles import Gate, Poisoned, Sleepy

T = TypeVar("T")
#: Seconds a loaded machine may add to a budget before a search returns.
SLACK = 0.4


def open_memory(embedder: Any, reported: list[str] | None = None, **options: Any) -> aa.Memory:
    sink = reported if reported is not None else []
    mem = aa.Memory(
        MemoryStore(), embedder=embedder, clock=lambda: NOW, on_error=lambda e, w: sink.append(w), **options
    )
    mem.add(experience("a"))
    assert mem.wait_indexed(5)
    return mem


def at_once(n: int, call: Callable[[int], T]) -> list[T]:
    """``call(i)`` for ``i`` in ``range(n)``, from ``n`` threads released together."""
    barrier = threading.Barrier(n)

    def one(i: int) -> T:
        barrier.wait(5)
        return call(i)

    with ThreadPoolExecutor(n) as threads:
        return list(threads.map(one, range(n)))


def searched(mem: aa.Memory, query: str) -> tuple[str, float, list[str]]:
    start = time.perf_counter()
    ids = [hit.id for hit in mem.search(query, scope=SCOPE)]
    return mem.channel_status.reason, time.perf_counter() - start, ids


def test_six_concurrent_searches_all_run_their_vector_channel_within_the_budget() -> None:
    embedder = Sleepy(0.05, slow=False)
    reported: list[str] = []
    mem = open_memory(embedder, reported)
    embedder.slow = True  # 50 ms a query: six need 150 ms of two threads
    try:
        results = at_once(6, lambda i: searched(mem, f"refund stuck in pending {i}"))
    finally:
        embedder.release()
    assert [reason for reason, _, _ in results] == ["ok"] * 6
    assert max(spent for _, spent, _ in results) < DEFAULT_BUDGET + SLACK
    assert all(ids == ["a"] for _, _, ids in results) and reported == []


def test_a_hung_embedder_holds_no_more_than_the_pools_threads_and_queued_searches_never_run() -> None:
    embedder = Gate("hung")
    reported: list[str] = []
    mem = open_memory(embedder, reported, vector_budget=0.1)
    try:
        results = at_once(12, lambda i: searched(mem, f"refund hung in pending {i}"))
        names = [thread.name for thread in threading.enumerate()]
        assert names.count("afteraction-query") <= POOL.size == POOL.threads
        assert POOL.queued == 0  # every search given up was taken out of the queue
        embedded = [texts for texts in embedder.seen if "hung" in texts[0]]
    finally:
        embedder.release.set()
    assert [reason for reason, _, _ in results] == ["timeout"] * 12
    assert max(spent for _, spent, _ in results) < 0.1 + SLACK
    assert all(ids == ["a"] for _, _, ids in results)  # by text
    assert 1 <= len(embedded) <= POOL.size  # only the searches that got a thread reached the embedder
    time.sleep(0.2)
    assert len([texts for texts in embedder.seen if "hung" in texts[0]]) == len(embedded)  # the rest never run
    assert reported.count("search.vector.timeout") == 1


def test_each_thread_reads_the_status_of_its_own_search() -> None:
    mem = open_memory(Poisoned())
    first_done, second_done = threading.Event(), threading.Event()
    seen: dict[str, str] = {}

    def poisoned() -> None:
        mem.search("refund poison pending", scope=SCOPE)  # the embedder returns NaN for this one
        first_done.set()
        assert second_done.wait(5)
        seen["poisoned"] = mem.channel_status.reason

    def plain() -> None:
        assert first_done.wait(5)
        mem.search("refund stuck in pending", scope=SCOPE)
        second_done.set()
        seen["plain"] = mem.channel_status.reason

    threads = [threading.Thread(target=poisoned), threading.Thread(target=plain)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen == {"poisoned": "provider_unavailable", "plain": "ok"}


def test_searches_alternating_ok_and_failing_report_the_failure_once() -> None:
    reported: list[str] = []
    mem = open_memory(Poisoned(), reported)
    for _ in range(10):
        mem.search("refund poison pending", scope=SCOPE)
        mem.search("refund stuck in pending", scope=SCOPE)
    assert reported == ["search.vector.provider_unavailable"]


def test_each_task_reads_the_status_of_its_own_search_on_the_async_face() -> None:
    """The async face runs each search in a worker thread: read on the event loop, its status was
    the last search of any thread."""
    amem = open_memory(Poisoned()).aio
    first_done, second_done = asyncio.Event(), asyncio.Event()

    async def poisoned() -> str:
        await amem.search("refund poison pending", scope=SCOPE)  # the embedder returns NaN for this one
        first_done.set()
        await second_done.wait()
        return amem.channel_status.reason

    async def plain() -> str:
        await first_done.wait()
        await amem.search("refund stuck in pending", scope=SCOPE)
        second_done.set()
        return amem.channel_status.reason

    async def main() -> list[str]:
        return list(await asyncio.wait_for(asyncio.gather(poisoned(), plain()), 10))

    assert asyncio.run(main()) == ["provider_unavailable", "ok"]
    assert amem.channel_status.reason == "ok"  # outside any task that searched: the memory's own
