"""AsyncMemory: the async face of ``Memory``, the same implementation run in threads of its own.

Every call runs ``Memory``'s own code in a worker thread, so the event loop never blocks on the
store, the embedder or the clock, and the two faces cannot drift apart. The threads are the face's
own, never the loop's default executor (which the application shares: ``loop.getaddrinfo``, its
own ``asyncio.to_thread`` calls), and there are two bounded sets of them: at most ``writers``
calls that write (finishing and learning runs, imports, outcomes; a SQLite store takes one writer
at a time anyway) and ``readers`` calls that read (search, blocks, lessons) run at once, so a
store that holds its write lock for seconds delays neither the application nor the searches.
Calls beyond those wait their turn.

Cancelling an ``await`` stops the waiting, not the work: a call that has begun in its thread runs to
its end, and ``finish`` (and leaving ``async with``) always finishes the run, even when the await
is cancelled before a thread took it up; a later ``finish`` of the run returns what it stored.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import threading
from collections.abc import AsyncIterator, Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from afteraction.embed.forking import renewed
from afteraction.errors import ConfigError
from afteraction.model import Experience, Hit, Lesson, Run, Status
from afteraction.recorder import RunRecorder
from afteraction.vector_channel import ChannelStatus

if TYPE_CHECKING:
    from afteraction.memory import Memory

__all__ = ["READERS", "WRITERS", "AsyncMemory"]

#: Threads for calls that read, and for calls that write (or wait for writes), per async face.
READERS = 4
WRITERS = 4

T = TypeVar("T")


class AsyncMemory:
    """The async face of ``Memory``: the same implementation, run in threads of its own so the
    event loop never blocks on the store (``memory.aio`` is the one a memory keeps)."""

    def __init__(self, memory: Memory, *, readers: int = READERS, writers: int = WRITERS) -> None:
        for name, count in (("readers", readers), ("writers", writers)):
            if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 64:
                raise ConfigError(f"AsyncMemory {name} must be a number of threads from 1 to 64, got {count!r}")
        self.sync = memory
        self._sizes = {"read": readers, "write": writers}
        self._lock = threading.Lock()
        self._pools: dict[str, ThreadPoolExecutor] = {}
        self._status: contextvars.ContextVar[ChannelStatus] = contextvars.ContextVar("afteraction_channel_status")
        renewed(self)

    def _after_fork(self) -> None:
        """In a forked child: the parent's threads are not there; new ones start when needed."""
        self._lock = threading.Lock()
        self._pools = {}

    @classmethod
    def open(cls, url: str | Path | None = None, **options: Any) -> AsyncMemory:
        from afteraction.memory import Memory

        return cls(Memory.open(url, **options))

    # -- the threads ---------------------------------------------------------------------

    def _submit(self, lane: str, fn: Callable[[], T]) -> Future[T]:
        self.sync._loop = asyncio.get_running_loop()  # where an async on_error's reports go
        with self._lock:
            pool = self._pools.get(lane)
            if pool is None:
                pool = self._pools[lane] = ThreadPoolExecutor(self._sizes[lane], f"afteraction-{lane}")
            return pool.submit(fn)

    async def _read(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await asyncio.wrap_future(self._submit("read", partial(fn, *args, **kwargs)))

    async def _write(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await asyncio.wrap_future(self._submit("write", partial(fn, *args, **kwargs)))

    async def _search(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """A call that searches: its vector channel's status, read in its own thread right after
        it, becomes the calling task's ``channel_status``."""

        def searching() -> tuple[T, ChannelStatus]:
            return fn(*args, **kwargs), self.sync.channel_status

        found, status = await asyncio.wrap_future(self._submit("read", searching))
        self._status.set(status)
        return found

    def _release(self) -> list[ThreadPoolExecutor]:
        """Let go of the threads: each ends when its call has (new calls start new ones)."""
        with self._lock:
            pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            pool.shutdown(wait=False)
        return pools

    # -- runs ----------------------------------------------------------------------------

    def run(self, task: str, **kwargs: Any) -> RunRecorder:
        """``Memory.run``: recording is in memory and cheap (text is scrubbed at the finish). Use it
        as ``async with amem.run(...) as run:``, or ``await amem.finish(run)``; a plain ``with``
        block would finish the run (its store write, its feedback) on the event loop."""
        recorder = self.sync.run(task, **kwargs)
        recorder._aio = self
        return recorder

    async def finish(self, recorder: RunRecorder) -> Experience | None:
        """``recorder.finish()`` off the event loop. A finish under way already (another task's, or
        one whose await was cancelled) is waited for, without a thread, and its result returned."""
        outcome, work = recorder._claim()
        if work is not None:
            try:
                self._submit("write", work)
            except RuntimeError:  # the interpreter is exiting: no new threads; the claimed finish must end
                work()
        return await asyncio.wrap_future(outcome)

    async def search_for(self, recorder: RunRecorder, *, k: int = 5) -> list[Hit]:
        """``recorder.search(k=k)`` off the event loop: the run's hits, counted as given to the run."""
        return await self._search(recorder.search, k=k)

    async def block_for(self, recorder: RunRecorder, **options: Any) -> str:
        """``recorder.reference_block(**options)`` off the event loop: the run's block, its
        lessons counted as given to the run."""
        return await self._search(recorder.reference_block, **options)

    async def learn(self, run: Run, **kwargs: Any) -> Experience | None:
        return await self._write(self.sync.learn, run, **kwargs)

    # -- the rest of Memory --------------------------------------------------------------

    async def add(self, experience: Experience) -> bool:
        return await self._write(self.sync.add, experience)

    async def add_many(self, experiences: Iterable[Experience]) -> int:
        return await self._write(self.sync.add_many, experiences)

    async def get(self, id: str, **kwargs: Any) -> Experience:
        return await self._read(self.sync.get, id, **kwargs)

    async def export(self, tenant: str | None = None, *, page: int = 500) -> AsyncIterator[Experience]:
        """Every stored record (of one tenant), read ``page`` at a time off the event loop."""
        records = self.sync.export(tenant)
        while batch := await self._read(lambda: list(itertools.islice(records, page))):
            for record in batch:
                yield record

    async def block_with_hits(self, task: str, **kwargs: Any) -> tuple[str, tuple[Hit, ...]]:
        return await self._search(self.sync.block_with_hits, task, **kwargs)

    async def search(self, query: str, **kwargs: Any) -> list[Hit]:
        return await self._search(self.sync.search, query, **kwargs)

    async def reference_block(self, task: str, **kwargs: Any) -> str:
        return await self._search(self.sync.reference_block, task, **kwargs)

    async def lessons(self, **kwargs: Any) -> list[Lesson]:
        return await self._read(self.sync.lessons, **kwargs)

    async def record_outcome(self, id: str, **kwargs: Any) -> Experience:
        return await self._write(self.sync.record_outcome, id, **kwargs)

    async def set_status(self, id: str, status: Status | str, **kwargs: Any) -> Experience:
        return await self._write(self.sync.set_status, id, status, **kwargs)

    async def forget(self, id: str, **kwargs: Any) -> bool:
        return await self._write(self.sync.forget, id, **kwargs)

    async def forget_user(self, user: str, **kwargs: Any) -> list[str]:
        return await self._write(self.sync.forget_user, user, **kwargs)

    async def wait_indexed(self, timeout: float | None = None) -> bool:
        return await self._write(self.sync.wait_indexed, timeout)

    @property
    def channel_status(self) -> ChannelStatus:
        """How the vector channel fared in the calling task's last search (a task that has not
        searched reads the memory's ``channel_status``)."""
        return self._status.get(self.sync.channel_status)

    async def close(self) -> None:
        """Wait for the calls under way (finishes whose await was cancelled included), then close
        the memory; in a thread of its own, as the face's threads are let go."""
        pools = self._release()

        def closing() -> None:
            for pool in pools:
                pool.shutdown(wait=True)
            self.sync.close()

        once = ThreadPoolExecutor(1, "afteraction-close")
        try:
            await asyncio.wrap_future(once.submit(closing))
        finally:
            once.shutdown(wait=False)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
