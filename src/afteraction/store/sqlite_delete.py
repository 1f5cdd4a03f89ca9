"""Deleting from the SQLite store: records (``SQLiteStore.delete``, ``delete_user``) with what was
derived from them, and a model's vectors (``drop_vectors``); and what a delete does to the vector
index files beside the database (``sqlite_vectors``, ``vector_index``).

Inside the caller's write transaction: the records chosen go (by id among those a scope sees, or
every one of a user in a tenant; their FTS5 rows go with them, by m002's delete trigger), then
their vectors. Two numbers must never go down, and deleting the rows that hold the largest
would take them back, so what those rows held is kept (m010):

- the ``written`` stamp: a record written next would take a stamp at or below a model's vector
  mark, and ``missing_vectors`` would never find it (``vector_table``). The largest stamp of the
  deleted records goes to ``high_water``.
- a (tenant, model)'s ``seq``: every index, of this process or another, catches up by reading the
  rows above its watermark (``sqlite_vectors``). A delete of vectors takes the next number
  (``erased``): it goes to ``vector_seqs`` and onto the newest remaining row, so that the next
  batch is numbered above it and every index loaded anywhere sees that something changed.

**Nothing of the text stays behind** (a forget is a deletion request's answer). FTS5's delete only
appends a delete marker in a new segment of ``experiences_fts_data``: the deleted record's terms
would stay in the older segments, live rows of the file, until a merge happened to reach them
(VACUUM keeps them too). So a delete that removed records ends with an FTS5 ``optimize``, which
writes the index again as one segment without them (SQLite's ``secure-delete`` would do it in
place, but needs 3.42 and makes the index unreadable to older SQLite: a store copied to another
machine would fail). It rewrites the whole index: a forget took 60 ms at 10k lessons, 0.54 s at 100k
(docs/design.md), once per delete whatever the number of records; a search reads fewer
segments after it. The transaction is marked ``erasing`` (``sqlite_access``): its commit is
followed by a TRUNCATE checkpoint, so the deleted rows leave the ``-wal`` file too.

**The index files.** usearch keeps a removed key's vector in the index and in the file it saves (the
slot is only marked free), so no index that may hold a deleted vector is ever written to a file,
and a delete that removed vectors of a (tenant, model) removes that pair's files (``remove_files``):

- inside the transaction, before the commit: a crash then leaves the rows and no file, which is
  built again from the table. A file that cannot be removed fails the delete (StoreError): a
  forgotten lesson must not stay in a file, so nothing is deleted.
- again after the commit: another process that had the index loaded may have saved it between.

An index may hold deleted vectors exactly when ``erased`` is above its watermark. ``VectorSearch``
then marks it ``tainted`` (when it catches up, which the moved ``seq`` makes it do), never saves a
tainted index (it asks again just before writing and just after, and removes what it wrote when a
delete committed meanwhile), and never loads a file saved below ``erased`` (``stale``: it removes
it, so a crash between the commit and the removal is cleaned up at the next open). This process's
indexes lose the deleted keys at once (``discard``), so its searches do not spend candidates on
them; another process's keep them, and its searches never return them: every key an index gives is
joined with ``experiences`` and ``vectors``. The file is built again from the table by the next
process that searches (in the background from ``IndexPolicy.background_from`` vectors, searches
exact meanwhile), or by ``reindex``.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from afteraction.errors import StoreError
from afteraction.model import Scope
from afteraction.store import vector_table
from afteraction.store._sql import scope_predicate
from afteraction.store.sqlite_access import erasing
from afteraction.store.vector_index import IndexFiles, Manifest

if TYPE_CHECKING:
    from afteraction.store.sqlite_vectors import VectorSearch

__all__ = ["by_ids", "by_user", "delete", "discard", "drop", "erased", "remove_files", "run", "stale"]

log = logging.getLogger("afteraction.store")

Removed = dict[str, list[int]]  # model → the deleted records' pks
Writing = Callable[[], AbstractContextManager[sqlite3.Connection]]

_DELETE = "DELETE FROM experiences AS e WHERE {where} RETURNING id, written"
_OPTIMIZE = "INSERT INTO experiences_fts (experiences_fts) VALUES ('optimize')"
_KEEP_STAMP = """
    INSERT INTO high_water (name, value) VALUES ('written', ?)
    ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value)
"""
_TOPS = "SELECT model, max(seq) FROM vectors WHERE tenant = ? GROUP BY model"
_VECTORS = "DELETE FROM vectors WHERE tenant = ? AND id IN (SELECT value FROM json_each(?)) RETURNING model, record"
_ERASED = "SELECT seq FROM vector_seqs WHERE tenant = ? AND model = ?"
_MOVE_TOP = """
    UPDATE vectors SET seq = ?1
    WHERE tenant = ?2 AND model = ?3
      AND id = (SELECT id FROM vectors WHERE tenant = ?2 AND model = ?3 ORDER BY seq DESC LIMIT 1)
"""
_DROPPED = "UPDATE vector_seqs SET seq = seq + 1 WHERE model = ?1 AND (?2 IS NULL OR tenant = ?2)"


def by_ids(scope: Scope, ids: Sequence[str], column: Callable[[str], str]) -> tuple[str, list[Any]]:
    """The records with ``ids`` that ``scope`` sees: a condition (on alias ``e``) and its parameters."""
    where, params = scope_predicate(scope, "?", column)
    return f"e.id IN (SELECT value FROM json_each(?)) AND {where}", [json.dumps(list(ids)), *params]


def by_user(tenant: str, user: str) -> tuple[str, list[Any]]:
    """Every record of ``user`` in ``tenant``, any app, project, team or agent."""
    return "e.tenant = ? AND e.user = ?", [tenant, user]


def run(writing: Writing, search: VectorSearch, tenant: str, chosen: tuple[str, list[Any]]) -> list[str]:
    """Delete the records of ``tenant`` that ``chosen`` picks in one write transaction, with their
    vectors and the index files of every model that lost some (before the commit and again after
    it), then take their keys out of this process's indexes: the ids deleted. StoreError when a
    file cannot be removed: nothing is deleted."""
    with writing() as db:
        gone, removed = delete(db, tenant, chosen)
        remove_files(search.database, [(model, tenant) for model in removed])
    discard(search, tenant, removed)
    return gone


def delete(db: sqlite3.Connection, tenant: str, chosen: tuple[str, list[Any]]) -> tuple[list[str], Removed]:
    """Delete the records of ``tenant`` that the condition ``chosen`` (``by_ids``, ``by_user``)
    picks, and their vectors, inside the caller's write transaction, then their terms left in the
    text index's older segments (``optimize``; the commit truncates the WAL: see the module): (their
    ids, the vectors' keys by model). Not the index files: ``run`` removes them."""
    where, params = chosen
    deleted = db.execute(_DELETE.format(where=where), params).fetchall()
    if not deleted:
        return [], {}
    db.execute(_OPTIMIZE)
    erasing(db)
    gone = [id for id, _ in deleted]
    db.execute(_KEEP_STAMP, (max(written for _, written in deleted),))
    tops: dict[str, Any] = dict(db.execute(_TOPS, (tenant,)).fetchall())
    removed: Removed = {}
    for model, record in db.execute(_VECTORS, (tenant, json.dumps(gone))).fetchall():
        removed.setdefault(model, []).append(record)
    for model in removed:
        seq = max(tops[model], erased(db, tenant, model)) + 1
        vector_table.keep_seqs(db, [(tenant, model, seq)])
        db.execute(_MOVE_TOP, (seq, tenant, model))
    return gone, removed


def drop(writing: Writing, search: VectorSearch, model: str, tenant: str | None) -> int:
    """``drop_vectors``: the rows of ``model`` (of ``tenant``, or of every tenant) in one write
    transaction (``vector_table.drop``), which takes the next ``seq`` of each pair as a delete does;
    this process's indexes of them and their files go inside it (StoreError when a file cannot be
    removed: nothing is dropped), the files again after the commit. The number of rows deleted."""
    with writing() as db:
        dropped = vector_table.drop(db, model, tenant)
        db.execute(_DROPPED, (model, tenant))
        with search.lock:
            for key in [key for key in search.entries if key[1] == model and tenant in (None, key[0])]:
                del search.entries[key]
        remove_files(search.database, [(model, tenant)])
    _remove_again(search.database, [(model, tenant)])
    return dropped


def discard(search: VectorSearch, tenant: str, removed: Removed) -> None:
    """After the commit: take the deleted keys out of this process's indexes of ``tenant``, which
    are never saved again (``tainted``), and remove their files again (see the module)."""
    with search.lock:
        for model, keys in removed.items():
            entry = search.entries.get((tenant, model))
            if entry is not None:
                entry.index.remove(keys)
                entry.tainted = True
    _remove_again(search.database, [(model, tenant) for model in removed])


def erased(db: sqlite3.Connection, tenant: str, model: str) -> int:
    """The ``seq`` the last delete of (tenant, model)'s vectors took (0: none ever): an index whose
    watermark is below it may hold deleted vectors."""
    found = db.execute(_ERASED, (tenant, model)).fetchone()
    return 0 if found is None else int(found[0])


def stale(db: sqlite3.Connection, manifest: Manifest) -> str:
    """Why the index file ``manifest`` describes may hold deleted vectors, or ''."""
    since = erased(db, manifest.tenant, manifest.model)
    if manifest.format < 2 and since:  # saved by a version that saved an index after keys left it
        return "saved by an earlier version, and vectors were deleted since"
    if since > manifest.watermark:
        return f"vectors were deleted since it was saved (seq {since} > {manifest.watermark})"
    return ""


def remove_files(database: Path | None, pairs: Sequence[tuple[str, str | None]]) -> None:
    """Remove the index files of each (model, tenant; None: every tenant) beside ``database``, and
    the build folders there of processes that ended (a killed host's child graph holds every vector;
    ``IndexFiles.remove_model``), inside the write transaction: StoreError naming them when one
    cannot go (nothing is deleted). A live build's folder stays: its graph, built below ``erased``, is
    tainted and never saved (see the module)."""
    try:
        _remove(database, pairs)
    except OSError as exc:
        raise StoreError(
            f"cannot remove the vector index files beside {database} ({exc}): nothing was deleted; make the "
            "folder writable (or remove the files) and try again"
        ) from exc


def _remove_again(database: Path | None, pairs: Sequence[tuple[str, str | None]]) -> None:
    """The same after the commit: a file that cannot go is logged (the next open finds it stale)."""
    try:
        _remove(database, pairs)
    except OSError as exc:
        log.warning("could not remove the vector index files beside %s after a delete: %s", database, exc)


def _remove(database: Path | None, pairs: Sequence[tuple[str, str | None]]) -> None:
    if database is not None:
        for model, tenant in pairs:
            IndexFiles.remove_model(database, model, tenant)
