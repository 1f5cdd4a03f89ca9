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
