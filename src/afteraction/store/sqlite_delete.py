"""Deleting records from the SQLite store (``SQLiteStore.delete``, ``delete_user``), with what was
derived from them.

Inside the caller's write transaction: the records chosen go (by id among those a scope sees, or
every one of a user in a tenant; their FTS5 rows go with them, by m002's delete trigger), then
their vectors. Two numbers must never go down, and deleting the rows that hold the largest
would take them back, so what those rows held is kept (m010):

- the ``written`` stamp: a record written next would take a stamp at or below a model's vector
  mark, and ``missing_vectors`` would never find it (``vector_table``). The largest stamp of the
  deleted records goes to ``high_water``.
- a (tenant, model)'s ``seq``: every index, of this process or another, catches up by reading the
  rows above its watermark (``sqlite_vectors``); the next batch would take a number an index has
  already seen, and the index would never load it. The largest ``seq`` goes to ``vector_seqs``
  (for when no row is left), and back onto the newest remaining row when its newest vector is
  deleted while others remain: a search compares an index's watermark with the rows' ``max(seq)``.

After the commit, ``discard`` takes the deleted records' keys out of this process's indexes, so
that an ANN index saved at close still holds what the table holds. Another process's index keeps
the keys until it is rebuilt (at open, its count no longer agrees with the table); a search never
returns them meanwhile: every key an index gives is joined with ``experiences`` and ``vectors``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from afteraction.model import Scope
from afteraction.store import vector_table
from afteraction.store._sql import scope_predicate
from afteraction.store.sqlite_vectors import VectorSearch

__all__ = ["by_ids", "by_user", "delete", "discard"]

Removed = dict[str, list[int]]  # model → the deleted records' pks

_DELETE = "DELETE FROM experiences AS e WHERE {where} RETURNING id, written"
_KEEP_STAMP = """
    INSERT INTO high_water (name, value) VALUES ('written', ?)
    ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value)
"""
_TOPS = "SELECT model, max(seq) FROM vectors WHERE tenant = ? GROUP BY model"
_VECTORS = "DELETE FROM vectors WHERE tenant = ? AND id IN (SELECT value FROM json_each(?)) RETURNING model, record"
_KEEP_TOP = """
    UPDATE vectors SET seq = ?1
    WHERE tenant = ?2 AND model = ?3
      AND id = (SELECT id FROM vectors WHERE tenant = ?2 AND model = ?3 ORDER BY seq DESC LIMIT 1) AND seq < ?1
"""


def by_ids(scope: Scope, ids: Sequence[str], column: Callable[[str], str]) -> tuple[str, list[Any]]:
    """The records with ``ids`` that ``scope`` sees: a condition (on alias ``e``) and its parameters."""
    where, params = scope_predicate(scope, "?", column)
    return f"e.id IN (SELECT value FROM json_each(?)) AND {where}", [json.dumps(list(ids)), *params]


def by_user(tenant: str, user: str) -> tuple[str, list[Any]]:
    """Every record of ``user`` in ``tenant``, any app, project, team or agent."""
    return "e.tenant = ? AND e.user = ?", [tenant, user]


def delete(db: sqlite3.Connection, tenant: str, chosen: tuple[str, list[Any]]) -> tuple[list[str], Removed]:
    """Delete the records of ``tenant`` that the condition ``chosen`` (``by_ids``, ``by_user``)
    picks, and their vectors, inside the caller's write transaction: (their ids, the vectors'
    keys by model)."""
    where, params = chosen
    deleted = db.execute(_DELETE.format(where=where), params).fetchall()
    if not deleted:
        return [], {}
    gone = [id for id, _ in deleted]
    db.execute(_KEEP_STAMP, (max(written for _, written in deleted),))
    tops: dict[str, Any] = dict(db.execute(_TOPS, (tenant,)).fetchall())
    removed: Removed = {}
    for model, record in db.execute(_VECTORS, (tenant, json.dumps(gone))).fetchall():
        removed.setdefault(model, []).append(record)
    vector_table.keep_seqs(db, [(tenant, model, tops[model]) for model in removed])
    for model in removed:
        db.execute(_KEEP_TOP, (tops[model], tenant, model))
    return gone, removed


def discard(search: VectorSearch, tenant: str, removed: Removed) -> None:
    """Take the deleted keys out of this process's indexes of ``tenant`` (after the commit)."""
    with search.lock:
        for model, keys in removed.items():
            entry = search.entries.get((tenant, model))
            if entry is not None:
                entry.index.remove(keys)
                entry.saved = -1  # the saved file holds them: save it again at close
