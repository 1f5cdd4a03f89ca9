"""A private event loop in a daemon thread, for an embedder whose only method is a coroutine ``aembed``.

Memory embeds from worker threads that have no event loop (the vector channel's query threads,
background indexing, ``afteraction reindex``). ``Checked`` runs an async-only embedder's ``aembed``
on a loop of its own, in a daemon thread started on first use: one loop per wrapped embedder, so
that an async client the embedder holds (an HTTP connection pool, say) is always used from the
same loop. A call waits at most its ``timeout``; past it the coroutine is cancelled and ``Overdue``
raised. The thread stops when the wrapper is garbage collected. In the child of ``os.fork()`` the
parent's loop thread is not there: the next call starts another.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import weakref
from collections.abc import Awaitable, Callable
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TypeVar

from afteraction.embed.forking import renewed

__all__ = ["LoopThread", "Overdue"]

T = TypeVar("T")


class Overdue(TimeoutError):
    """A coroutine run by ``LoopThread.run`` took longer than its timeout (it was cancelled)."""


class LoopThread:
    """An event loop running in a daemon thread named ``name``, started on the first ``run``."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        renewed(self)

    def _after_fork(self) -> None:
        """In a forked child: no loop thread (the parent's is gone), a new lock."""
        self._lock = threading.Lock()
        self._loop = None

    def _running(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=_serve, args=(loop,), name=self.name, daemon=True).start()
                weakref.finalize(self, _stop, loop)
                self._loop = loop
            return self._loop

    def run(self, call: Callable[[], Awaitable[T]], timeout: float) -> T:
        """Await ``call()`` on the loop; its result or exception. ``Overdue`` past ``timeout``
        seconds, the coroutine then cancelled."""
        future = asyncio.run_coroutine_threadsafe(_awaited(call), self._running())
        try:
            return future.result(timeout)
        except FutureTimeout:
            if not future.done():
                future.cancel()
                raise Overdue(f"took over {timeout:g} s") from None
            return future.result()  # done meanwhile, or the coroutine raised a TimeoutError itself


async def _awaited(call: Callable[[], Awaitable[T]]) -> T:
    return await call()


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
    finally:
        loop.close()


def _stop(loop: asyncio.AbstractEventLoop) -> None:
    with contextlib.suppress(RuntimeError):  # closed already
        loop.call_soon_threadsafe(loop.stop)
