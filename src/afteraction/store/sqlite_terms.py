"""Which query terms are rare enough to choose the rows a SQLite text search scores.

On a large table a query's commonest terms hold many rows each: scoring every row that holds any
term would cost more than the query is worth. ``split`` sorts the query's stems by how many rows
hold each and keeps the rarest while their postings fit a budget (a tenth of the table, within
``BUDGET``) or are fewer than ``PER_RESULT`` per result asked; ``SQLiteStore.search_text`` lets
those choose the rows and scores them on every term. Counting a stem's rows reads its whole
posting list, so ``TermCounts`` keeps the counts until the database changes: a commit of the
store's own connection (it calls ``clear``) or of another (``PRAGMA data_version``).
"""

from __future__ import annotations

import sqlite3

__all__ = ["BUDGET", "PER_RESULT", "TermCounts", "split"]

BUDGET = (1_000, 3_000)  # postings a search scores in full before it narrows to the rarest terms
PER_RESULT = 10
KEPT = 20_000  # term counts kept at most


class TermCounts:
    """Rows per stem, as of the database's current version (used under the store's lock)."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}
        self._version: int | None = None

    def clear(self) -> None:
        self._counts.clear()

    def postings(self, db: sqlite3.Connection, stems: list[str]) -> dict[str, int]:
        version = db.execute("PRAGMA data_version").fetchone()[0]
        if version != self._version or len(self._counts) > KEPT:
            self._counts.clear()
            self._version = version
        wanted = [stem for stem in stems if stem not in self._counts]
        if wanted:
            self._counts.update(dict.fromkeys(wanted, 0))
            marks = ", ".join("?" * len(wanted))
            sql = f"SELECT term, doc FROM experiences_fts_terms WHERE term IN ({marks})"
            for term, docs in db.execute(sql, wanted):
                self._counts[term] += docs
        return {stem: self._counts[stem] for stem in stems}


def split(db: sqlite3.Connection, counts: TermCounts, stems: list[str], limit: int) -> tuple[list[str], list[str]]:
    """(rare, common): the rarest stems, while their postings fit the budget or are fewer than
    ``PER_RESULT`` per result asked; and the rest (stems no row holds are left out)."""
    rows = db.execute("SELECT max(pk) FROM experiences").fetchone()[0] or 0
    budget = min(max(rows // 10, BUDGET[0]), BUDGET[1])
    if len(stems) == 1 or rows <= budget:
        return stems, []
    postings = counts.postings(db, stems)
    ordered = sorted((n, s) for s, n in postings.items() if n)
    rare: list[str] = []
    total = 0
    for n, s in ordered:
        if rare and total + n > budget and total >= PER_RESULT * limit:
            break
        rare.append(s)
        total += n
    return (rare or stems[:1]), [s for _, s in ordered[len(rare) :]]
