"""AsyncMemory: the async face of ``Memory``, the same implementation run in a worker thread.

Every call runs ``Memory``'s own code through ``asyncio.to_thread``, so the event loop never
blocks on the store, the embedder or the clock, and the two faces cannot drift apart.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable, Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from afteraction.model import Experience, Hit, Lesson, Run
from afteraction.recorder import RunRecorder
from afteraction.vector_channel import ChannelStatus

if TYPE_CHECKING:
    from afteraction.memory import Memory

__all__ = ["AsyncMemory"]

T = TypeVar("T")


class AsyncMemory:
    """The async face of ``Memory``: the same implementation, run in a worker thread so the
    event loop never blocks on the store."""

    def __init__(self, memory: Memory) -> None:
        self.sync = memory

    @classmethod
    def open(cls, url: str | Path | None = None, **options: Any) -> AsyncMemory:
        from afteraction.memory import Memory

        return cls(Memory.open(url, **options))

    async def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await asyncio.to_thread(partial(fn, *args, **kwargs))

    def run(self, task: str, **kwargs: Any) -> RunRecorder:
        """Recording is in-memory and cheap: the same recorder; call ``await finish()``
        through ``AsyncMemory.finish(recorder)``, or leave a plain ``with`` block."""
        return self.sync.run(task, **kwargs)

    async def finish(self, recorder: RunRecorder) -> Experience | None:
        return await self._call(recorder.finish)

    async def block_for(self, recorder: RunRecorder, **options: Any) -> str:
        """``recorder.reference_block(**options)`` off the event loop: the run's block, its
        lessons counted as given to the run."""
        return await self._call(recorder.reference_block, **options)

    async def learn(self, run: Run, **kwargs: Any) -> Experience | None:
        return await self._call(self.sync.learn, run, **kwargs)

    async def add(self, experience: Experience) -> bool:
        return await self._call(self.sync.add, experience)

    async def add_many(self, experiences: Iterable[Experience]) -> int:
        return await self._call(self.sync.add_many, experiences)

    async def get(self, id: str, **kwargs: Any) -> Experience:
        return await self._call(self.sync.get, id, **kwargs)

    async def export(self, tenant: str | None = None, *, page: int = 500) -> AsyncIterator[Experience]:
        """Every stored record (of one tenant), read ``page`` at a time off the event loop."""
        records = self.sync.export(tenant)
        while batch := await self._call(lambda: list(itertools.islice(records, page))):
            for record in batch:
                yield record

    async def block_with_hits(self, task: str, **kwargs: Any) -> tuple[str, tuple[Hit, ...]]:
        return await self._call(self.sync.block_with_hits, task, **kwargs)

    async def search(self, query: str, **kwargs: Any) -> list[Hit]:
        return await self._call(self.sync.search, query, **kwargs)

    async def reference_block(self, task: str, **kwargs: Any) -> str:
        return await self._call(self.sync.reference_block, task, **kwargs)

    async def lessons(self, **kwargs: Any) -> list[Lesson]:
        return await self._call(self.sync.lessons, **kwargs)

    async def record_outcome(self, id: str, **kwargs: Any) -> Experience:
        return await self._call(self.sync.record_outcome, id, **kwargs)

    async def wait_indexed(self, timeout: float | None = None) -> bool:
        return await self._call(self.sync.wait_indexed, timeout)

    @property
    def channel_status(self) -> ChannelStatus:
        return self.sync.channel_status

    async def close(self) -> None:
        await self._call(self.sync.close)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
