"""The ``vectors`` table of the SQLite store (migration m005): writing vectors under the
revision guard, and finding the records that still need one.

One row per (tenant, record id, model): the record's revision it was made from, its ``pk`` (the
key of the in-process indexes), the dimension, the float32 values as a little-endian blob, and
``seq``: every written batch takes the next number of its (tenant, model), so an index that has
seen up to N catches up by reading the rows above N. ``put`` is one prepared statement run over
the batch inside the caller's transaction; its ``SELECT ... WHERE e.revision = ?`` is the
revision guard: a vector of a record that has moved on (or does not exist) is not written.
"""

from __future__ import annotations

import math
import sqlite3
import sys
from array import array
from collections.abc import Sequence
from typing import Any

from afteraction.errors import ValidationError
from afteraction.store.base import StoredVector

__all__ = ["count_missing", "encode", "missing", "put"]

_LITTLE = sys.byteorder == "little"

_PUT = """
    INSERT INTO vectors (tenant, id, model, record, revision, dimension, vector, seq)
    SELECT e.tenant, e.id, ?, e.pk, e.revision, ?, ?, ?
    FROM experiences AS e WHERE e.tenant = ? AND e.id = ? AND e.revision = ?
    ON CONFLICT (tenant, id, model) DO UPDATE SET record = excluded.record, revision = excluded.revision,
        dimension = excluded.dimension, vector = excluded.vector, seq = excluded.seq
"""
_MISSING = """
    SELECT e.data FROM experiences AS e
    LEFT JOIN vectors AS v ON v.tenant = e.tenant AND v.id = e.id AND v.model = ?
    WHERE {tenant} (e.tenant, e.id) > (?, ?) AND (v.revision IS NULL OR v.revision != e.revision)
    ORDER BY e.tenant, e.id LIMIT ?
"""


def encode(vectors: Sequence[StoredVector]) -> list[tuple[Any, ...]]:
    """The ``_PUT`` parameters of each vector (seq still 0); ValidationError naming the item at fault."""
    rows = []
    for i, item in enumerate(vectors):
        if not isinstance(item, StoredVector):
            raise ValidationError(f"vectors[{i}]", f"must be a StoredVector, got {type(item).__name__}")
        try:
            values = array("f", item.vector)
        except (TypeError, ValueError, OverflowError) as exc:
            raise ValidationError(f"vectors[{i}].vector", f"must be a sequence of numbers ({exc})") from None
        if not values or not all(map(math.isfinite, values)):
            raise ValidationError(f"vectors[{i}].vector", "must be a non-empty sequence of finite numbers")
        if not _LITTLE:
            values.byteswap()
        rows.append((item.model, len(values), values.tobytes(), 0, item.tenant, item.id, item.revision))
    return rows


def put(db: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> int:
    """Write ``encode``d rows inside the caller's write transaction; the number stored. Each
    (tenant, model) takes the next ``seq``; a vector of another length than that (tenant,
    model)'s stored vectors is refused (ValidationError: nothing is written)."""
    groups: dict[tuple[str, str], tuple[int, int]] = {}  # (tenant, model) → (seq, dimension)
    batch = []
    for i, (model, dimension, blob, _, tenant, id, revision) in enumerate(rows):
        key = (tenant, model)
        if key not in groups:
            top, stored = db.execute(
                "SELECT max(seq), (SELECT dimension FROM vectors WHERE tenant = ? AND model = ? LIMIT 1) "
                "FROM vectors WHERE tenant = ? AND model = ?",
                (tenant, model, tenant, model),
            ).fetchone()
            groups[key] = ((top or 0) + 1, stored or dimension)
        seq, expected = groups[key]
        if dimension != expected:
            raise ValidationError(
                f"vectors[{i}].vector", f"has {dimension} dimensions; {model!r} vectors here have {expected}"
            )
        batch.append((model, dimension, blob, seq, tenant, id, revision))
    return db.executemany(_PUT, batch).rowcount if batch else 0


def missing(
    db: sqlite3.Connection, model: str, limit: int, tenant: str | None, after: tuple[str, str] | None
) -> list[str]:
    """The stored JSON of records with no current vector of ``model``, in (tenant, id) order."""
    if limit <= 0:
        return []
    start = after if after is not None else (tenant or "", "")
    where = "" if tenant is None else "e.tenant = ? AND"
    params = (model, *([tenant] if tenant is not None else []), *start, limit)
    return [data for (data,) in db.execute(_MISSING.format(tenant=where), params)]


def count_missing(db: sqlite3.Connection, model: str, tenant: str | None) -> int:
    where = "" if tenant is None else "WHERE e.tenant = ?"
    sql = (
        "SELECT count(*) FROM experiences AS e LEFT JOIN vectors AS v ON v.tenant = e.tenant AND v.id = e.id "
        f"AND v.model = ? {where} {'AND' if where else 'WHERE'} (v.revision IS NULL OR v.revision != e.revision)"
    )
    return int(db.execute(sql, (model, *([tenant] if tenant is not None else []))).fetchone()[0])
