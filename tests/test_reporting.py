"""An ``async def`` on_error hears every report, as a plain one does: on the loop the async face is used
from, in the loop of the reporting thread, or run to its end where there is no loop; never raising."""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path

import pytest

import afteraction as aa
from afteraction.reporting import deliver
from tests.test_recorder import SCOPE, verified


def test_without_a_loop_the_report_is_heard_before_the_call_returns(tmp_path: Path) -> None:
    heard: list[str] = []

    async def on_error(exc: BaseException, where: str) -> None:
        await asyncio.sleep(0)
        heard.append(where)

    with aa.Memory.open(tmp_path / "m.db", embedder=None, on_error=on_error) as mem:
        run = mem.run("Refund ticket 42 is stuck in pending", scope=SCOPE)
        run.check("refund-issued", passed="yes")  # type: ignore[arg-type]
        assert heard == ["run.check"]


def test_a_failure_in_the_faces_threads_reaches_the_handler_on_the_faces_loop(tmp_path: Path) -> None:
    heard: list[tuple[str, int, bool]] = []

    async def main() -> None:
        reported = asyncio.Event()
        loop_thread = threading.get_ident()

        async def on_error(exc: BaseException, where: str) -> None:
            heard.append((where, threading.get_ident(), asyncio.get_running_loop() is loop))
            reported.set()

        loop = asyncio.get_running_loop()
        mem = aa.Memory.open(tmp_path / "m.db", embedder=None, on_error=on_error)
        run = verified(mem.aio)
        mem.store.close()  # the store fails under the finish
        assert await mem.aio.finish(run) is None
        await asyncio.wait_for(reported.wait(), 5)
        assert heard == [("run.finish", loop_thread, True)]
        await mem.aio.close()

    asyncio.run(main())


def test_a_report_made_on_the_loop_is_scheduled_there_never_awaited_in_place(tmp_path: Path) -> None:
    heard: list[str] = []

    async def on_error(exc: BaseException, where: str) -> None:
        heard.append(where)

    async def main() -> list[str]:
        mem = aa.Memory.open(tmp_path / "m.db", embedder=None, on_error=on_error)
        run = mem.run("Refund ticket 42 is stuck in pending", scope=SCOPE)
        run.check("refund-issued", passed="yes")  # type: ignore[arg-type]
        before = list(heard)
        await asyncio.sleep(0.01)
        run.abandon()
        mem.close()
        return before

    assert asyncio.run(main()) == [] and heard == ["run.check"]


def test_a_failing_async_handler_is_logged_with_the_failure_it_was_given(caplog: pytest.LogCaptureFixture) -> None:
    async def on_error(exc: BaseException, where: str) -> None:
        raise RuntimeError("the handler's own bug")

    with caplog.at_level(logging.WARNING, logger="afteraction"):
        deliver(on_error, ValueError("disk full"), "run.finish")
    assert "the handler's own bug" in caplog.text and "disk full" in caplog.text

    async def main() -> None:
        caplog.clear()
        deliver(on_error, ValueError("disk full"), "run.finish")  # scheduled on this loop
        await asyncio.sleep(0.01)
        assert "the handler's own bug" in caplog.text and "disk full" in caplog.text

    with caplog.at_level(logging.WARNING, logger="afteraction"):
        asyncio.run(main())


def test_a_report_handed_to_a_loop_that_stops_before_taking_it_runs_in_the_reporting_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As at the end of ``asyncio.run``: the loop is running when the report is handed over, then stops and
    closes without ever getting to it. The reporting thread hears that and runs the report itself."""
    monkeypatch.setattr("afteraction.reporting.HANDOFF", 5.0, raising=False)  # a slow machine: still waiting
    heard: list[tuple[str, bool]] = []
    reporter_ready, handed, release = threading.Event(), threading.Event(), threading.Event()
    loop = asyncio.new_event_loop()

    async def on_error(exc: BaseException, where: str) -> None:
        heard.append((where, threading.current_thread() is reporter))

    def handler(exc: BaseException, where: str) -> object:
        handed.set()  # deliver schedules the report right after this returns
        return on_error(exc, where)

    def busy_then_stop() -> None:  # the loop's last callback: its stop leaves the report unrun
        reporter_ready.set()
        release.wait(5)
        loop.stop()

    def run_loop() -> None:
        loop.call_soon(busy_then_stop)
        loop.run_forever()
        loop.close()

    reporter = threading.Thread(target=lambda: deliver(handler, ValueError("disk full"), "run.finish", loop))
    looping = threading.Thread(target=run_loop)
    looping.start()
    assert reporter_ready.wait(5)
    reporter.start()
    assert handed.wait(5)
    threading.Event().wait(0.05)  # the report is on the loop's queue
    release.set()
    looping.join(5)
    reporter.join(5)
    assert loop.is_closed() and heard == [("run.finish", True)]


def test_the_reporting_thread_waits_for_the_loop_to_take_the_report_never_for_it_to_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("afteraction.reporting.HANDOFF", 0.05)
    heard: list[str] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        ends = asyncio.Event()

        async def on_error(exc: BaseException, where: str) -> None:
            heard.append(f"{where} began")
            await ends.wait()
            heard.append(f"{where} ended")

        await asyncio.to_thread(deliver, on_error, ValueError("disk full"), "run.finish", loop)
        assert heard == ["run.finish began"]  # taken up on the loop, not waited for to end
        ends.set()
        await asyncio.sleep(0.01)

        def busy_loop() -> None:  # the loop does not get to the report within HANDOFF: it runs it later
            reporter = threading.Thread(target=deliver, args=(on_error, ValueError("x"), "run.tool", loop))
            reporter.start()
            reporter.join(5)
            assert not reporter.is_alive() and heard[-1] == "run.finish ended"

        busy_loop()  # blocks the loop while the reporting thread gives up waiting
        ends.clear()
        await asyncio.sleep(0.01)
        assert heard[-1] == "run.tool began"
        ends.set()
        await asyncio.sleep(0.01)

    asyncio.run(main())
    assert heard == ["run.finish began", "run.finish ended", "run.tool began", "run.tool ended"]
