"""A what-if of ``bench_pg_writes.py``: each stem's ``ts_rank`` computed by the writer, in Python.

The store's search scores a candidate by ``ts_rank(search, plainto_tsquery('simple', stem))``
for each query stem it holds (``postgres_search``), where ``search`` is the generated tsvector
``setweight(to_tsvector('simple', task_terms), 'A') || … 'B' || … 'C'``. For a query of one
lexeme that value depends on the record and the stem only (PostgreSQL's ``calc_rank_or``,
normalization 0, default weights D 0.1, C 0.2, B 0.4, A 1.0): with the stem's occurrences in
position order (the task's first, then the summary's, then the lesson's), weights ``w_1 … w_n``,

    rank = (w_m + sum(w_j / j²) - w_m / m²) / 1.64493406685,   m the first of the heaviest,

and since the weights fall field by field, ``m`` is 1: ``rank = sum(w_j / j²) / 1.64493406685``.
``to_tsvector`` keeps at most 255 positions of a lexeme per field, and the concatenation 256 in
all. PostgreSQL sums in single precision (``real``); Python in double.

``ranks`` is that, from the three stemmed fields the writer already makes (``row``);
``python benchmarks/pg_ranks.py`` times it over the corpus' lessons and checks it against
PostgreSQL's own ``ts_rank`` on a throwaway server.
"""

from __future__ import annotations

import argparse
import sys
import timeit
from pathlib import Path
from typing import Any

import corpus
import psycopg

from afteraction.store.postgres import row

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.pg import Cluster

_TERMS = slice(-3, None)  # task_terms, summary_terms, lesson_terms: the last three of ``row``
_WEIGHTS = (1.0, 0.4, 0.2)  # A (task), B (summary), C (lesson)
_POSITIONS = 256
#: ``_SHARES[j]``: what the ``j``-th occurrence adds per unit of weight; none past the cap.
_SHARES = (0.0, *(1.0 / (j * j) / 1.64493406685 for j in range(1, _POSITIONS + 1)))


def ranks(task_terms: str, summary_terms: str, lesson_terms: str) -> tuple[list[str], list[float]]:
    """The distinct stems of the three stemmed fields (space-separated stems, as ``row`` makes
    them) and, for each, ``ts_rank`` of the record's ``search`` tsvector against that stem
    alone: one pass over the occurrences in position order. (Not modelled: the cap of 255
    positions per field, which matters only for a stem repeated more than 255 times in one
    field and again in a later one.)"""
    seen: dict[str, int] = {}
    rank: dict[str, float] = {}
    for weight, field in zip(_WEIGHTS, (task_terms, summary_terms, lesson_terms), strict=True):
        for stem in field.split():
            n = seen.get(stem, 0) + 1
            seen[stem] = n
            rank[stem] = rank.get(stem, 0.0) + (weight * _SHARES[n] if n <= _POSITIONS else 0.0)
    return list(rank), list(rank.values())


def encoded(stems: list[str], values: list[float]) -> tuple[str, str]:
    """Stems and ranks as two texts for the server: the stems space-separated (a stem holds no
    space), the ranks as a ``real[]`` literal to single precision."""
    return " ".join(stems), "{" + ",".join([f"{value:.7g}" for value in values]) + "}"


def row_ranks(values: tuple[Any, ...]) -> tuple[list[str], list[float]]:
    """``ranks`` of one record's ``row`` values."""
    task_terms, summary_terms, lesson_terms = values[_TERMS]
    return ranks(task_terms, summary_terms, lesson_terms)


def check(rows: list[tuple[Any, ...]]) -> tuple[int, int, int, float]:
    """Against PostgreSQL's ``ts_rank`` on a throwaway server: (records, stems compared, stems
    whose set differs from the tsvector's lexemes, the largest relative difference of a rank)."""
    cluster = Cluster()
    try:
        cluster.database("ranks", vector=False)
        url = cluster.url("ranks", "postgres")
        with psycopg.connect(url, autocommit=True) as db:
            db.execute(
                "CREATE TABLE t (n integer PRIMARY KEY, a text, b text, c text, search tsvector GENERATED ALWAYS AS ("
                "setweight(to_tsvector('simple'::regconfig, a), 'A') || setweight(to_tsvector('simple'::regconfig, b),"
                " 'B') || setweight(to_tsvector('simple'::regconfig, c), 'C')) STORED)"
            )
            with db.cursor() as cur, cur.copy("COPY t (n, a, b, c) FROM STDIN") as copy:
                for n, values in enumerate(rows):
                    copy.write_row((n, *values[_TERMS]))
            found = db.execute(
                "SELECT n, term, ts_rank(search, plainto_tsquery('simple', term))::float8 "
                "FROM t, unnest(tsvector_to_array(search)) AS term ORDER BY n"
            ).fetchall()
    finally:
        cluster.stop()
    theirs: dict[int, dict[str, float]] = {}
    for n, term, rank in found:
        theirs.setdefault(n, {})[term] = rank
    compared, differ, worst = 0, 0, 0.0
    for n, values in enumerate(rows):
        ours = dict(zip(*row_ranks(values), strict=True))
        pg = theirs.get(n, {})
        differ += len(set(ours) ^ set(pg))
        for stem in set(ours) & set(pg):
            compared += 1
            worst = max(worst, abs(ours[stem] - pg[stem]) / pg[stem])
    return len(rows), compared, differ, worst


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lessons", type=int, default=2_000, help="corpus lessons timed (default 2000)")
    parser.add_argument("--check", type=int, default=500, help="of which checked against PostgreSQL (default 500)")
    args = parser.parse_args(argv)
    lessons = corpus.experiences(0, args.lessons)
    rows = [row(e) for e in lessons]
    stems = sum(len(row_ranks(r)[0]) for r in rows) / len(rows)
    runs = timeit.repeat(lambda: [row_ranks(r) for r in rows], number=1, repeat=5)
    each = min(runs) / len(rows) * 1e6
    encoding = min(timeit.repeat(lambda: [encoded(*row_ranks(r)) for r in rows], number=1, repeat=5))
    making = min(timeit.repeat(lambda: [row(e) for e in lessons], number=1, repeat=3)) / len(rows) * 1e6
    print(f"{len(rows):,} lessons, {stems:.1f} distinct stems each")
    print(
        f"ranks per lesson in Python: {each:.1f} µs, with their encoding for the server "
        f"{encoding / len(rows) * 1e6:.1f} µs (best of 5; row() itself: {making:.0f} µs)"
    )
    records, compared, differ, worst = check(rows[: args.check])
    print(
        f"against PostgreSQL's ts_rank on {records} lessons: {compared:,} stems compared, {differ} stems not in both, "
        f"largest relative difference {worst:.1e}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
