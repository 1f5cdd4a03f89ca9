"""The async face: ``async with`` finishes off the event loop, a run's search has an async form, the
face's work runs in threads of its own (never the loop's default executor), a cancelled ``await``
never cancels a finish, and forked children get fresh threads.

A slow store is a real one: an SQLite file whose write lock a second connection holds."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import afteraction as aa
from afteraction.errors import ConfigError
from tests.test_fork import in_child
from tests.test_recorder import SCOPE, open_memory, verified, write_locked

pytestmark = pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")

TASK = "Refund ticket 42 is stuck in pending"


async def stays_free(seconds: float = 0.1) -> None:
    """The loop runs other work for ``seconds``: a finish blocked in the store is not on it."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        await asyncio.sleep(0.005)


def test_async_with_finishes_off_the_event_loop(tmp_path: Path) -> None:
    amem = open_memory(tmp_path / "m.db").aio

    async def body() -> aa.RunRecorder:
        async with amem.run(TASK, scope=SCOPE) as run:
            run.tool("run_refund_check", result="issued")
            run.check("refund-issued", passed=True)
        return run

    async def main() -> aa.RunRecorder:
        with write_locked(tmp_path / "m.db"):
            leaving = asyncio.create_task(body())
            await stays_free()
            assert not leaving.done()  # the store is locked: the finish waits, in its thread
        return await leaving

    run = asyncio.run(main())
    assert run.experience is not None and run.finish() is run.experience
    assert [lesson.experience.id for lesson in amem.sync.lessons(scope=SCOPE)] == [run.experience.id]


def test_leaving_async_with_on_an_exception_records_it_as_the_sync_exit_does(tmp_path: Path) -> None:
    mem = open_memory(tmp_path / "m.db")

    def record(run: aa.RunRecorder) -> None:
        run.tool("run_refund_check", result="issued")
        run.check("refund-issued", passed=True)
        raise LookupError("the ticket vanished")

    with pytest.raises(LookupError), mem.run(TASK, scope=SCOPE, run_id="sync") as sync_run:
        record(sync_run)

    async def main() -> aa.RunRecorder:
        async with mem.run(TASK, scope=SCOPE, run_id="async") as run:  # a sync memory's run: its face finishes
            record(run)
        return run

    with pytest.raises(LookupError):
        asyncio.run(main())
    stored = {lesson.experience.task_id: lesson.experience for lesson in mem.lessons(scope=SCOPE)}
    assert sync_run.experience is not None and sync_run.experience == stored["sync"]
    assert (stored["async"].lesson, stored["async"].status) == (stored["sync"].lesson, stored["sync"].status)
    assert "LookupError" in sync_run.experience.lesson
    mem.close()


def test_search_for_a_run_counts_its_hits_as_given(tmp_path: Path) -> None:
    mem = open_memory(tmp_path / "m.db")
    lesson = verified(mem, "first").finish()
    assert lesson is not None

    async def main() -> tuple[list[aa.Hit], tuple[str, ...]]:
        async with mem.aio.run("Refund for ticket 97 hangs in pending", scope=SCOPE) as run:
            hits = await mem.aio.search_for(run, k=3)
            run.check("refund-issued", passed=True)
        return hits, run.given

    hits, given = asyncio.run(main())
    assert [hit.id for hit in hits] == [lesson.id] and given == (lesson.id,)
    mem.close()


def test_a_finish_retried_after_a_timeout_returns_the_stored_lesson(tmp_path: Path) -> None:
    heard: list[str] = []
    amem = open_memory(tmp_path / "m.db", heard).aio
    run = verified(amem)

    async def main() -> tuple[aa.Experience | None, ...]:
        with write_locked(tmp_path / "m.db"):
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(amem.finish(run), 0.05)  # the host's deadline
            retries = [asyncio.create_task(amem.finish(run)) for _ in range(3)]
            await stays_free(0.05)
            assert not any(retry.done() for retry in retries)  # each waits for the finish under way
        return tuple(await asyncio.gather(*retries))

    results = asyncio.run(main())
    assert results[0] is not None and all(result is results[0] for result in results)
    assert heard == [] and run.finish() is results[0]
    assert len(amem.sync.lessons(scope=SCOPE)) == 1
    amem.sync.close()


def test_a_finish_cancelled_before_a_thread_took_it_up_still_finishes(tmp_path: Path) -> None:
    amem = aa.AsyncMemory(open_memory(tmp_path / "m.db"), writers=1)
    first, second = verified(amem, "first"), verified(amem, "second")

    async def main() -> None:
        with write_locked(tmp_path / "m.db"):
            busy = asyncio.create_task(amem.finish(first))  # holds the only writer thread
            queued = asyncio.create_task(amem.finish(second))
            await asyncio.sleep(0.05)
            queued.cancel()
            busy.cancel()
            await asyncio.gather(busy, queued, return_exceptions=True)
        await amem.close()  # waits for the work under way

    asyncio.run(main())
    with open_memory(tmp_path / "m.db") as again:
        assert sorted(lesson.experience.task_id for lesson in again.lessons(scope=SCOPE)) == ["first", "second"]
    assert first.experience is not None and second.experience is not None


def test_memory_work_never_takes_the_loops_default_executor(tmp_path: Path) -> None:
    mem = open_memory(tmp_path / "m.db")
    verified(mem, "known").finish()
    amem = mem.aio
    earlier = set(threading.enumerate())  # other tests' faces may keep idle threads
    ours: list[threading.Thread] = []

    async def main() -> float:
        loop = asyncio.get_running_loop()
        loop.set_default_executor(ThreadPoolExecutor(1))  # one thread: any memory call in it would block the app
        with write_locked(tmp_path / "m.db"):
            finishes = [asyncio.create_task(amem.finish(verified(amem, f"run-{i}"))) for i in range(12)]
            await asyncio.sleep(0.05)
            started = time.monotonic()
            await asyncio.wait_for(loop.run_in_executor(None, time.monotonic), 1)  # the app's own work
            waited = time.monotonic() - started
            ours.extend(t for t in set(threading.enumerate()) - earlier if t.name.startswith("afteraction"))
        assert all(result is not None for result in await asyncio.gather(*finishes))
        return waited

    assert asyncio.run(main()) < 0.5
    assert sorted(thread.name.split("_")[0] for thread in ours) == ["afteraction-write"] * aa.memory_async.WRITERS
    mem.close()
    for thread in ours:  # closed: the face's threads end
        thread.join(1)
        assert not thread.is_alive(), f"{thread.name} outlived close()"


def test_reads_do_not_wait_behind_writes_that_wait() -> None:
    mem = aa.Memory.open(":memory:", embedder=None)
    verified(mem, "known").finish()
    release = threading.Event()

    def slow_check(run: aa.Run) -> tuple[aa.Evidence, ...]:  # the host's verifier waits on a service
        release.wait(5)
        return (aa.Evidence("service-healthy", True, "check"),)

    async def main() -> list[aa.Hit]:
        runs = [mem.aio.run(TASK, scope=SCOPE, verify=[slow_check]) for _ in range(aa.memory_async.WRITERS + 2)]
        finishes = [asyncio.create_task(mem.aio.finish(run)) for run in runs]
        await asyncio.sleep(0.05)
        try:
            return await asyncio.wait_for(mem.aio.search("refund stuck in pending", scope=SCOPE), 2)
        finally:
            release.set()
            await asyncio.gather(*finishes)

    assert len(asyncio.run(main())) == 1
    assert any(thread.name.startswith("afteraction-read") for thread in threading.enumerate())
    mem.close()


def test_one_face_per_memory_and_sizes_checked_at_setup(tmp_path: Path) -> None:
    mem = open_memory(tmp_path / "m.db")
    assert mem.aio is mem.aio
    for wrong in (0, 65, True, 2.0):
        with pytest.raises(ConfigError, match="readers"):
            aa.AsyncMemory(mem, readers=wrong)  # type: ignore[arg-type]
    mem.close()


def test_a_forked_child_gets_threads_of_its_own() -> None:
    mem = aa.Memory.open(":memory:", embedder=None)  # a SQLite connection is not to be used across a fork
    verified(mem, "known").finish()
    amem = mem.aio
    assert len(asyncio.run(amem.search("refund stuck in pending", scope=SCOPE))) == 1  # the parent's threads run

    def child() -> int:
        return len(asyncio.run(asyncio.wait_for(amem.search("refund stuck in pending", scope=SCOPE), 3)))

    assert in_child(child) == 1
    mem.close()
