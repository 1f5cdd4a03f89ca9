"""Handing a failure that memory swallowed to the host's ``on_error``, which never raises into the agent.

``on_error`` may be a plain function or an ``async def`` one (anything returning an awaitable): an
awaitable is run, never dropped. It is scheduled on the event loop the memory's async face is used from
when that loop is running (``asyncio.run_coroutine_threadsafe``; the reporting thread does not wait for
it), else on the loop running in the reporting thread, else run to its end in the reporting thread
(``asyncio.run``). A handler that fails, at once or when awaited, is logged with the failure it was given.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from typing import Any

__all__ = ["ErrorHandler", "deliver", "log_error"]

#: Receives every failure that memory swallowed inside an agent, with where it happened; may be ``async``.
ErrorHandler = Callable[[BaseException, str], Any]

_log = logging.getLogger("afteraction")
_pending: set[asyncio.Task[Any]] = set()  # reports scheduled on a loop in this thread: kept until done


def log_error(exc: BaseException, where: str) -> None:
    """The default ``on_error``: a warning on the ``afteraction`` logger."""
    vector = where.startswith("search.vector.")  # the text channel still ran
    _log.warning("afteraction: %s%s: %s", where, "" if vector else " failed, the agent continues without memory", exc)


def deliver(
    handler: ErrorHandler, exc: BaseException, where: str, loop: asyncio.AbstractEventLoop | None = None
) -> None:
    """Hand ``exc`` to the host's ``handler``; never raises. ``loop``: the one an async handler's report
    goes to when it runs (the loop the memory's async face was last used from). A handler that fails
    itself (a wrong signature, a bug) is logged with the failure it was given, which would otherwise be
    lost with it."""
    try:
        answer = handler(exc, where)
        if inspect.isawaitable(answer):
            _await(answer, exc, where, loop)
    except Exception as failure:
        _failed(failure, exc, where)


def _failed(failure: BaseException, exc: BaseException, where: str) -> None:
    _log.warning("afteraction: on_error failed (%r) on %s: %r", failure, where, exc)


def _await(answer: Awaitable[Any], exc: BaseException, where: str, loop: asyncio.AbstractEventLoop | None) -> None:
    try:
        here: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        here = None
    target = loop if loop is not None and loop.is_running() else here
    if target is None:  # no loop anywhere: this thread waits for the report, as it would for a plain handler
        asyncio.run(_awaited(answer))
        return

    def checked(done: Future[Any] | asyncio.Future[Any]) -> None:
        if not done.cancelled() and done.exception() is not None:
            _failed(done.exception(), exc, where)  # type: ignore[arg-type]

    if target is here:  # the loop's own thread (a plain ``with`` block, a recording call): never block it
        task = target.create_task(_awaited(answer))
        _pending.add(task)
        task.add_done_callback(_pending.discard)
        task.add_done_callback(checked)
    else:
        asyncio.run_coroutine_threadsafe(_awaited(answer), target).add_done_callback(checked)


async def _awaited(answer: Awaitable[Any]) -> Any:
    return await answer
