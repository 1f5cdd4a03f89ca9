"""The loop benchmark: latency and throughput of afteraction's own loop against store size.

For each size it opens a real SQLite file (a copy of a cached, generated store, in a temp
dir) with ``Memory.open`` and measures, through the public API:

- search p50 / p95: ``mem.search(query, scope=..., k=5)`` over the generated queries;
- block p50: ``mem.reference_block(query, scope=...)`` (search + rank + render);
- render p50: the pure ``render_block(hits)`` alone, on each query's hits;
- capture: ``rec.tool(...)`` in the caller's thread, one typical args dict and a 200-char result;
- stored/s (finish): whole runs through ``mem.run`` → ``tool`` → ``check`` → ``finish``;
- bulk stored/s: ``mem.add_many`` of ``make_experience`` records;
- peak RSS of the process so far.

The memory is opened with ``embedder=None``: this is the text channel and the write path
(vectors are written in the background, off the caller's thread). The vector channel, the
query embedding and the index are measured by ``bench_vectors.py`` and ``bench_embed.py``.

Every measurement runs ``--repeat`` passes (3 by default); the table quotes the median over
all samples (latencies) or over passes (throughputs). Run ``--help`` for the flags.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import multiprocessing
import os
import platform
import resource
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import corpus

import afteraction as aa
from afteraction.core.render import render_block

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE / ".data"
DEFAULT_SIZES = (1_000, 10_000, 100_000)

#: Targets (the issue's "Done means").
SEARCH_P50_MS = ((10_000, 5.0), (100_000, 20.0))
MIN_STORED_PER_S = 1_000.0
MAX_CAPTURE_US = 50.0

#: Cases for the write measurements come from indices far past any stored corpus.
_RUNS_START = 10_000_000
_BULK_START = 20_000_000
_CHUNK = 5_000

_CAPTURE_ARGS = {
    "order_id": "A-10442",
    "strategy": "wait-for-lock",
    "amount": 42.5,
    "currency": "EUR",
    "dry_run": False,
}
_CAPTURE_RESULT = (
    "Refund 10442 issued to the original payment method; ledger entry LE-99812 written, "
    "customer notified by email; lock released after 1.8 s; no further action needed on this ticket."
)[:200].ljust(200, ".")


@dataclass
class Result:
    lessons: int
    visible: int
    queries: int
    hit_rate: float
    search_p50_ms: float
    search_p95_ms: float
    search_pass_p50_ms: list[float]
    block_p50_ms: float
    render_p50_ms: float
    finish_per_s: float
    finish_pass_per_s: list[float]
    bulk_per_s: float
    bulk_pass_per_s: list[float]
    capture_p50_us: float
    capture_p95_us: float
    peak_rss_mb: float
    cache: str
    load_per_s: float | None = None
    errors: list[str] = field(default_factory=list)


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) by linear interpolation between closest ranks."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    pos = (len(ordered) - 1) * q
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def search_target(lessons: int) -> float | None:
    for limit, target in SEARCH_P50_MS:
        if lessons <= limit:
            return target
    return None


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- the cached store -------------------------------------------------------------------------


def fingerprint() -> str:
    """What this library writes for a few corpus lessons: the schema and the stored rows of a
    fresh store. A cached database is reused only while this stays the same."""
    digest = hashlib.sha256(f"{corpus.VERSION}:{aa.__version__}".encode())
    with tempfile.TemporaryDirectory(prefix="afteraction-bench-") as tmp:
        mem = aa.Memory.open(Path(tmp) / "probe.db", embedder=None)
        try:
            mem.add_many(corpus.experiences(0, 20))
        finally:
            mem.close()
        db = sqlite3.connect(Path(tmp) / "probe.db")
        try:
            for (sql,) in db.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name"):
                digest.update(sql.encode())
            for stored in db.execute("SELECT * FROM experiences ORDER BY 1"):
                digest.update(repr(stored).encode())
        finally:
            db.close()
    return digest.hexdigest()[:12]


def cache_path(data_dir: Path, lessons: int, key: str) -> Path:
    return data_dir / f"loop-c{corpus.VERSION}-n{lessons}-{key}.db"


def _chunks(lessons: int) -> Iterator[list[aa.Experience]]:
    """The corpus in chunks of Experiences. Big corpora are generated in a worker process,
    a chunk or two ahead, so generating overlaps storing."""
    starts = range(0, lessons, _CHUNK)
    if len(starts) <= 2:
        yield from (corpus.experiences(start, min(_CHUNK, lessons - start)) for start in starts)
        return
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        pending = deque(pool.submit(corpus.experiences, s, min(_CHUNK, lessons - s)) for s in starts[:2])
        for start in starts[2:]:
            done = pending.popleft().result()
            pending.append(pool.submit(corpus.experiences, start, min(_CHUNK, lessons - start)))
            yield done
        while pending:
            yield pending.popleft().result()


def build(path: Path, lessons: int) -> float:
    """Generate ``lessons`` cases and bulk-load them with ``add_many``; its rate (lessons/s).
    Stale caches of the same size are removed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    for stale in path.parent.glob(f"loop-c*-n{lessons}-*.db*"):
        stale.unlink()
    partial = path.with_name(path.name + ".partial")
    for leftover in (partial, Path(f"{partial}-wal"), Path(f"{partial}-shm")):
        leftover.unlink(missing_ok=True)
    chunks = _chunks(lessons)
    first = next(chunks, [])  # starts the worker before the database is open
    mem = aa.Memory.open(partial, embedder=None)
    spent = stored = 0
    try:
        for chunk in itertools.chain([first], chunks):
            start = time.perf_counter_ns()
            mem.add_many(chunk)
            spent += time.perf_counter_ns() - start
            stored += len(chunk)
    finally:
        mem.close()
    if stored != lessons:
        raise RuntimeError(f"generated {stored} of {lessons} lessons")
    os.replace(partial, path)
    return lessons / (spent / 1e9) if spent else float("nan")


# -- measurements -----------------------------------------------------------------------------


def _timed(fn: Callable[[], object]) -> int:
    start = time.perf_counter_ns()
    fn()
    return time.perf_counter_ns() - start


def measure_reads(
    mem: aa.Memory, queries: Sequence[str], repeat: int
) -> tuple[list[float], list[float], list[float], list[list[float]], float]:
    """Search, block and render timings (ms), per-pass search timings, and the hit rate."""
    scope = corpus.QUERY_SCOPE
    for query in queries[:20]:  # warm the page cache and the stemmer cache
        mem.search(query, scope=scope, k=5)
    search: list[float] = []
    block: list[float] = []
    passes: list[list[float]] = []
    for number in range(repeat):
        # Whole passes, not query by query: the second call of the same query would find its
        # pages hot. Which goes first alternates, so drift on a shared machine hits both alike.
        this_pass = [0.0] * len(queries)
        for kind in ("search", "block") if number % 2 == 0 else ("block", "search"):
            for i, query in enumerate(queries):
                if kind == "search":
                    this_pass[i] = _timed(lambda q=query: mem.search(q, scope=scope, k=5)) / 1e6
                else:
                    block.append(_timed(lambda q=query: mem.reference_block(q, scope=scope)) / 1e6)
        passes.append(this_pass)
        search.extend(this_pass)
    hits = [mem.search(query, scope=scope, k=mem.block_options.max_records) for query in queries]
    found = [h for h in hits if h]
    render = [_timed(lambda h=h: render_block(h, mem.block_options)) / 1e6 for _ in range(repeat) for h in found]
    return search, block, render, passes, len(found) / max(1, len(queries))


def measure_capture(mem: aa.Memory, runs: int, repeat: int) -> list[float]:
    """``rec.tool(...)`` as the agent's thread pays it (µs per call)."""
    per_run = min(20, mem.limits.max_calls)
    samples: list[float] = []
    clock = time.perf_counter_ns
    for _ in range(repeat):
        for _ in range(runs):
            rec = mem.run("Refund ticket 42 is stuck in pending", scope=corpus.QUERY_SCOPE)
            for _ in range(per_run):
                start = clock()
                rec.tool("run_refund_check", args=_CAPTURE_ARGS, result=_CAPTURE_RESULT)
                samples.append((clock() - start) / 1e3)
            rec.abandon()
    return samples


def measure_finish(mem: aa.Memory, runs: int, repeat: int) -> tuple[list[float], int]:
    """Whole runs recorded and finished per second, per pass; and how many stored nothing."""
    rates = []
    missing = 0
    for number in range(repeat):
        batch = list(corpus.cases(runs, start=_RUNS_START + number * runs))
        start = time.perf_counter_ns()
        stored = sum(1 for item in batch if corpus.record(mem, item) is not None)
        rates.append(runs / ((time.perf_counter_ns() - start) / 1e9))
        missing += runs - stored
    return rates, missing


def measure_bulk(mem: aa.Memory, batch: int, repeat: int) -> tuple[list[float], int]:
    """``add_many`` rate per pass (the Experiences are built before the clock starts)."""
    rates = []
    missing = 0
    for number in range(repeat):
        experiences = [corpus.experience(c) for c in corpus.cases(batch, start=_BULK_START + number * batch)]
        start = time.perf_counter_ns()
        added = mem.add_many(experiences)
        rates.append(batch / ((time.perf_counter_ns() - start) / 1e9))
        missing += batch - added
    return rates, missing


def measure(lessons: int, args: argparse.Namespace, data_dir: Path, key: str) -> Result:
    db = cache_path(data_dir, lessons, key)
    load_rate = None
    if args.rebuild or not db.exists():
        _progress(f"  generating and loading {lessons:,} lessons into {db} ...")
        started = time.perf_counter()
        load_rate = build(db, lessons)
        _progress(f"  loaded in {time.perf_counter() - started:.1f} s ({load_rate:,.0f} lessons/s in add_many)")
    errors: list[str] = []
    with tempfile.TemporaryDirectory(prefix="afteraction-bench-") as tmp:
        path = Path(tmp) / "memory.db"
        shutil.copyfile(db, path)
        if Path(f"{db}-wal").exists():  # a reader left a WAL behind: it belongs to the database
            shutil.copyfile(f"{db}-wal", f"{path}-wal")
        mem = aa.Memory.open(path, embedder=None, on_error=lambda exc, where: errors.append(f"{where}: {exc}"))
        try:
            visible = mem.store.count(corpus.QUERY_SCOPE)
            queries = corpus.queries(args.queries)
            _progress(f"  {lessons:,}: search and block over {len(queries)} queries x {args.repeat} ...")
            search, block, render, passes, hit_rate = measure_reads(mem, queries, args.repeat)
            _progress(
                f"  {lessons:,}: capture, {args.runs:,} finished runs and {args.batch:,} bulk x {args.repeat} ..."
            )
            capture = measure_capture(mem, args.capture_runs, args.repeat)
            finish, unfinished = measure_finish(mem, args.runs, args.repeat)
            bulk, not_added = measure_bulk(mem, args.batch, args.repeat)
        finally:
            mem.close()
    if unfinished:
        errors.append(f"{unfinished} finished runs stored nothing")
    if not_added:
        errors.append(f"{not_added} bulk records were not new")
    return Result(
        lessons=lessons,
        visible=visible,
        queries=len(queries),
        hit_rate=hit_rate,
        search_p50_ms=statistics.median(search),
        search_p95_ms=percentile(search, 0.95),
        search_pass_p50_ms=[statistics.median(p) for p in passes],
        block_p50_ms=statistics.median(block),
        render_p50_ms=statistics.median(render) if render else float("nan"),
        finish_per_s=statistics.median(finish),
        finish_pass_per_s=finish,
        bulk_per_s=statistics.median(bulk),
        bulk_pass_per_s=bulk,
        capture_p50_us=statistics.median(capture),
        capture_p95_us=percentile(capture, 0.95),
        peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        cache="built" if load_rate is not None else "reused",
        load_per_s=load_rate,
        errors=errors[:10],
    )


# -- report -----------------------------------------------------------------------------------


def facts() -> dict[str, Any]:
    return {
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "afteraction": aa.__version__,
        "platform": f"{platform.system()} {platform.machine()}",
        "corpus": corpus.VERSION,
    }


def _cell(value: float, fmt: str, missed: bool) -> str:
    return format(value, fmt) + ("!" if missed else "")


def table(results: Sequence[Result], command: str, args: argparse.Namespace) -> str:
    f = facts()
    lines = [
        f"afteraction loop benchmark · {f['cores']} cores · Python {f['python']} · SQLite {f['sqlite']} · "
        f"afteraction {f['afteraction']} · {f['platform']}",
        "targets: search p50 ≤ 5 ms up to 10k lessons and ≤ 20 ms at 100k · stored/s ≥ 1,000 · "
        "capture ≤ 50 µs/call   ('!' marks a miss)",
        f"reproduce: {command}",
        "",
    ]
    header = (
        "lessons",
        "search p50 ms",
        "search p95 ms",
        "block p50 ms",
        "render p50 ms",
        "stored/s (finish)",
        "bulk stored/s",
        "capture µs/call",
        "peak RSS MB",
    )
    rows = []
    for r in results:
        target = search_target(r.lessons)
        rows.append(
            (
                f"{r.lessons:,}",
                _cell(r.search_p50_ms, ".2f", target is not None and r.search_p50_ms > target),
                f"{r.search_p95_ms:.2f}",
                f"{r.block_p50_ms:.2f}",
                f"{r.render_p50_ms:.3f}",
                _cell(r.finish_per_s, ",.0f", r.finish_per_s < MIN_STORED_PER_S),
                _cell(r.bulk_per_s, ",.0f", r.bulk_per_s < MIN_STORED_PER_S),
                _cell(r.capture_p50_us, ".1f", r.capture_p50_us > MAX_CAPTURE_US),
                f"{r.peak_rss_mb:,.0f}",
            )
        )
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
    lines.append(" | ".join(h.rjust(w) for h, w in zip(header, widths, strict=True)))
    lines.append("-+-".join("-" * w for w in widths))
    lines.extend(" | ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) for row in rows)
    lines.append("")
    scope = corpus.QUERY_SCOPE
    lines.append(
        f"search: {args.queries} queries x {args.repeat} passes, k=5, as scope {scope.tenant}/{scope.app}/"
        f"{scope.project} agent={scope.agent}; block = reference_block (search + rank + render); "
        "render = render_block alone on the queries with hits."
    )
    lines.append(
        f"stored/s (finish): {args.runs:,} runs per pass through mem.run -> tool -> check -> finish (one "
        f"transaction each); bulk: add_many of {args.batch:,} make_experience records per pass; both into the "
        "loaded store, median of passes."
    )
    lines.append(
        f"capture: rec.tool(...) p50 over {args.capture_runs} runs x 20 calls x {args.repeat} passes "
        "(5-key args dict, 200-char result), in the calling thread; peak RSS is the process's so far."
    )
    for r in results:
        load = f"built, add_many {r.load_per_s:,.0f}/s" if r.load_per_s is not None else "reused from cache"
        lines.append(
            f"  {r.lessons:,}: scope sees {r.visible:,}; {r.hit_rate:.0%} of queries found a lesson; "
            f"search p50 per pass {', '.join(f'{v:.2f}' for v in r.search_pass_p50_ms)} ms; "
            f"finish/s per pass {', '.join(f'{v:,.0f}' for v in r.finish_pass_per_s)}; "
            f"capture p95 {r.capture_p95_us:.1f} µs; store {load}"
        )
        lines.extend(f"  {r.lessons:,}: ERROR {e}" for e in r.errors)
    return "\n".join(lines)


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--sizes takes comma-separated integers, got {text!r}") from None
    if not sizes or any(s < 1 for s in sizes):
        raise argparse.ArgumentTypeError("--sizes needs at least one positive size")
    return sizes


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", type=_sizes, default=list(DEFAULT_SIZES), help="stored lessons, comma separated")
    parser.add_argument("--queries", type=int, default=200, help="queries per pass (default 200)")
    parser.add_argument("--repeat", type=int, default=3, help="passes of every measurement (default 3, at least 2)")
    parser.add_argument("--runs", type=int, default=2_000, help="finished runs per pass (default 2000)")
    parser.add_argument("--batch", type=int, default=5_000, help="add_many records per pass (default 5000)")
    parser.add_argument("--capture-runs", type=int, default=250, help="runs of 20 tool calls per pass (default 250)")
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA, help="where generated stores are cached")
    parser.add_argument("--rebuild", action="store_true", help="regenerate the cached stores")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the table")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes and no cache: checks that it runs")
    args = parser.parse_args(argv)
    if args.smoke:
        args.sizes, args.queries, args.repeat, args.runs, args.batch, args.capture_runs = [200], 20, 2, 40, 200, 10
    if args.repeat < 2:
        parser.error("--repeat must be at least 2: every measurement runs at least twice")
    if min(args.queries, args.runs, args.batch, args.capture_runs) < 1:
        parser.error("--queries, --runs, --batch and --capture-runs must be positive")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    command = " ".join([".venv/bin/python", "benchmarks/bench_loop.py", *(sys.argv[1:] if argv is None else argv)])
    results = []
    with tempfile.TemporaryDirectory(prefix="afteraction-bench-data-") as scratch:
        data_dir = Path(scratch) if args.smoke else args.data_dir
        key = fingerprint()
        for lessons in args.sizes:
            _progress(f"bench_loop: {lessons:,} lessons")
            results.append(measure(lessons, args, data_dir, key))
    if args.json:
        print(json.dumps({"facts": facts(), "command": command, "results": [asdict(r) for r in results]}, indent=2))
    else:
        print(table(results, command, args))
    return 1 if any(r.errors for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
