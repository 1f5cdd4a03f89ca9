"""Deleting records from the SQLite store (``SQLiteStore.delete``), with what was derived from them.

Inside the caller's write transaction: the records the scope sees go (their FTS5 rows go with
them, by m002's delete trigger), then their vectors. A (tenant, model) whose newest vector
(largest ``seq``) is deleted while others remain gets that ``seq`` back on its newest remaining
row: every index, of this process or another, catches up by reading the rows above its
watermark (``sqlite_vectors``), so the largest ``seq`` must never go down: the next batch would
take a number an index has already seen, and the index would never load it.

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
from afteraction.store._sql import scope_predicate
from afteraction.store.sqlite_vectors import VectorSearch

__all__ = ["delete", "discard"]

Removed = dict[str, list[int]]  # model → the deleted records' pks

_DELETE = "DELETE FROM experiences AS e WHERE e.id IN (SELECT value FROM json_each(?)) AND {scope} RETURNING id"
_TOPS = "SELECT model, max(seq) FROM vectors WHERE tenant = ? GROUP BY model"
_VECTORS = "DELETE FROM vectors WHERE tenant = ? AND id IN (SELECT value FROM json_each(?)) RETURNING model, record"
_KEEP_TOP = """
    UPDATE vectors SET seq = ?1
    WHERE tenant = ?2 AND model = ?3
      AND id = (SELECT id FROM vectors WHERE tenant = ?2 AND model = ?3 ORDER BY seq DESC LIMIT 1) AND seq < ?1
"""


def delete(
    db: sqlite3.Connection, scope: Scope, ids: Sequence[str], column: Callable[[str], str]
) -> tuple[int, Removed]:
    """Delete the records with ``ids`` that ``scope`` sees and their vectors, inside the
    caller's write transaction: (how many records, the vectors' keys by model)."""
    where, params = scope_predicate(scope, "?", column)
    gone = [id for (id,) in db.execute(_DELETE.format(scope=where), (json.dumps(list(ids)), *params))]
    if not gone:
        return 0, {}
    tops: dict[str, Any] = dict(db.execute(_TOPS, (scope.tenant,)).fetchall())
    removed: Removed = {}
    for model, record in db.execute(_VECTORS, (scope.tenant, json.dumps(gone))).fetchall():
        removed.setdefault(model, []).append(record)
    for model in removed:
        db.execute(_KEEP_TOP, (tops[model], scope.tenant, model))
    return len(gone), removed


def discard(search: VectorSearch, tenant: str, removed: Removed) -> None:
    """Take the deleted keys out of this process's indexes of ``tenant`` (after the commit)."""
    with search.lock:
        for model, keys in removed.items():
            entry = search.entries.get((tenant, model))
            if entry is not None:
                entry.index.remove(keys)
                entry.saved = -1  # the saved file holds them: save it again at close
