"""Which query terms are rare enough to choose the rows a SQLite text search scores.

On a large table a query's commonest terms hold many rows each: scoring every row that holds any
term would cost more than the query is worth. ``split`` sorts the query's stems by how many rows
hold each and keeps the rarest while their postings fit a budget (a tenth of the table, within
``BUDGET``) or are fewer than ``PER_RESULT`` per result asked; ``SQLiteStore.search_text`` lets
those choose the rows and scores them on every term. Counting a stem's rows reads its whole
posting list, so ``TermCounts`` (one per connection that reads) keeps the counts until the
database changes: a commit of another connection (``PRAGMA data_version`` of the reading one), the
store's writer included, or of the reading connection itself when it is also the writer
(``:memory:``; the writer calls ``clear``: data_version misses a connection's own commits).
"""

from __future__ import annotations

import sqlite3

__all__ = ["BUDGET", "CAPPED", "HEAVY", "PER_RESULT", "TermCounts", "heavy", "many", "split"]

BUDGET = (1_000, 3_000)  # postings a search scores in full before it narrows to the rarest terms
PER_RESULT = 10
KEPT = 20_000  # term counts kept at most
#: Postings of all the query's terms past which a search scores on the rare terms alone: FTS5's
#: bm25 counts every row of every term in the query for its document frequency (a callback per
#: row), and the exact search looks every row holding a rare term up in the table; at 1M lessons
#: the two cost 100-300 ms a search (see ``heavy``).
HEAVY = 50_000
#: Rows past which a search first takes the best this many of the index by BM25 alone, and looks
#: only those up in the table (``SQLiteStore._best``): at 1M lessons a query's rarest term holds
#: 20-40k rows, and looking each one up for its scope cost 100-300 ms.
CAPPED = 2_000


class TermCounts:
    """Rows per stem, as of the database's current version, of one connection (used by one read at a time)."""

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


def heavy(db: sqlite3.Connection, counts: TermCounts, stems: list[str]) -> bool:
    """Whether the query's terms hold too many rows to score on all of them: then the rare terms
    alone choose and order the rows (the common terms still count in the ranking's coverage, which
    reads the stems each row holds), since a common term's share of BM25 is small and counting its
    rows for that share is most of the search."""
    return sum(counts.postings(db, stems).values()) > HEAVY


def many(db: sqlite3.Connection, counts: TermCounts, stems: list[str]) -> bool:
    """Whether ``stems`` hold more than ``CAPPED`` rows (the table's size answers first, by its
    largest key, so a small table never counts postings)."""
    rows = db.execute("SELECT max(pk) FROM experiences").fetchone()[0] or 0
    return rows > CAPPED and sum(counts.postings(db, stems).values()) > CAPPED
