"""The ``vectors`` table of the SQLite store (migration m005): writing vectors under the
revision guard, and finding the records that still need one.

One row per (tenant, record id, model): the record's revision it was made from, its ``pk`` (the
key of the in-process indexes), the dimension, the float32 values as a little-endian blob, and
``seq``: every written batch takes the next number of its (tenant, model), so an index that has
seen up to N catches up by reading the rows above N; the next number is one more than the largest
of the rows' and of ``vector_seqs`` (m010, the largest a deleted row held), so it never goes down,
even once every row of the (tenant, model) was deleted. ``put`` is one prepared statement run over
the batch inside the caller's transaction; its ``SELECT ... WHERE e.revision = ?`` is the
revision guard: a vector of a record that has moved on (or does not exist) is not written.

Finding the records that need a vector (``missing``) reads only those stamped (``written``, m007)
after the model's mark in ``vector_marks``: every record stamped up to the mark had a current
vector of the model when the mark was set, and keeps it until it is written again (which stamps
it anew, with ``NEXT_STAMP``: never at or below a stamp given before, deleted rows' included, so
never at or below a mark). The store moves the mark at the end of a pass (``next_mark``,
``move_mark``). A record whose stored JSON cannot be read is passed over by the caller
(``unreadable.read_past``), and holds the mark back like any record still without a vector.

``models`` lists what the table holds per model; ``drop`` deletes a model's rows and its mark
(and keeps their largest ``seq``).
"""

from __future__ import annotations

import math
import sqlite3
import sys
from array import array
from collections.abc import Sequence
from typing import Any

from afteraction.errors import ValidationError
from afteraction.store.base import StoredVector, VectorModelInfo

__all__ = [
    "NEXT_STAMP",
    "count_missing",
    "drop",
    "encode",
    "keep_seqs",
    "mark",
    "missing",
    "models",
    "move_mark",
    "next_mark",
    "put",
]

_LITTLE = sys.byteorder == "little"

#: The ``written`` stamp of a row being inserted or updated: one more than any given so far (m007, m010).
NEXT_STAMP = (
    "(SELECT max(coalesce(max(written), 0), coalesce((SELECT value FROM high_water WHERE name = 'written'), 0)) + 1 "
    "FROM experiences)"
)

_PUT = """
    INSERT INTO vectors (tenant, id, model, record, revision, dimension, vector, seq)
    SELECT e.tenant, e.id, ?, e.pk, e.revision, ?, ?, ?
    FROM experiences AS e WHERE e.tenant = ? AND e.id = ? AND e.revision = ?
    ON CONFLICT (tenant, id, model) DO UPDATE SET record = excluded.record, revision = excluded.revision,
        dimension = excluded.dimension, vector = excluded.vector, seq = excluded.seq
"""
#: Records stamped after the model's mark (m007) whose vector of the model is absent or stale.
_NEEDING = """
    FROM experiences AS e INDEXED BY experiences_written
    LEFT JOIN vectors AS v ON v.tenant = e.tenant AND v.id = e.id AND v.model = ?
    WHERE e.written > ? AND {tenant} (v.revision IS NULL OR v.revision != e.revision)
"""
_PAGE = "{tenant} (e.tenant, e.id) > (?, ?) AND"
_MISSING = f"SELECT e.tenant, e.id, e.data {_NEEDING.format(tenant=_PAGE)} ORDER BY e.tenant, e.id LIMIT ?"
_MODELS = """
    SELECT v.model, v.dimension, count(*), sum(e.revision IS v.revision)
    FROM vectors AS v LEFT JOIN experiences AS e ON e.pk = v.record
    {where} GROUP BY v.model, v.dimension ORDER BY v.model, v.dimension
"""
_MARK = "SELECT coalesce((SELECT written FROM vector_marks WHERE model = ?), -1)"
_TOP = """
    SELECT max(coalesce(max(seq), 0), coalesce((SELECT seq FROM vector_seqs WHERE tenant = ?1 AND model = ?2), 0)),
        (SELECT dimension FROM vectors WHERE tenant = ?1 AND model = ?2 LIMIT 1)
    FROM vectors WHERE tenant = ?1 AND model = ?2
"""
_KEEP_SEQ = """
    INSERT INTO vector_seqs (tenant, model, seq) VALUES (?, ?, ?)
    ON CONFLICT (tenant, model) DO UPDATE SET seq = max(seq, excluded.seq)
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
            top, stored = db.execute(_TOP, key).fetchone()
            groups[key] = (top + 1, stored or dimension)
        seq, expected = groups[key]
        if dimension != expected:
            raise ValidationError(
                f"vectors[{i}].vector", f"has {dimension} dimensions; {model!r} vectors here have {expected}"
            )
        batch.append((model, dimension, blob, seq, tenant, id, revision))
    return db.executemany(_PUT, batch).rowcount if batch else 0


def mark(db: sqlite3.Connection, model: str) -> int:
    """The stamp up to which every record had a current vector of ``model`` (-1: none known)."""
    return int(db.execute(_MARK, (model,)).fetchone()[0])


def missing(
    db: sqlite3.Connection, model: str, tenant: str | None, after: tuple[str, str] | None, limit: int
) -> list[tuple[str, str, str]]:
    """(tenant, id, stored JSON) of records with no current vector of ``model``, in (tenant, id)
    order. Only the records stamped after the model's mark are read."""
    if limit <= 0:
        return []
    start = after if after is not None else (tenant or "", "")
    where = "" if tenant is None else "e.tenant = ? AND"
    params = (model, mark(db, model), *([tenant] if tenant is not None else []), *start, limit)
    return db.execute(_MISSING.format(tenant=where), params).fetchall()


def count_missing(db: sqlite3.Connection, model: str, tenant: str | None) -> int:
    where = "" if tenant is None else "e.tenant = ? AND"
    sql = f"SELECT count(*) {_NEEDING.format(tenant=where)}"
    return int(db.execute(sql, (model, mark(db, model), *([tenant] if tenant is not None else []))).fetchone()[0])


def next_mark(db: sqlite3.Connection, model: str, *, nothing_left: bool = False) -> tuple[int, int]:
    """(the model's mark, how far it may move now): up to just below the earliest stamp of a
    record that still needs a vector, or to the latest stamp when none does. ``nothing_left``:
    the caller has just found, in this snapshot, that no record of any tenant needs one."""
    current = mark(db, model)
    if not nothing_left:
        first = db.execute(f"SELECT min(e.written) {_NEEDING.format(tenant='')}", (model, current)).fetchone()[0]
        if first is not None:
            return current, first - 1
    return current, int(db.execute("SELECT coalesce(max(written), 0) FROM experiences").fetchone()[0])


def move_mark(db: sqlite3.Connection, model: str, to: int) -> None:
    """Move the model's mark forward to ``to`` (never back), inside the caller's write transaction."""
    db.execute(
        "INSERT INTO vector_marks (model, written) VALUES (?, ?) "
        "ON CONFLICT (model) DO UPDATE SET written = max(written, excluded.written)",
        (model, to),
    )


def models(db: sqlite3.Connection, tenant: str | None) -> list[VectorModelInfo]:
    """Each (model, dimension) with vectors (of ``tenant`` if given): how many, how many current."""
    where, params = ("", ()) if tenant is None else ("WHERE v.tenant = ?", (tenant,))
    rows = db.execute(_MODELS.format(where=where), params)
    return [VectorModelInfo(model, dimension, count, int(current)) for model, dimension, count, current in rows]


def keep_seqs(db: sqlite3.Connection, tops: Sequence[tuple[str, str, int]]) -> None:
    """Record, before their rows are deleted, the largest ``seq`` of each (tenant, model, seq), so
    that ``put`` never gives a smaller one again (inside the caller's write transaction)."""
    db.executemany(_KEEP_SEQ, tops)


def drop(db: sqlite3.Connection, model: str, tenant: str | None) -> int:
    """Delete the vectors of ``model`` (of ``tenant`` if given) inside the caller's write
    transaction, and the model's mark: it stood for every tenant's records, so after a drop of
    one tenant's the next pass of ``missing`` reads every record once and sets it again. Their
    largest ``seq`` is kept: vectors stored again later reach an index another process loaded."""
    where, params = ("", ()) if tenant is None else (" AND tenant = ?", (tenant,))
    tops = db.execute(
        f"SELECT tenant, model, max(seq) FROM vectors WHERE model = ?{where} GROUP BY tenant", (model, *params)
    )
    keep_seqs(db, tops.fetchall())
    dropped = db.execute(f"DELETE FROM vectors WHERE model = ?{where}", (model, *params)).rowcount
    db.execute("DELETE FROM vector_marks WHERE model = ?", (model,))
    return int(dropped)
