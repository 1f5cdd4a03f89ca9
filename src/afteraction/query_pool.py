"""The threads that run the vector channel of searches: a few daemon threads shared by every
memory of the process, and a bounded queue in front of them.

A search hands its job (embed the query, search the vectors) to the pool with its deadline, and
waits for it until then; meanwhile its own thread runs the text search. Concurrent searches queue
for a free thread instead of being turned away.

- **Order.** First come, first served, except a job that would finish too late: one whose time
  left is under the typical job's run time (``QueryPool.typical``, at most half the budget) is not
  started but answered at once with ``TooLate``. Under overload the threads then go to searches
  that can still finish in time instead of to ones whose result would be dropped.
- **A hung embedder** cannot take the vector channel from another memory's. Each job names its
  ``owner`` (the embedder it calls). While ``share`` (``size - 1``, at least 1) of an owner's jobs
  run past their deadlines by their whole budget again (hung), its next job is refused at once
  (``Stuck``, naming it) rather than queued to wait its whole budget for a thread that may never
  come free. While every thread runs a job past its deadline and none of them is the new job's
  owner's, one more thread is started for it (``size`` more at the most; a thread past ``size``
  ends when its job does): a healthy embedder's searches still
  run beside another's hung ones. Past that, any new job is refused so. An owner that is slow but
  within its budget may use every thread: a cap that waits healthy searches behind each other
  (tried: each owner at ``size - 1`` threads) made one memory's searches late and then refused.
- **A search whose deadline passed while its job waited withdraws it** (``withdraw``): the job
  leaves the queue and no thread ever runs it, so searches made meanwhile do not pile up.
- **At most ``max_queued`` jobs wait**; past that a job is refused at once (``QueueFull``).

The threads are daemons (a hung embedder never blocks the exit of the process, as a
ThreadPoolExecutor's joined workers would), started when first needed and kept. In the child of
``os.fork()`` the parent's threads and jobs are not there: the pool starts empty, with a new lock.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, TypeVar

from afteraction.embed.forking import at_fork

__all__ = ["MAX_QUEUED", "POOL", "POOL_SIZE", "QueryPool", "QueueFull", "Stuck", "TooLate"]

T = TypeVar("T")


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on macOS or Windows
        return os.cpu_count() or 1


#: Query threads: the usable cores, at least 2 and at most 4 (docs/retrieval.md, "Concurrent searches").
POOL_SIZE = min(4, max(2, _cores()))
#: Jobs that may wait for a thread; past that a search is refused the vector channel at once.
MAX_QUEUED = 256


class QueueFull(Exception):
    """``max_queued`` jobs already wait for a thread."""


class Stuck(QueueFull):
    """Every thread runs a job past its deadline (a hung embedder, most likely)."""


class TooLate(Exception):
    """A job not started: its time left was under the typical job's run time."""


@dataclass(frozen=True, slots=True)
class _Job:
    future: Future[Any]
    run: Callable[[], Any]
    queued: float
    deadline: float
    owner: int  # the id of the job's owner, 0 for none

    def hung(self, now: float) -> bool:
        """Run past its deadline by its whole budget again: hung, not a search ending a little late (an
        async embedder's coroutine is cancelled at the deadline, a moment before its thread is free)."""
        return now > self.deadline + (self.deadline - self.queued)


class QueryPool:
    """``size`` daemon threads (``size`` may be raised while it runs; up to ``size`` more for owners
    whose searches another's overdue jobs would hold up) running the jobs handed to ``submit`` (see
    the module docstring for their order)."""

    def __init__(self, size: int = POOL_SIZE, max_queued: int = MAX_QUEUED, name: str = "afteraction-query") -> None:
        self.size = size
        self.max_queued = max_queued
        self.name = name
        #: Seconds a job typically runs: a moving average of the last ones (0 before the first).
        self.typical = 0.0
        self._reset()

    def _reset(self) -> None:
        """Empty: no thread, no job, a new lock (in a forked child, the parent's threads are gone)."""
        self._jobs: deque[_Job] = deque()
        self._running: list[_Job] = []
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._cond = threading.Condition()

    @property
    def threads(self) -> int:
        """Threads started (each kept once started)."""
        return len(self._threads)

    @property
    def queued(self) -> int:
        """Jobs waiting for a thread."""
        with self._cond:
            return len(self._jobs)

    @property
    def share(self) -> int:
        """Threads one owner may hold: ``size - 1``, or 1 when ``size`` is 1."""
        return max(1, self.size - 1)

    def holding(self, owner: object) -> int:
        """Threads ``owner``'s jobs run on now."""
        with self._cond:
            return sum(1 for running in self._running if running.owner == id(owner))

    def submit(self, job: Callable[[], T], deadline: float, owner: object = None) -> Future[T]:
        """Queue ``job``, to be done by ``deadline`` (a ``time.perf_counter()`` value), for
        ``owner`` (None: no share applies); its future. ``QueueFull`` when ``max_queued`` jobs wait
        already, ``Stuck`` when the owner's share (or every thread) runs jobs past their deadlines;
        RuntimeError when no thread can be started (the interpreter is shutting down)."""
        future: Future[T] = Future()
        key = 0 if owner is None else id(owner)
        with self._cond:
            if len(self._jobs) >= self.max_queued:
                raise QueueFull(f"{len(self._jobs)} searches already wait for the vector channel's threads")
            now = time.perf_counter()
            own = [running for running in self._running if key and running.owner == key]
            if len(own) >= self.share and all(running.hung(now) for running in own):
                raise Stuck(
                    f"this embedder's earlier searches still hold {len(own)} of the {self.size} query threads,"
                    " past their budget (a hung embedder, most likely)"
                )
            spare = False
            overdue = len(self._running) >= len(self._threads) and all(r.deadline < now for r in self._running)
            if len(self._running) >= self.size and overdue:
                others = bool(key) and all(running.owner != key for running in self._running)
                if not others or len(self._threads) >= 2 * self.size:
                    mine = sum(1 for running in self._running if key and running.owner == key)
                    raise Stuck(
                        f"this embedder's earlier searches still hold {mine} of the {len(self._threads)} query"
                        " threads, past their budget (a hung embedder, most likely)"
                        if mine
                        else f"each of the {len(self._threads)} query threads runs a search past its budget"
                        + (" (other memories' embedders hold them)" if others else "")
                    )
                spare = True  # every thread held by other owners' overdue jobs: one more for this one
            if spare or (self._idle <= len(self._jobs) and len(self._threads) < self.size):
                thread = threading.Thread(target=self._serve, name=self.name, daemon=True)
                thread.start()  # RuntimeError at shutdown: nothing queued then
                self._threads.append(thread)
            self._jobs.append(_Job(future, job, time.perf_counter(), deadline, key))
            self._cond.notify()
        return future

    def withdraw(self, future: Future[Any]) -> bool:
        """Take back a job no thread has started: it leaves the queue and never runs. False when a
        thread runs it already (or it is done)."""
        with self._cond:
            if not future.cancel():
                return False
            for index, job in enumerate(self._jobs):
                if job.future is future:
                    del self._jobs[index]
                    break
            return True

    def _next(self) -> _Job | None:
        """The first queued job, taken."""
        return self._jobs.popleft() if self._jobs else None

    def _serve(self) -> None:
        while True:
            with self._cond:
                self._idle += 1
                while (job := self._next()) is None:
                    self._cond.wait()
                self._idle -= 1
                if not job.future.set_running_or_notify_cancel():
                    continue  # cancelled by its owner
            started = time.perf_counter()
            left, budget = job.deadline - started, job.deadline - job.queued
            if left < min(self.typical, budget / 2):
                typical = f"{left * 1000:.0f} ms of its budget left, where a job takes {self.typical * 1000:.0f} ms"
                job.future.set_exception(TooLate(typical))
                continue
            with self._cond:
                self._running.append(job)
            try:
                job.future.set_result(job.run())
            except BaseException as exc:  # delivered to the waiting search
                job.future.set_exception(exc)
            with self._cond:
                self._running.remove(job)
                self.typical += 0.2 * (time.perf_counter() - started - self.typical)
                if len(self._threads) > self.size:  # a spare thread's work is done: back to ``size``
                    self._threads.remove(threading.current_thread())
                    return


#: The pool every vector channel of the process shares.
POOL = QueryPool()


@at_fork
def _after_fork_in_child() -> None:
    """The child of ``os.fork()`` starts with an empty pool (see the module docstring)."""
    POOL._reset()
