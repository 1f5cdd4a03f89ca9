"""Whether a saved ANN index, just loaded, holds the vectors the SQLite store holds.

A file that passed its manifest's checks (``IndexFiles.load``) may still be of another database:
a copy, or one restored from a backup that then took new writes, reusing the same ``seq`` and
``pk`` values for other records. Before it serves, a sample of the stored rows at or below its
watermark is compared with what it holds; the caller then catches it up and compares the counts
(``sqlite_vectors``).
"""

from __future__ import annotations

import json
import sqlite3

from afteraction.store.vector_index import AnnIndex, load_numpy
from afteraction.store.vector_scoring import AMONG, matrix

__all__ = ["SAMPLE", "differs", "sample"]

SAMPLE = 16


def differs(db: sqlite3.Connection, ann: AnnIndex, tenant: str, model: str, watermark: int) -> str:
    """Why ``ann`` (tenant's vectors of ``model`` up to ``watermark``) does not hold the stored vectors, or ''."""
    np = load_numpy()
    rows = sample(db, tenant, model, watermark)
    if not rows:
        return ""
    keys = [pk for pk, _ in rows]
    held = ann.vectors(keys)
    present = np.asarray(ann.index.contains(np.asarray(keys, dtype=np.uint64)), dtype=bool)
    stored = matrix(np, [blob for _, blob in rows], ann.dimension)
    for key, there, mine, theirs in zip(keys, present.reshape(-1), held, stored, strict=True):
        if not there or not np.allclose(mine, theirs, atol=2e-3):
            return f"its vector of record pk {key} differs from the database's"
    return ""


def sample(db: sqlite3.Connection, tenant: str, model: str, watermark: int) -> list[tuple[int, bytes]]:
    """Up to ``SAMPLE`` stored (pk, vector) rows the index must hold: the first in key order
    and some spread over the records' pks (seeks only: no scan of the table)."""
    low, high = db.execute("SELECT min(pk), max(pk) FROM experiences").fetchone()
    spread = sorted({low + (high - low) * i // 255 for i in range(256)}) if low is not None else []
    sql = (
        "SELECT e.pk, v.vector FROM experiences AS e JOIN vectors AS v ON v.tenant = e.tenant AND v.id = e.id "
        "AND v.model = ? WHERE e.tenant = ? AND v.seq <= ? AND {where} LIMIT ?"
    )
    params = (model, tenant, watermark)
    rows = db.execute(sql.format(where=AMONG), (*params, json.dumps(spread), SAMPLE)).fetchall()
    first = db.execute(sql.format(where="1"), (*params, SAMPLE // 2)).fetchall()
    # the newest the index says it holds: after a restored database took new writes, these seqs and pks are
    # reused by other records, which only these rows show
    newest = db.execute(
        sql.format(where="1").replace("LIMIT ?", "ORDER BY v.seq DESC LIMIT ?"), (*params, SAMPLE // 2)
    ).fetchall()
    return list(dict(rows + first + newest).items())
