"""Indexing: ``Indexer`` makes records' vectors in a background thread for ``Memory``.

It goes through ``index_experiences`` (``index_vectors``, re-exported here), the one path from
records to stored vectors that ``afteraction reindex`` takes too, so both keep the revision guard
(``VectorStore.put_vectors`` drops a vector whose record has moved on).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterable
from typing import Protocol

from afteraction.embed.base import Checked
from afteraction.embed.forking import renewed
from afteraction.embed.gate import GATE
from afteraction.embed.recent import RecentVectors
from afteraction.errors import EmbedderError
from afteraction.index_vectors import index_experiences, make_vectors
from afteraction.model import Experience
from afteraction.store.base import Store, StoredVector, VectorStore
from afteraction.vector_channel import LazyEmbedder

__all__ = ["IndexStore", "Indexer", "RecentVectors", "index_experiences", "make_vectors"]

#: Seconds ``Indexer.close`` waits for vectors being written to the store (a write takes milliseconds).
STORE_WAIT = 1.0
#: After a batch failed in the store, the worker waits this long before the next, doubling up to MAX_RETRY.
FIRST_RETRY = 0.1
MAX_RETRY = 30.0
#: After an embedder failure, a backfill pass retries the records that failed this long after, doubling
#: (while a pass fails again) up to MAX_BACKFILL.
FIRST_BACKFILL = 5.0
MAX_BACKFILL = 300.0
#: Scheduled passes in a row that may fail before the indexer stops scheduling them (about 15 minutes of
#: waits); the worker thread then ends, and the next batch the embedder answers schedules one again.
MAX_PASSES = 8


class _Stuck(EmbedderError):
    """The embedder did not answer within ``embed_timeout``: its batch is not split and retried."""


Key = tuple[str, str]


class IndexStore(Store, VectorStore, Protocol):
    """A store that keeps records and their vectors."""


class Indexer:
    """Background indexing: vectors for records after they commit, off the caller's thread.

    One daemon worker thread embeds queued records in batches of ``batch_size`` through
    ``index_experiences`` (so the revision guard holds). The queue keeps the newest revision of
    each record and holds at most ``max_pending``; past that, records are dropped from the queue
    and found again by the backfill. The backfill pages through ``missing_vectors`` (records
    written before, by another process, or dropped from the queue) when the queue is empty: at
    start, after an overflow, and after an embedder failure. A record that failed is not tried
    again in the same pass, but by the pass an embedder failure schedules FIRST_BACKFILL seconds
    later (doubling while passes fail, up to MAX_BACKFILL), so records written during an outage
    get their vectors once the embedder answers again. The worker thread ends when there is
    nothing to do and no pass is scheduled, and starts again with the next write, so an idle
    ``Memory`` holds no thread (records another process writes are indexed by that process).

    A record whose vector was not stored because it changed meanwhile is read again and queued
    at its new revision. Failures (the embedder raises, returns bad vectors, or takes longer
    than ``embed_timeout`` seconds; the store fails) go to ``report`` and never stop the worker,
    which then waits before its next batch (FIRST_RETRY seconds, doubling up to MAX_RETRY); a
    failed batch is retried record by record so one bad record does not cost its neighbours. The
    embedder is called on one thread at a time: while a call that passed ``embed_timeout`` has
    not returned, no new one starts (the next batch waits for it, at most ``embed_timeout``
    seconds, and fails if it still runs), so a hung embedder holds one thread and gets no calls.

    Once ``close`` begins, the worker stores and reports nothing more: a batch in flight is dropped
    silently and left, with the rest, to the next backfill. In the child of ``os.fork()`` the
    indexer has new locks and no worker (the parent's is not there): the next write starts one.
    """

    def __init__(
        self,
        store: IndexStore,
        embedder: LazyEmbedder,
        *,
        report: Callable[[BaseException, str], None],
        batch_size: int = 32,
        max_pending: int = 10_000,
        embed_timeout: float = 60.0,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.report = _quiet_at_exit(report)
        self.batch_size = batch_size
        self.recent = RecentVectors()  # texts embedded lately: an outcome that changed no text is not re-embedded
        self.max_pending = max_pending
        self.embed_timeout = embed_timeout
        self.indexed = 0
        self.failed = 0
        self._pending: dict[Key, Experience] = {}
        self._failed: dict[Key, int] = {}  # revisions that failed, not tried again by a pass
        self._cond = threading.Condition()
        self._busy = False
        self._backfill = True  # a pass is due
        self._cursor: Key | None = None
        self._closing = False
        self._undone = False  # closed with work left: records queued or dropped, or the backfill due
        self._storing = threading.Lock()  # held while vectors are written; close waits for it
        self._disabled = False
        self._thread: threading.Thread | None = None
        self._retry = 0.0  # after a store failure, seconds to wait before the next batch (0: none)
        self._failing = ""  # the store failure reported lately, not again while it lasts
        self._embedding: threading.Thread | None = None  # the latest embedder call (maybe still running)
        self._due: float | None = None  # when the backfill an embedder failure scheduled starts (monotonic)
        self._delay = FIRST_BACKFILL  # the wait before the next scheduled pass
        self._passes = 0  # passes scheduled since the embedder last answered
        renewed(self)

    def _after_fork(self) -> None:
        """In a forked child: the parent's worker (and its batch in flight) does not exist here."""
        self._cond = threading.Condition()
        self._storing = threading.Lock()
        self.recent = RecentVectors(self.recent.size)
        self._thread = None
        self._embedding = None
        self._busy = False

    # -- the caller's side --------------------------------------------------------------

    def start(self) -> None:
        """Start the worker unless it runs: it loads the embedder, then works until idle."""
        with self._cond:
            if self._thread is None and not self._closing:
                self._thread = threading.Thread(target=self._work, name="afteraction-indexer", daemon=True)
                self._thread.start()

    def enqueue(self, experiences: Iterable[Experience]) -> None:
        """Queue records for embedding at their current revision; never blocks on embedding."""
        with self._cond:
            if self._disabled:
                return
            if self._closing:
                self._undone = self._undone or any(True for _ in experiences)
                return
            for experience in experiences:
                key = (experience.scope.tenant, experience.id)
                queued = self._pending.get(key)
                if queued is not None and queued.revision >= experience.revision:
                    continue
                if queued is None and len(self._pending) >= self.max_pending:
                    self._backfill = True  # found again by the next pass
                    self._cursor = None
                    continue
                self._pending[key] = experience
            self._cond.notify_all()
        self.start()

    @property
    def pending(self) -> int:
        with self._cond:
            return len(self._pending)

    def _idle(self) -> bool:
        if self._closing:
            return self._undone or not self._busy
        return self._disabled or (not self._pending and not self._busy and not self._backfill)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until every queued record is indexed (or failed) and the backfill pass is done;
        True when that happened within ``timeout`` seconds.

        After ``close``: False when work was left undone (records dropped from the queue or
        written after close, a batch's vectors dropped, the backfill pass unfinished), which the
        next backfill finds."""
        self.start()
        with self._cond:
            return self._cond.wait_for(self._idle, timeout) and not self._undone

    def close(self, timeout: float = 2.0) -> bool:
        """Let the worker finish what is queued within ``timeout`` seconds, then stop it. True
        when the queue was drained."""
        with self._cond:
            thread = self._thread
            drained = self._cond.wait_for(lambda: self._disabled or (not self._pending and not self._busy), timeout)
            self._closing = True
            if not self._disabled and (self._pending or self._backfill or self._due is not None):
                self._undone = True
            self._pending.clear()
            self._cond.notify_all()
        # vectors being written now are written before the store closes; later ones are dropped
        if self._storing.acquire(timeout=max(0.0, min(timeout, STORE_WAIT))):
            self._storing.release()
        with self._cond:
            if self._busy:  # a batch still being embedded will be dropped: no need to wait for it
                self._undone = True
                self._cond.notify_all()
        if thread is not None:
            thread.join(max(0.0, min(timeout, 0.1)))
        return drained

    # -- the worker ---------------------------------------------------------------------

    def _work(self) -> None:
        try:
            embedder = self.embedder.get(wait=None)
        except Exception as exc:
            self._report(exc)
            with self._cond:
                self._disabled = True
                self._pending.clear()
                self._cond.notify_all()
            return
        while True:
            with self._cond:
                if not self._closing and not self._pending and not self._backfill and self._due is not None:
                    if (wait := self._due - time.monotonic()) > 0:
                        self._cond.wait(wait)  # the scheduled pass, unless a write or close comes first
                        continue
                    self._due, self._backfill, self._cursor = None, True, None
                    self._failed.clear()  # the records that failed are tried again by this pass
                if self._closing or (not self._pending and not self._backfill):
                    self._thread = None  # the next enqueue starts another
                    self._cond.notify_all()
                    return
                batch = self._take()
                self._busy = True
            try:
                if batch is None:
                    batch = self._next_missing(embedder)
                embedder_failed = bool(batch) and self._index(embedder, batch)
                self._failing = ""
                self._after(embedder_failed, answered=bool(batch) and not embedder_failed)
            except Exception as exc:  # a store failure: reported once while it lasts, tried again later
                said = f"{type(exc).__name__}: {exc}"
                if said != self._failing:
                    self._failing = said
                    self._report(exc)
                self._retry = min(MAX_RETRY, max(FIRST_RETRY, 2 * self._retry))
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()
                    if self._retry and not self._closing:  # a failing store or embedder is not tried in a tight loop
                        self._cond.wait_for(lambda: self._closing, self._retry)

    def _after(self, embedder_failed: bool, *, answered: bool) -> None:
        """Back off after an embedder failure and schedule the pass that retries its records (``MAX_PASSES``
        in a row at most); once the embedder ``answered`` a batch again, retry what it failed before."""
        with self._cond:
            if not embedder_failed:
                self._retry = 0.0
                if not answered:
                    return  # nothing was embedded (an empty pass): the embedder said nothing
                if self._failed and self._due is None and self._passes >= MAX_PASSES:
                    self._due = time.monotonic() + FIRST_BACKFILL  # it answers again: retry what it failed
                if not self._failed and self._due is None:
                    self._delay = FIRST_BACKFILL  # nothing left over: the next outage starts afresh
                self._passes = 0
                return
            self._retry = min(MAX_RETRY, max(FIRST_RETRY, 2 * self._retry))
            if self._due is None and self._passes < MAX_PASSES:  # an outage does not hold the thread for ever
                self._due = time.monotonic() + self._delay
                self._delay = min(MAX_BACKFILL, 2 * self._delay)
                self._passes += 1

    def _report(self, exc: BaseException) -> None:
        """``report``, except once closing: the work that failed is left to the next backfill."""
        if self._closing:
            self._undone = True
        else:
            self.report(exc, "index")

    def _take(self) -> list[Experience] | None:
        if not self._pending:
            return None
        keys = list(itertools.islice(self._pending, self.batch_size))
        return [self._pending.pop(key) for key in keys]

    def _next_missing(self, embedder: Checked) -> list[Experience]:
        """The next page of the backfill pass (records already queued left to the queue)."""
        found = self.store.missing_vectors(embedder.model_id, limit=self.batch_size, after=self._cursor)
        with self._cond:
            if not found:
                self._backfill = False
                self._cursor = None
                return []
            last = found[-1]
            self._cursor = (last.scope.tenant, last.id)
            return [
                e
                for e in found
                if (key := (e.scope.tenant, e.id)) not in self._pending and self._failed.get(key) != e.revision
            ]

    def _index(self, embedder: Checked, batch: list[Experience]) -> bool:
        """Index ``batch``; True when the embedder failed for any of its records."""
        try:
            stored = self._embed_and_store(embedder, batch)
        except EmbedderError as exc:
            if len(batch) == 1 or isinstance(exc, _Stuck):
                self._failures(batch, [exc])
                return True
            errors = []  # isolate the records at fault; report the first error only
            for one in batch:
                try:
                    stored = self._embed_and_store(embedder, [one])
                except EmbedderError as error:
                    errors.append(error)
                    self._failures([one], [])
                    continue
                self._done([one], stored)
            if errors:
                more = f" (and {len(errors) - 1} more records of that batch)" if len(errors) > 1 else ""
                self._report(EmbedderError(f"{errors[0]}{more}"))
            return bool(errors)
        self._done(batch, stored)
        return False

    def _done(self, batch: list[Experience], stored: int | None) -> None:
        if stored is None:  # closing: the vectors were dropped
            return
        self.indexed += stored
        if stored < len(batch):
            if self._closing:
                self._undone = True  # the records that changed are left to the backfill
            else:
                self._requeue_changed(batch)

    def _failures(self, batch: list[Experience], errors: list[EmbedderError]) -> None:
        self.failed += len(batch)
        with self._cond:
            if len(self._failed) > self.max_pending:
                self._failed.clear()
            self._failed.update(((e.scope.tenant, e.id), e.revision) for e in batch)
        for error in errors:
            self._report(error)

    def _embed_and_store(self, embedder: Checked, batch: list[Experience]) -> int | None:
        """The number of ``batch``'s vectors stored; None when closing began (they are dropped)."""
        if self._closing:  # a batch isolating its records: the rest is left undone
            self._undone = True
            return None
        earlier = self._embedding
        if earlier is not None and earlier.is_alive():  # a call that passed embed_timeout: wait for it
            earlier.join(self.embed_timeout)
            if earlier.is_alive():
                raise _Stuck(
                    f"embedder {embedder.model_id!r} has not answered an earlier batch for over"
                    f" {2 * self.embed_timeout:g} s: not called again until it does ({len(batch)} records wait)"
                )
        result: list[list[StoredVector] | BaseException] = []

        def run() -> None:
            try:
                result.append(make_vectors(embedder, batch, self.recent))
            except BaseException as exc:  # handed to the worker below
                result.append(exc)

        thread = self._embedding = threading.Thread(target=run, name="afteraction-embed", daemon=True)
        thread.start()
        thread.join(self.embed_timeout)
        if not result:
            raise _Stuck(f"embedder {embedder.model_id!r} took over {self.embed_timeout:g} s for {len(batch)} records")
        outcome = result[0]
        if isinstance(outcome, BaseException):
            raise outcome
        with self._storing:
            if self._closing:
                self._undone = True
                return None
            return self.store.put_vectors(outcome)

    def _requeue_changed(self, batch: list[Experience]) -> None:
        """Records that moved on while they were embedded: queue them at their new revision."""
        newer = []
        for experience in batch:
            current = self.store.get(experience.scope, experience.id)
            if current is not None and current.revision != experience.revision:
                newer.append(current)
        if newer:
            self.enqueue(newer)


def _quiet_at_exit(report: Callable[[BaseException, str], None]) -> Callable[[BaseException, str], None]:
    """``report``, except while the process exits: work refused then is left for the next
    backfill, which is no failure worth a warning."""

    def reporting(exc: BaseException, where: str) -> None:
        if not GATE.closing:
            report(exc, where)

    return reporting
