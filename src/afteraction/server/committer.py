"""Group commit: one writer thread stores many requests' events in one transaction.

A request hands its (tenant, events) to ``Committer.add`` and waits. The writer thread takes
every request waiting (up to ``max_events`` events), stores them with one
``EventStore.add_groups`` call (one transaction) and only then answers each request, so a 202
is sent after its events are committed. Under load the waiting requests pile up while the
previous transaction commits and the next transaction takes them all: the cost of a commit is
shared, and the event loop never blocks on the database.

When a shared transaction fails, each request in it is tried again on its own, so one request
that cannot be stored does not fail the others; the error of that one goes to its request. Each
is answered as soon as its own try ends, and once two requests in a row fail on their own as the
group did (the store's failure, not a request's: a write lock another process holds, a database
gone) the rest get that error at once instead of each waiting out the same failure in turn.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from afteraction.model import Event
from afteraction.store.events import EventStore

__all__ = ["Committer"]

#: Tries on their own, in a row, that fail as their group did: then the store failed, not a request.
_STORE_FAILED = 2


@dataclass(frozen=True, slots=True)
class _Job:
    tenant: str
    events: Sequence[Event]
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[list[bool]]


def _answer(future: asyncio.Future[list[bool]], result: list[bool] | BaseException) -> None:
    if future.done():  # the request went away (client disconnected)
        return
    if isinstance(result, BaseException):
        future.set_exception(result)
    else:
        future.set_result(result)


def _answer_all(pairs: list[tuple[asyncio.Future[list[bool]], Any]]) -> None:
    for future, result in pairs:
        _answer(future, result)


class Committer:
    def __init__(self, store: EventStore, *, max_events: int = 20_000) -> None:
        self.store = store
        self.max_events = max_events
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False
        self.transactions = 0  # how many, and how many requests they held: group commit at work
        self.requests = 0

    async def add(self, tenant: str, events: Sequence[Event]) -> list[bool]:
        """For each event, True when new and False when a duplicate, once committed."""
        if not events:
            return []
        self._start()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[bool]] = loop.create_future()
        self._queue.put(_Job(tenant, events, loop, future))
        return await future

    def _start(self) -> None:
        if self._thread is not None:
            return
        with self._lock:
            if self._closed:
                raise RuntimeError("the committer is closed")
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="afteraction-writer", daemon=True)
                self._thread.start()

    def close(self) -> None:
        """Store what is queued, then stop the writer thread."""
        with self._lock:
            self._closed = True
            thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(None)
            thread.join()

    def _run(self) -> None:
        stopping = False
        while not stopping:
            job = self._queue.get()
            if job is None:
                return
            jobs, size = [job], len(job.events)
            while size < self.max_events:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stopping = True
                    break
                jobs.append(more)
                size += len(more.events)
            self._commit(jobs)

    def _commit(self, jobs: list[_Job]) -> None:
        self.transactions += 1
        self.requests += len(jobs)
        try:
            results: Sequence[list[bool] | BaseException] = self.store.add_groups([(j.tenant, j.events) for j in jobs])
        except Exception as exc:
            if len(jobs) == 1:
                results = [exc]
            else:
                self._one_by_one(jobs, exc)
                return
        _send(jobs, results)

    def _one_by_one(self, jobs: list[_Job], failure: Exception) -> None:
        """Each job on its own, answered when its try ends. When two in a row fail as the group did, the failure is
        the store's (one request's own fault fails its own try only), and the rest get it without trying: each try
        would wait it out again."""
        repeated = 0
        for i, job in enumerate(jobs):
            result = self._alone(job)
            _send([job], [result])
            repeated = repeated + 1 if isinstance(result, Exception) and _same(result, failure) else 0
            if repeated == _STORE_FAILED:
                _send(jobs[i + 1 :], [result] * (len(jobs) - i - 1))
                return

    def _alone(self, job: _Job) -> list[bool] | BaseException:
        self.transactions += 1
        try:
            return self.store.add_many(job.tenant, job.events)
        except Exception as exc:
            return exc


def _same(one: Exception, other: Exception) -> bool:
    return type(one) is type(other) and str(one) == str(other)


def _send(jobs: Sequence[_Job], results: Sequence[list[bool] | BaseException]) -> None:
    """Answer each job, with one wake-up of each event loop."""
    answers: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[list[bool]], Any]]] = {}
    for job, result in zip(jobs, results, strict=True):
        answers.setdefault(job.loop, []).append((job.future, result))
    for loop, pairs in answers.items():
        with suppress(RuntimeError):  # the loop closed: nobody is waiting any more
            loop.call_soon_threadsafe(_answer_all, pairs)
