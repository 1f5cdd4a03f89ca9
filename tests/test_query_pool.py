"""The query threads: at most ``size`` of them, jobs taken in order, a job that would finish too
late or was withdrawn never runs, and a full queue refuses at once."""

from __future__ import annotations

import threading
import time

import pytest

from afteraction.query_pool import POOL, POOL_SIZE, QueryPool, QueueFull, Stuck, TooLate


def hung(started: list[int], release: threading.Event, n: int) -> int:
    started.append(n)
    assert release.wait(10)
    return n


def later(seconds: float = 60.0) -> float:
    return time.perf_counter() + seconds


def wait_started(started: list[int], count: int) -> None:
    deadline = time.monotonic() + 5
    while len(started) < count and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(started) == count


def test_jobs_run_on_at_most_size_threads_in_the_order_they_came() -> None:
    pool = QueryPool(name="test-query", size=2)
    ran: list[int] = []
    futures = [pool.submit(lambda n=n: ran.append(n) or n, later()) for n in range(20)]  # type: ignore[func-returns-value]
    assert [future.result(5) for future in futures] == list(range(20))
    assert pool.threads <= 2 and sorted(ran) == list(range(20))


def test_a_hung_job_holds_its_thread_and_no_more_threads_start() -> None:
    pool, started, release = QueryPool(name="test-query", size=2), [], threading.Event()
    try:
        futures = [pool.submit(lambda n=n: hung(started, release, n), later()) for n in range(6)]
        wait_started(started, 2)
        time.sleep(0.05)
        assert sorted(started) == [0, 1] and pool.threads == 2 and pool.queued == 4
    finally:
        release.set()
    assert [future.result(5) for future in futures] == list(range(6))


def test_a_withdrawn_job_leaves_the_queue_and_never_runs() -> None:
    pool, started, release = QueryPool(name="test-query", size=1), [], threading.Event()
    try:
        first = pool.submit(lambda: hung(started, release, 0), later())
        wait_started(started, 1)
        queued = [pool.submit(lambda n=n: hung(started, release, n), later()) for n in (1, 2, 3)]
        assert pool.withdraw(queued[1]) and queued[1].cancelled() and pool.queued == 2
    finally:
        release.set()
    assert [f.result(5) for f in (first, queued[0], queued[2])] == [0, 1, 3]
    assert not pool.withdraw(first)  # done: nothing to take back
    assert sorted(started) == [0, 1, 3]  # job 2 never ran


def test_past_max_queued_a_job_is_refused_at_once() -> None:
    pool, started, release = QueryPool(name="test-query", size=1, max_queued=3), [], threading.Event()
    try:
        pool.submit(lambda: hung(started, release, 0), later())
        wait_started(started, 1)
        for n in (1, 2, 3):
            pool.submit(lambda n=n: hung(started, release, n), later())
        with pytest.raises(QueueFull, match="3 searches already wait"):
            pool.submit(lambda: 4, later())
        assert pool.threads == 1 and pool.queued == 3
    finally:
        release.set()


def test_an_exception_reaches_the_future_and_the_thread_goes_on() -> None:
    pool = QueryPool(name="test-query", size=1)

    def fail() -> None:
        raise ValueError("bad")

    with pytest.raises(ValueError, match="bad"):
        pool.submit(fail, later()).result(5)
    assert pool.submit(lambda: 7, later()).result(5) == 7 and pool.threads == 1


def test_the_shared_pool_has_between_two_and_four_threads() -> None:
    assert 2 <= POOL_SIZE <= 4 and POOL.size == POOL_SIZE


def test_a_job_that_would_finish_too_late_is_answered_at_once_and_never_run() -> None:
    pool, started, release = QueryPool(name="test-query", size=1), [], threading.Event()
    pool.typical = 0.05  # jobs take 50 ms
    try:
        pool.submit(lambda: hung(started, release, 0), later())
        wait_started(started, 1)
        late = pool.submit(lambda: hung(started, release, 1), later(0.2))
        on_time = pool.submit(lambda: hung(started, release, 2), later())
        time.sleep(0.17)  # 30 ms left of the first one's 200
    finally:
        release.set()
    with pytest.raises(TooLate, match=r"ms of its budget left, where a job takes \d+ ms"):
        late.result(5)
    assert on_time.result(5) == 2 and started == [0, 2]


def test_a_fresh_job_runs_however_slow_the_last_ones_were() -> None:
    pool = QueryPool(name="test-query", size=1)
    pool.typical = 30.0  # a load, or an embedder that was slow: at most half the budget counts
    assert pool.submit(lambda: 7, later(1.0)).result(5) == 7
    assert pool.typical < 30.0


def test_while_every_thread_runs_past_its_deadline_a_new_job_is_refused_at_once() -> None:
    """A hung embedder made every later search wait its whole budget for a thread, for as long as
    the hang lasted (0.5 s a search, where the text search alone takes milliseconds)."""
    pool, started, release = QueryPool(name="test-query", size=2), [], threading.Event()
    try:
        hung_jobs = [pool.submit(lambda n=n: hung(started, release, n), later(0.05)) for n in range(2)]
        wait_started(started, 2)
        queued = pool.submit(lambda: 9, later())  # before their deadlines: it waits for a thread
        time.sleep(0.1)  # both running jobs are now past their deadlines
        begun = time.perf_counter()
        with pytest.raises(Stuck, match="each of the 2 query threads runs a search past its budget"):
            pool.submit(lambda: 0, later())
        assert time.perf_counter() - begun < 0.05
    finally:
        release.set()
    assert [future.result(5) for future in hung_jobs] == [0, 1] and queued.result(5) == 9
    assert pool.submit(lambda: 7, later()).result(5) == 7  # the threads are free again: jobs run
