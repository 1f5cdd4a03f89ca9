"""Vector search in the SQLite store, over the ``vectors`` table (``vector_table``).

- **Search**: per (tenant, model), an in-process index (``vector_index``) finds the nearest keys;
  SQL then keeps those the caller's scope sees that are eligible and whose vector is current,
  and scores them exactly from their float32 blobs. When too few survive, it asks for more
  (``GROWTH`` times as many); past ``EXACT_AFTER`` candidates, or once an ANN index has given all
  it has, it scores every eligible visible row from SQL instead, so the result is exact.
- **Keeping in step**: every search first reads ``max(seq)`` of its (tenant, model), one index
  seek, and loads the rows above the index's watermark: writes of this connection, of another
  connection or of another process on the same file all show up there.
- **Exact or ANN**: below ``IndexPolicy.ann_from`` vectors a (tenant, model) is searched with an
  exact numpy matrix; from there on with a usearch HNSW index, built in the background by a child
  process (``ann_build``; searches stay exact meanwhile) and saved beside the database. A saved index is used only if
  its manifest, size, checksum, dimension, model, watermark, a sample of its vectors and, after
  catching up, its count all agree with SQLite; otherwise it is rebuilt (``reason`` says why).
- **Threads**: the indexes have a lock of their own, held by a search (after the query's
  embedding), a build's catch-up and swap, a delete's or drop's changes to them and ``close``;
  not by the store's writes. A search's snapshot starts under it (its first statement reads
  ``max(seq)``), so the snapshots the indexes catch up to only move forward, whichever read
  connection each came on.
- **Deletes** (``sqlite_delete``): an index that may hold a deleted vector (``tainted``) is never
  saved, and a file saved before a delete is never loaded; the delete removes the files. A
  dropped model's entries leave ``entries`` (a background build of one then finishes without
  swapping in or saving). Another process notices at its next search of the model (no rows: its
  entry goes) and at close (an index whose rows are gone is not saved).
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from afteraction.errors import ValidationError
from afteraction.model import ELIGIBLE_STATUSES, Scope
from afteraction.store._sql import scope_predicate
from afteraction.store.ann_build import graph
from afteraction.store.sqlite_delete import erased, stale
from afteraction.store.vector_check import differs
from afteraction.store.vector_index import (
    AnnIndex,
    ExactIndex,
    IndexFiles,
    IndexPolicy,
    IndexState,
    load_numpy,
    usearch_available,
)
from afteraction.store.vector_scoring import best, matrix, records

if TYPE_CHECKING:
    from afteraction.store.vector_index import Floats, Keys

__all__ = ["IndexPolicy", "IndexState", "VectorSearch"]

log = logging.getLogger("afteraction.store")

GROWTH = 8
EXACT_AFTER = 4_096
_ELIGIBLE = ", ".join(f"'{status.value}'" for status in sorted(ELIGIBLE_STATUSES, key=lambda s: s.value))

_CURRENT = (
    "JOIN vectors AS v ON v.tenant = e.tenant AND v.id = e.id AND v.model = ? WHERE v.revision = e.revision"
    f" AND {{scope}} AND e.status IN ({_ELIGIBLE}) AND e.confidence >= ? AND (e.expires_at IS NULL OR e.expires_at > ?)"
)
#: Eligible visible records with a current vector of the model.
_FROM_VISIBLE = f"FROM experiences AS e {_CURRENT}"
#: The same among chosen pks, which drive the lookup (CROSS JOIN keeps json_each the outer loop):
#: left to itself, SQLite walked the whole scope by its index, 20 ms at 100k lessons.
_FROM_CANDIDATES = f"FROM json_each(?) AS j CROSS JOIN experiences AS e ON e.pk = j.value {_CURRENT}"


def _column(part: str) -> str:
    return f"e.{part}"


@dataclass(slots=True)
class _Entry:
    tenant: str
    model: str
    dimension: int
    index: ExactIndex | AnnIndex
    watermark: int
    files: IndexFiles | None
    saved: int = -1  # the watermark last written to the files (-1: never)
    building: bool = False
    reason: str = ""  # why the saved index was not used, when it was not
    tainted: bool = False  # it may hold deleted vectors (``sqlite_delete``): never saved
    builds: int = field(default=0)


Reading = Callable[[], AbstractContextManager[sqlite3.Connection]]


class VectorSearch:
    """The per-(tenant, model) indexes of one SQLite store. Every public method that takes ``db``
    runs inside one read snapshot that it starts, under ``lock``; the background build reads
    rows through ``reading`` (a read connection of its own) to catch up and swap its index in."""

    def __init__(self, database: Path | None, reading: Reading, policy: IndexPolicy | None = None) -> None:
        self.database = database
        self.reading = reading
        self.policy = policy or IndexPolicy()
        self.entries: dict[tuple[str, str], _Entry] = {}
        self.lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._stopping = threading.Event()

    def after_fork(self) -> None:
        """In a forked child: the parent's indexes and builds are left behind (a thread of the
        parent may have been changing one), and are loaded again from the files and SQLite."""
        self.entries, self.lock, self._threads, self._stopping = {}, threading.Lock(), [], threading.Event()

    def search(
        self,
        db: sqlite3.Connection,
        scope: Scope,
        model: str,
        vector: Sequence[float],
        *,
        now: int,
        limit: int,
        min_confidence: float,
    ) -> list[tuple[Any, ...]]:
        """(``records.COLUMNS``..., stems, cosine) of the best ``limit`` eligible visible records."""
        np = load_numpy()
        try:
            query = np.asarray(vector, dtype=np.float32).reshape(-1)
        except (TypeError, ValueError) as exc:
            raise ValidationError("vector", f"must be a sequence of numbers ({exc})") from None
        with self.lock:
            return self._search(db, query, scope, model, now=now, limit=limit, min_confidence=min_confidence)

    def _search(
        self, db: sqlite3.Connection, query: Floats, scope: Scope, model: str, *, now: int, limit: int,
        min_confidence: float,
    ) -> list[tuple[Any, ...]]:  # fmt: skip
        np = load_numpy()
        entry = self.sync(db, scope.tenant, model)
        if entry is None:
            return []
        if len(query) != entry.dimension:
            raise ValidationError(
                "vector", f"has {len(query)} dimensions; {model!r} vectors here have {entry.dimension}"
            )
        scope_sql, scope_params = scope_predicate(scope, "?", _column)
        visible = _FROM_VISIBLE.format(scope=scope_sql)
        among = f"SELECT e.pk, e.id, v.vector {_FROM_CANDIDATES.format(scope=scope_sql)}"
        tail = (*scope_params, min_confidence, now)
        found: dict[int, tuple[str, bytes]] = {}
        checked: set[int] = set()
        k = max(4 * limit, 64)
        while True:
            keys = entry.index.nearest(query, k)
            fresh = [key for key in keys if key not in checked]
            checked.update(fresh)
            if fresh:
                for pk, id, blob in db.execute(among, (json.dumps(fresh), model, *tail)):
                    found[pk] = (id, blob)
            exhausted = len(keys) >= len(entry.index)
            if len(found) >= limit or (exhausted and entry.index.kind == "exact"):
                break
            if exhausted or k >= EXACT_AFTER:
                return self._scan(db, query, visible, among, (model, *tail), limit)
            k *= GROWTH
        return records(db, best(np, query, found, limit))

    def _scan(
        self, db: sqlite3.Connection, query: Floats, visible: str, among: str, params: tuple[Any, ...], limit: int
    ) -> list[tuple[Any, ...]]:
        """Every eligible visible row with a current vector, scored exactly."""
        np = load_numpy()
        rows = db.execute(f"SELECT e.pk, v.vector {visible}", params).fetchall()
        if not rows:
            return []
        scores = matrix(np, [blob for _, blob in rows], len(query)) @ query
        top = np.argsort(-scores, kind="stable")[: 4 * limit]
        keys = [rows[i][0] for i in top]
        found = {pk: (id, blob) for pk, id, blob in db.execute(among, (json.dumps(keys), *params))}
        return records(db, best(np, query, found, limit))

    # keeping in step

    def sync(self, db: sqlite3.Connection, tenant: str, model: str, *, build: bool = True) -> _Entry | None:
        """The index of (tenant, model), brought up to the database's current rows (under ``lock``)."""
        key = (tenant, model)
        top = db.execute("SELECT max(seq) FROM vectors WHERE tenant = ? AND model = ?", key).fetchone()[0]
        entry = self.entries.get(key)
        if top is None:
            self.entries.pop(key, None)
            return None
        # first use; the database went back (a restore); the model stored anew at another dimension
        if entry is None or top < entry.watermark or (top > entry.watermark and not self._catch_up(db, entry)):
            entry = self.entries[key] = self._open(db, tenant, model, top)
        if build and entry.index.kind == "exact" and not entry.building and len(entry.index) >= self.policy.ann_from:
            self._start_build(entry, db)
        return entry

    def _open(self, db: sqlite3.Connection, tenant: str, model: str, top: int) -> _Entry:
        dimension, count = db.execute(
            "SELECT (SELECT dimension FROM vectors WHERE tenant = ?1 AND model = ?2 LIMIT 1), count(*) "
            "FROM vectors WHERE tenant = ?1 AND model = ?2",
            (tenant, model),
        ).fetchone()
        files = None if self.database is None else IndexFiles(self.database, tenant, model)
        saved = "missing" if files is None else files.manifest()
        reason = "" if isinstance(saved, str) else stale(db, saved)
        if files is not None and reason:  # it may hold deleted vectors: it goes, whatever the count
            with contextlib.suppress(OSError):
                files.remove()
        elif files is not None and count >= self.policy.ann_from and usearch_available():
            loaded = files.load(dimension)
            if isinstance(loaded, str):
                reason = loaded
            else:
                ann, manifest = loaded
                entry = _Entry(tenant, model, dimension, ann, manifest.watermark, files, saved=manifest.watermark)
                reason = stale(db, manifest) or self._check(db, entry, top, count)
                if not reason:
                    return entry
        if reason:
            log.info("vector index of %r/%r not used (%s): rebuilding it from SQLite", tenant, model, reason)
        entry = _Entry(tenant, model, dimension, ExactIndex(dimension), 0, files, reason=reason)
        self._catch_up(db, entry)
        return entry

    def _check(self, db: sqlite3.Connection, entry: _Entry, top: int, count: int) -> str:
        """Why a loaded index cannot serve (catching it up to ``top`` on the way), or ''."""
        if entry.watermark > top:
            return f"its watermark {entry.watermark} is past the database's {top}"
        assert isinstance(entry.index, AnnIndex)
        reason = differs(db, entry.index, entry.tenant, entry.model, entry.watermark)
        if reason:
            return reason
        self._catch_up(db, entry)
        if len(entry.index) != count:
            return f"it holds {len(entry.index)} vectors where the database has {count}"
        return ""

    def _catch_up(self, db: sqlite3.Connection, entry: _Entry) -> bool:
        """Load the rows above the watermark; False when they have another dimension (every row was
        deleted, then the model stored again): the entry cannot hold them."""
        rows = db.execute(
            "SELECT record, vector, seq FROM vectors WHERE tenant = ? AND model = ? AND seq > ? ORDER BY seq",
            (entry.tenant, entry.model, entry.watermark),
        ).fetchall()
        if any(len(blob) != 4 * entry.dimension for _, blob, _ in rows):
            return False
        if not rows:
            return True
        if len(entry.index) and erased(db, entry.tenant, entry.model) > entry.watermark:
            entry.tainted = True  # rows it holds were deleted since its watermark
        np = load_numpy()
        latest: dict[int, bytes] = {record: blob for record, blob, _ in rows}
        entry.index.upsert(list(latest), matrix(np, list(latest.values()), entry.dimension))
        entry.watermark = rows[-1][2]
        return True

    # the ANN index

    def _start_build(self, entry: _Entry, db: sqlite3.Connection) -> None:
        """Replace the exact index by an ANN one: here when small, else in the background (searches stay exact)."""
        if not usearch_available():
            return
        entry.building = True
        if len(entry.index) < self.policy.background_from:
            try:
                assert isinstance(entry.index, ExactIndex)
                if (ann := self._graph(entry, *entry.index.contents())) is not None:  # small: built in this thread
                    self._swap_in(db, entry, ann, entry.watermark)
            finally:
                entry.building = False
            return
        thread = threading.Thread(target=self._build, args=(entry,), name="afteraction-vector-index", daemon=True)
        self._threads.append(thread)
        thread.start()

    def _build(self, entry: _Entry) -> None:
        """The background build: a snapshot of the exact index's contents taken under the lock,
        the graph built outside it (in a child process: ``ann_build``), then caught up and swapped in under it."""
        try:
            with self.lock:
                mark = entry.watermark
                assert isinstance(entry.index, ExactIndex)
                keys, vectors = entry.index.contents()  # rows replaced meanwhile come back via seq
            ann = self._graph(entry, keys, vectors)
            if ann is None:  # the store is closing
                return
            with self.reading() as db, self.lock:  # the catch-up's snapshot starts under the lock
                if self.entries.get((entry.tenant, entry.model)) is entry:
                    self._swap_in(db, entry, ann, mark)
        except Exception:  # a build that fails leaves the exact index serving
            log.exception("building the vector index of %r/%r failed", entry.tenant, entry.model)
        finally:
            with self.lock:
                entry.building = False

    def _graph(self, entry: _Entry, keys: Keys, vectors: Floats) -> AnnIndex | None:
        """An ANN index of ``keys`` and ``vectors``: a large one built in a child process; None once closing."""
        child = self.policy.build_in_child and len(keys) >= self.policy.background_from
        scratch = None if entry.files is None else entry.files.folder
        return graph(keys, vectors, entry.dimension, stopping=self._stopping, scratch=scratch, in_child=child)

    def _swap_in(self, db: sqlite3.Connection, entry: _Entry, ann: AnnIndex, mark: int) -> None:
        entry.index, entry.watermark = ann, mark
        self._catch_up(db, entry)
        entry.builds += 1
        self.save(entry)

    def save(self, entry: _Entry, latest: sqlite3.Connection | None = None) -> None:
        """Save the ANN index beside the database, if it moved on and holds no deleted vector: asked just before
        writing and just after (through ``latest``, which sees every commit, or a reader), what it wrote is removed
        when a delete committed meanwhile. A cache: one that cannot be written (a read-only folder, a file where the
        folder should be) is logged, and the index is built again by the next process."""
        if entry.files is None or not isinstance(entry.index, AnnIndex) or entry.saved == entry.watermark:
            return
        try:
            if self._clean(entry, latest):
                entry.files.save(entry.index, entry.watermark)
                if self._clean(entry, latest):
                    entry.saved = entry.watermark
                else:
                    entry.files.remove()
        except OSError as exc:
            log.warning("could not save the vector index of %r/%r: %s", entry.tenant, entry.model, exc)

    def _clean(self, entry: _Entry, latest: sqlite3.Connection | None) -> bool:
        """False (and ``entry`` tainted) when it may hold a deleted vector."""
        if not entry.tainted:
            with contextlib.nullcontext(latest) if latest is not None else self.reading() as db:
                entry.tainted = erased(db, entry.tenant, entry.model) > entry.watermark
        return not entry.tainted

    def build(self, db: sqlite3.Connection, model: str, tenant: str | None, *, rebuild: bool) -> list[IndexState]:
        """``refresh`` of each tenant with vectors of ``model`` (or of ``tenant``), in the snapshot of ``db``."""
        with self.lock:
            sql = "SELECT DISTINCT tenant FROM vectors WHERE model = ? ORDER BY tenant"
            tenants = [tenant] if tenant is not None else [t for (t,) in db.execute(sql, (model,))]
            states = [self.refresh(db, t, model, rebuild=rebuild) for t in tenants]
        return [state for state in states if state is not None]

    def refresh(self, db: sqlite3.Connection, tenant: str, model: str, *, rebuild: bool) -> IndexState | None:
        """Bring (tenant, model)'s index up to date now and save it: build the ANN index when
        ``rebuild`` (discarding the saved one) or when it is due and missing; None: no vectors.
        Under ``lock``."""
        key = (tenant, model)
        before = self.entries[key].builds if key in self.entries else 0
        entry = self.sync(db, tenant, model, build=False)
        if entry is None:
            return None
        due = entry.index.kind == "exact" and len(entry.index) >= self.policy.ann_from
        dirty = entry.tainted and entry.index.kind == "ann"  # it is never saved: built again from the table
        if (rebuild or due or dirty) and usearch_available():
            if entry.files is not None:
                with contextlib.suppress(OSError):  # a file that cannot go is not loaded again: it is rebuilt
                    entry.files.remove()
            top = entry.watermark
            self.entries.pop(key, None)
            entry = self.entries[key] = self._open(db, tenant, model, top)
            entry.reason = "asked to rebuild" if rebuild else "vectors were deleted from it" if dirty else entry.reason
            assert isinstance(entry.index, ExactIndex)
            if (ann := self._graph(entry, *entry.index.contents())) is not None:
                self._swap_in(db, entry, ann, entry.watermark)
            before = 0
        else:
            self.save(entry)
        reason = entry.reason
        if entry.files is not None and isinstance(entry.index, AnnIndex) and entry.saved != entry.watermark:
            reason = "; ".join(filter(None, (reason, "its files beside the database could not be written")))
        return IndexState(tenant, model, entry.index.kind, len(entry.index), entry.builds > before, reason)

    def wait(self, timeout: float | None = None) -> None:
        """Until the background builds started so far have finished."""
        for thread in list(self._threads):
            thread.join(timeout)
        self._threads = [thread for thread in self._threads if thread.is_alive()]

    def stop(self) -> None:
        """Abandon the background builds (at their next chunk) and wait for them to end."""
        self._stopping.set()
        self.wait()

    def close(self, db: sqlite3.Connection) -> None:
        """Save every ANN index that caught up since it was last saved, unless its rows are gone
        (another process dropped them)."""
        held = "SELECT 1 FROM vectors WHERE tenant = ? AND model = ? LIMIT 1"
        with self.lock:
            for entry in self.entries.values():
                try:
                    if db.execute(held, (entry.tenant, entry.model)).fetchone() is not None:
                        self.save(entry, db)
                except (OSError, sqlite3.Error) as exc:
                    log.warning("could not save the vector index of %r/%r: %s", entry.tenant, entry.model, exc)
