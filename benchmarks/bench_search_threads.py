"""Concurrent searches on one memory: throughput, latency, and how often the vector channel ran.

``--threads`` threads call ``Memory.search`` at once, for ``--seconds`` each round, over an SQLite
store of ``--lessons`` generated lessons (``corpus.py``) with vectors of the default embedder
(built once and cached in ``--data-dir``, the embedding included). Every query is distinct (a case
number appended), so the embedder's query cache never answers. Each row: the query threads of the
vector channel (``--pools``, the pool grown in that order), the searching threads, searches per
second, p50/p95 latency, the share of searches whose vector channel ran (``ok``) and the other
reasons. The load average is printed beside each row: the machine may be shared.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import corpus

import afteraction as aa
from afteraction import query_pool
from afteraction.vector_channel import DEFAULT_BUDGET, embed_extra_installed

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE / ".data"


@dataclass
class Row:
    pool: int
    threads: int
    searches: int
    per_s: float
    p50_ms: float
    p95_ms: float
    ok: float
    reasons: dict[str, int]
    load: float


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def set_pool_size(size: int) -> None:
    """The vector channel's query threads from now on (the pool only grows: raise it in order)."""
    query_pool.POOL.size = size


def build(path: Path, lessons: int) -> None:
    """A store of ``lessons`` corpus lessons, each with its vector (reused when present)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with aa.Memory.open(path) as mem:
        for start in range(0, lessons, 500):  # a lesson stored already is kept, not embedded again
            mem.add_many(corpus.experiences(start, min(500, lessons - start)))
        if not mem.wait_indexed(3_600):
            raise RuntimeError("the lessons could not all be embedded")
    _progress(f"store ready: {lessons} lessons in {time.perf_counter() - started:.1f} s")


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def measure(mem: aa.Memory, queries: list[str], threads: int, seconds: float, pool: int) -> Row:
    """``threads`` threads searching for ``seconds``; every query distinct."""
    taken = iter(range(10**9))
    lock = threading.Lock()
    spent: list[float] = []
    reasons: collections.Counter[str] = collections.Counter()
    barrier = threading.Barrier(threads + 1)
    stop = 0.0

    def work() -> None:
        barrier.wait()
        mine_spent, mine_reasons = [], collections.Counter[str]()
        while time.perf_counter() < stop:
            with lock:
                n = next(taken)
            query = f"{queries[n % len(queries)]} (case {n})"
            start = time.perf_counter()
            mem.search(query, scope=corpus.QUERY_SCOPE)
            mine_spent.append(time.perf_counter() - start)
            mine_reasons[mem.channel_status.reason] += 1
        with lock:
            spent.extend(mine_spent)
            reasons.update(mine_reasons)

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for worker in workers:
        worker.start()
    begun = time.perf_counter()
    stop = begun + seconds
    barrier.wait()
    for worker in workers:
        worker.join()
    wall = time.perf_counter() - begun
    done = len(spent)
    return Row(
        pool=pool,
        threads=threads,
        searches=done,
        per_s=done / wall,
        p50_ms=percentile(spent, 0.5) * 1000,
        p95_ms=percentile(spent, 0.95) * 1000,
        ok=reasons["ok"] / done if done else 0.0,
        reasons={reason: count for reason, count in reasons.items() if reason != "ok"},
        load=os.getloadavg()[0],
    )


def table(rows: Sequence[Row], args: argparse.Namespace) -> str:
    lines = [
        f"# {args.lessons} lessons, default embedder, budget {DEFAULT_BUDGET:g} s, {args.seconds:g} s a row; "
        f"{os.cpu_count()} cores, Python {platform.python_version()}",
        "query threads | searching threads | searches/s | p50 ms | p95 ms | vector ran | other reasons | load",
        "---|---|---|---|---|---|---|---",
    ]
    for r in rows:
        other = ", ".join(f"{reason} {count}" for reason, count in sorted(r.reasons.items())) or "-"
        lines.append(
            f"{r.pool} | {r.threads} | {r.per_s:.1f} | {r.p50_ms:.1f} | {r.p95_ms:.1f} | {r.ok:.0%} | {other} | "
            f"{r.load:.2f}"
        )
    return "\n".join(lines)


def _ints(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes comma-separated integers, got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("needs at least one positive integer")
    return values


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--lessons", type=int, default=3_000, help="stored lessons (default 3000)")
    parser.add_argument("--threads", type=_ints, default=[1, 10, 50], help="searching threads per row (1,10,50)")
    parser.add_argument("--pools", type=_ints, default=[2, 4, 8], help="query threads, ascending (2,4,8)")
    parser.add_argument("--seconds", type=float, default=8.0, help="seconds of searching per row (8)")
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA, help="where the store is cached")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the table")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes and no cache: checks that it runs")
    args = parser.parse_args(argv)
    if args.pools != sorted(args.pools):
        parser.error("--pools must be ascending: the pool only grows")
    if args.smoke:
        args.lessons, args.threads, args.pools, args.seconds = 60, [1, 4], [2], 0.5
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    if not embed_extra_installed():
        print("the embed extra is not installed: nothing to measure", file=sys.stderr)
        return 1
    tmp = tempfile.mkdtemp(prefix="afteraction-bench-") if args.smoke else None
    data_dir = Path(tmp) if tmp else args.data_dir
    path = data_dir / f"threads-c{corpus.VERSION}-n{args.lessons}.db"
    rows: list[Row] = []
    try:
        build(path, args.lessons)
        queries = corpus.queries(500)
        with aa.Memory.open(path) as mem:
            for query in queries[:20]:  # warm the model, the page cache and the stemmer
                mem.search(query, scope=corpus.QUERY_SCOPE)
            for pool in args.pools:
                set_pool_size(pool)
                for threads in args.threads:
                    rows.append(measure(mem, queries, threads, args.seconds, pool))
                    _progress(table(rows[-1:], args).splitlines()[-1])
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    if any(row.searches == 0 for row in rows):
        print("a row made no search", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"cores": os.cpu_count(), "rows": [asdict(row) for row in rows]}, indent=2))
    else:
        print(table(rows, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
