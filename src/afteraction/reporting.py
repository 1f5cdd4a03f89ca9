"""Handing a failure that memory swallowed to the host's ``on_error``, which never raises into the agent.

``on_error`` may be a plain function or an ``async def`` one (anything returning an awaitable): an
awaitable is run, never dropped. It is scheduled on the event loop the memory's async face is used from
when that loop is running, else on the loop running in the reporting thread, else run to its end in the
reporting thread (``asyncio.run``). A report handed to the face's loop from another thread is waited for
only until that loop takes it up (at most ``HANDOFF`` seconds; never until it ends): when the loop stops
or closes first, as at the end of ``asyncio.run``, it would never run it, so the reporting thread runs it
itself. A handler that fails, at once or when awaited, is logged with the failure it was given.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import re
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from afteraction.core.redact import scrub_text

__all__ = ["ErrorHandler", "deliver", "log_error", "logged"]

#: Receives every failure that memory swallowed inside an agent, with where it happened; may be ``async``.
ErrorHandler = Callable[[BaseException, str], Any]

_log = logging.getLogger("afteraction")
_pending: set[asyncio.Task[Any]] = set()  # reports scheduled on a loop: kept until done

#: Seconds a reporting thread waits for another thread's loop to take its report up (a busy loop takes it later).
HANDOFF = 0.25
_POLL = 0.005


# C0 and C1 controls and the direction overrides, which a log line shows as their escapes (as ``cli.common.shown``
# shows stored text): an error's newline would forge a line of the host's log, its escape sequence retitle or clear
# the terminal the log is read in.
_UNSHOWABLE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def logged(text: str) -> str:
    """``text`` as the ``afteraction`` logger writes it: secrets scrubbed (an error may echo what the host passed
    it, or what a service answered), then each control character or direction override as its escape (``\\x1b``,
    ``\\n``), so that it stays on its one line of the log."""
    return _UNSHOWABLE.sub(lambda m: m[0].encode("unicode_escape").decode("ascii"), scrub_text(text))


def log_error(exc: BaseException, where: str) -> None:
    """The default ``on_error``: a warning on the ``afteraction`` logger, the error's text as ``logged`` writes it."""
    vector = where.startswith("search.vector.")  # the text channel still ran
    said = logged(str(exc))
    _log.warning("afteraction: %s%s: %s", where, "" if vector else " failed, the agent continues without memory", said)


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
    """Logs a handler's ``failure`` with the error ``exc`` it was given, both as ``log_error`` writes an error."""
    _log.warning("afteraction: on_error failed (%s) on %s: %s", logged(repr(failure)), where, logged(repr(exc)))


def _await(answer: Awaitable[Any], exc: BaseException, where: str, loop: asyncio.AbstractEventLoop | None) -> None:
    try:
        here: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        here = None
    elsewhere = loop if loop is not None and loop is not here and loop.is_running() else None  # another thread's
    if elsewhere is not None and _handed_over(answer, exc, where, elsewhere, wait=here is None):
        return
    if here is not None:  # the loop's own thread (a plain ``with`` block, a recording call): never block it
        _schedule(here, _awaited(answer), exc, where)
    else:  # no loop anywhere: this thread waits for the report, as it would for a plain handler
        asyncio.run(_awaited(answer))


def _handed_over(
    answer: Awaitable[Any], exc: BaseException, where: str, loop: asyncio.AbstractEventLoop, *, wait: bool
) -> bool:
    """Hands the report to another thread's running ``loop``; False when that loop will not run it (it is
    closed, or stopped before it took the report up), for this thread to run it instead. ``wait``: this
    thread may wait for the loop to take it (not when a loop of its own runs here)."""
    taken = threading.Event()
    claim = threading.Lock()

    def take() -> bool:  # the loop and this thread race for the report: the first one runs it
        with claim:
            first = not taken.is_set()
            taken.set()
        return first

    async def on_the_loop() -> Any:
        return await answer if take() else None

    def start() -> None:  # a plain callback: dropped unrun by a loop that closes, it leaves no coroutine behind
        if not taken.is_set():
            _schedule(loop, on_the_loop(), exc, where)

    try:
        loop.call_soon_threadsafe(start)
    except RuntimeError:  # closed since we looked
        return False
    deadline = time.monotonic() + HANDOFF
    while wait and not taken.wait(_POLL) and loop.is_running() and time.monotonic() < deadline:
        pass
    return loop.is_running() or not take()  # still running: the loop takes it when it gets to it


def _schedule(
    loop: asyncio.AbstractEventLoop, report: Coroutine[Any, Any, Any], exc: BaseException, where: str
) -> None:
    """Runs ``report`` as a task of ``loop`` (called in the loop's thread), kept until done."""

    def checked(done: asyncio.Future[Any]) -> None:
        if not done.cancelled() and done.exception() is not None:
            _failed(done.exception(), exc, where)  # type: ignore[arg-type]

    task = loop.create_task(report)
    _pending.add(task)
    task.add_done_callback(_pending.discard)
    task.add_done_callback(checked)


async def _awaited(answer: Awaitable[Any]) -> Any:
    return await answer
