"""Scoring vector candidates of the SQLite store exactly, and reading the records chosen.

The indexes (``vector_index``) only propose keys; the scores a search returns are cosines
computed here from the float32 blobs of the ``vectors`` table (unit vectors: a dot product), ties
broken by record id, and only the records returned have their large columns read.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from afteraction.store.records import COLUMNS

if TYPE_CHECKING:
    from afteraction.store.vector_index import Floats

__all__ = ["AMONG", "best", "matrix", "records"]

AMONG = "e.pk IN (SELECT value FROM json_each(?))"
_STEMS = "e.task_terms || ' ' || e.summary_terms || ' ' || e.lesson_terms"


def matrix(np: Any, blobs: Sequence[bytes], dimension: int) -> Floats:
    values = np.frombuffer(b"".join(blobs), dtype="<f4")
    return values.reshape(len(blobs), dimension).astype(np.float32, copy=False)  # type: ignore[no-any-return]


def best(np: Any, query: Floats, found: dict[int, tuple[str, bytes]], limit: int) -> list[tuple[int, float]]:
    """The best ``limit`` of ``found`` (pk → (id, float32 blob)), scored exactly: (pk, cosine)."""
    if not found:
        return []
    keys = list(found)
    scores = matrix(np, [found[key][1] for key in keys], len(query)) @ query
    ranked = sorted(
        zip(scores.tolist(), keys, strict=True), key=lambda item: (item[0], found[item[1]][0]), reverse=True
    )
    return [(key, score) for score, key in ranked[:limit]]


def records(db: sqlite3.Connection, best: list[tuple[int, float]]) -> list[tuple[Any, ...]]:
    """(``records.COLUMNS``..., stems, cosine) of the chosen pks, in their order: the large
    columns are read only for the records returned."""
    if not best:
        return []
    sql = f"SELECT e.pk, {COLUMNS}, {_STEMS} FROM experiences AS e WHERE {AMONG}"
    rows = {row[0]: row[1:] for row in db.execute(sql, (json.dumps([pk for pk, _ in best]),))}
    return [(*rows[pk], score) for pk, score in best if pk in rows]
