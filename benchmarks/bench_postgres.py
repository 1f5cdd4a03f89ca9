"""The PostgreSQL store beside the SQLite one, on the same generated lessons and queries.

For one size (10k lessons by default) it loads the lessons into an SQLite file and into a
PostgreSQL database (a throwaway server started like the tests start theirs, or ``--url``), then
measures through ``Memory.search`` (k=5): search p50 / p95 on each, PostgreSQL's again with
row-level security not forced on the table owner (the cost of RLS), and lessons stored per
second by 16 concurrent writers (one store each, as 16 hosts; stemming included).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import corpus
import psycopg

import afteraction as aa
from afteraction.store import SQLiteStore, Store
from afteraction.store.postgres import PostgresStore
from afteraction.store.postgres_schema import TABLE

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.pg import Cluster

WRITERS = 16
_CHUNK = 1_000


@contextmanager
def database(url: str | None) -> Iterator[str]:
    if url is not None:
        yield url
        return
    cluster = Cluster()
    try:
        yield cluster.database()
    finally:
        cluster.stop()


def load(store: Store, lessons: list[aa.Experience]) -> None:
    for start in range(0, len(lessons), _CHUNK):
        store.put_many(lessons[start : start + _CHUNK])


def searches(store: Store, queries: list[str]) -> tuple[float, float]:
    """(p50, p95) in ms of ``Memory.search`` over the queries, after a warm-up pass."""
    mem = aa.Memory(store)
    for query in queries[:20]:
        mem.search(query, scope=corpus.QUERY_SCOPE, k=5)
    times = []
    for query in queries:
        started = time.perf_counter()
        mem.search(query, scope=corpus.QUERY_SCOPE, k=5)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[min(len(times) - 1, int(len(times) * 0.95))]


def concurrent_writes(open_store: Callable[[], Store], lessons: list[aa.Experience]) -> float:
    """Lessons stored per second by WRITERS threads, each with its own store, one put per lesson."""
    stores = [open_store() for _ in range(WRITERS)]
    shares = [lessons[n::WRITERS] for n in range(WRITERS)]

    def write(store: Store, share: list[aa.Experience]) -> None:
        for experience in share:
            store.put(experience)

    threads = [threading.Thread(target=write, args=(s, share)) for s, share in zip(stores, shares, strict=True)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    stored = sum(1 for _ in stores[0].iter_all())
    for store in stores:
        store.close()
    if stored != len(lessons):
        raise SystemExit(f"concurrent writers stored {stored} lessons, not {len(lessons)}")
    return len(lessons) / elapsed


def measure(size: int, n_queries: int, url: str | None) -> dict[str, Any]:
    lessons = corpus.experiences(0, size)
    queries = corpus.queries(n_queries)
    writes = corpus.experiences(50_000_000, max(WRITERS * 10, size // 5))
    result: dict[str, Any] = {"size": size, "queries": n_queries}
    with tempfile.TemporaryDirectory() as tmp:
        sqlite = SQLiteStore(Path(tmp) / "bench.db")
        load(sqlite, lessons)
        result["sqlite_search_ms"] = searches(sqlite, queries)
        sqlite.close()
        result["sqlite_writes_per_s"] = concurrent_writes(lambda: SQLiteStore(Path(tmp) / "writes.db"), writes)
    with database(url) as pg_url:
        store = PostgresStore(pg_url)
        load(store, lessons)
        with psycopg.connect(pg_url, autocommit=True) as db:
            db.execute(f"ANALYZE {TABLE}")
        result["postgres_search_ms"] = searches(store, queries)
        with psycopg.connect(pg_url, autocommit=True) as db:  # the owner now bypasses the policies
            db.execute(f"ALTER TABLE {TABLE} NO FORCE ROW LEVEL SECURITY")
        result["postgres_no_rls_search_ms"] = searches(store, queries)
        with psycopg.connect(pg_url, autocommit=True) as db:
            db.execute(f"ALTER TABLE {TABLE} FORCE ROW LEVEL SECURITY")
            db.execute(f"TRUNCATE {TABLE}")
        store.close()
        result["postgres_writes_per_s"] = concurrent_writes(lambda: PostgresStore(pg_url, max_size=2), writes)
    return result


def table(r: dict[str, Any]) -> str:
    rows = [
        ("sqlite", r["sqlite_search_ms"], r["sqlite_writes_per_s"]),
        ("postgres", r["postgres_search_ms"], r["postgres_writes_per_s"]),
        ("postgres, RLS not forced", r["postgres_no_rls_search_ms"], None),
    ]
    lines = [
        f"{r['size']:,} lessons, {r['queries']} queries; writes: {WRITERS} concurrent writers",
        "| store | search p50 | search p95 | stored/s |",
        "|---|---|---|---|",
    ]
    for name, (p50, p95), writes in rows:
        lines.append(f"| {name} | {p50:.1f} ms | {p95:.1f} ms | {'' if writes is None else f'{writes:,.0f}'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000, help="lessons stored (default 10000)")
    parser.add_argument("--queries", type=int, default=200, help="queries timed (default 200)")
    parser.add_argument("--url", help="an existing PostgreSQL database to use (its afteraction table is truncated)")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: checks that it still runs")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the table")
    args = parser.parse_args(argv)
    if args.size <= 0 or args.queries <= 0:
        parser.error("--size and --queries must be positive")
    size, n_queries = (300, 20) if args.smoke else (args.size, args.queries)
    result = measure(size, n_queries, args.url)
    print(json.dumps(result, indent=2) if args.json else table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
