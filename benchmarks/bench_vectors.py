"""The vector channel of the SQLite store against size: exact numpy search beside the usearch
ANN index, on MiniLM vectors of the benchmark corpus.

For each size it builds (or reuses from ``--data-dir``) an SQLite file of ``corpus`` lessons with
one vector each, then measures through the store's API:

- exact: ``search_vector`` with the ANN index switched off (``IndexPolicy(ann_from=∞)``), p50/p95;
- ANN: the index built by ``build_vector_index(rebuild=True)`` (build time), then the store
  reopened so that it loads the index from its file (load time), p50/p95, and recall@10: the
  share of the exact top 10 that the ANN search returns;
- "+ embed": the same search with the query's embedding (default embedder) inside the timing;
- RSS: a fresh process that loads the default embedder, opens the store as an application would
  (default policy) and runs 20 searches: its resident and peak memory;
- reindex lessons/s: ``afteraction.reindex.reindex`` of ``--reindex`` lessons with the default
  embedder (embedding included), once.

Vectors: the first ``--real`` lessons are embedded for real (cached in ``--data-dir``); a lesson
past those gets a deterministic blend of two real vectors plus a little noise (embedding 100k
lessons at the rates of a shared 2-core machine takes hours). So the latency and recall numbers
are over realistic-looking but generated vectors past ``--real``; the ranking is not a quality
measure (that is ``bench_quality.py``). Run ``--help`` for the flags.

The 1M point: ``--sizes 1000000 --hybrid-only --in-place`` builds the store once into the cache
(generated lessons and vectors, about 9 GB), measures it where it lies instead of copying it,
builds and saves its ANN index once, and times hybrid search alone (the query still embedded
each time): the exact scan, the recall pass and the RSS probe are what make a 1M run take hours.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import corpus
import numpy as np

import afteraction as aa
from afteraction.core.text import embedding_text
from afteraction.embed import Checked, default_embedder
from afteraction.embed.minilm import MODEL_ID, MODEL_IDS
from afteraction.reindex import reindex
from afteraction.store import SQLiteStore
from afteraction.store.base import StoredVector
from afteraction.store.sqlite_vectors import IndexPolicy

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE / ".data"
NEVER = IndexPolicy(ann_from=10**12)
ALWAYS = IndexPolicy(ann_from=0, background_from=10**12)
CHUNK = 5_000
MODEL = MODEL_ID  # the smoke run's stand-in embedder has its own
#: In the cached stores' names: "" for MiniLM alone (the stores cached before the adapter keep their
#: names), "-<model id>" for any other model, the default (MiniLM through its adapter) included: a store
#: holds the vectors of one model id, and searching it with another would find none.
STORE_TAG = ""


class Hashed:
    """The smoke run's stand-in for MiniLM (loading and running it is most of a smoke run's time
    on a busy machine): word hashes into 64 dimensions. Not a quality embedder."""

    model_id = "smoke-hashed@1"
    dimension = 64

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out = []
        for text in texts:
            row = [0.01] * self.dimension
            for word in text.lower().split():
                row[sum(map(ord, word)) % self.dimension] += 1.0
            out.append(row)
        return out


NOW = datetime.now(timezone.utc)  # what Memory.search passes: the clock


@dataclass
class Result:
    lessons: int
    exact_p50_ms: float
    exact_p95_ms: float
    exact_embed_p50_ms: float
    ann_p50_ms: float
    ann_p95_ms: float
    ann_embed_p50_ms: float
    recall_at_10: float
    build_s: float
    load_s: float
    exact_load_s: float
    rss_mb: float
    peak_rss_mb: float
    hybrid_p50_ms: float
    hybrid_p95_ms: float
    served_by: str


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


# -- vectors ----------------------------------------------------------------------------------


def real_vectors(data_dir: Path | None, n: int, embedder: Checked) -> np.ndarray:
    """MiniLM vectors of the first ``n`` corpus lessons, cached under ``data_dir``."""
    cache = None if data_dir is None else data_dir / f"vectors-c{corpus.VERSION}-{embedder.model_id}-n{n}.npy"
    if cache is not None and cache.exists():
        return np.load(cache)  # type: ignore[no-any-return]
    texts = [embedding_text(e) for e in corpus.experiences(0, n)]
    rows = np.zeros((n, embedder.dimension), dtype=np.float32)
    for start in range(0, n, 64):
        rows[start : start + 64] = np.asarray(embedder.embed(texts[start : start + 64]), dtype=np.float32)
        _progress(f"  embedded {min(start + 64, n)}/{n} real lessons")
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.save(cache, rows)
    return rows


def vectors_for(start: int, n: int, real: np.ndarray) -> np.ndarray:
    """Vectors of lessons ``start`` .. ``start + n``: real ones first, then deterministic blends."""
    out = np.zeros((n, real.shape[1]), dtype=np.float32)
    own = max(0, min(n, len(real) - start))
    out[:own] = real[start : start + own]
    if own < n:
        rng = np.random.default_rng(start)
        count = n - own
        a = real[rng.integers(0, len(real), count)]
        b = real[rng.integers(0, len(real), count)]
        mixed = a + 0.5 * b + rng.normal(0.0, 0.02, (count, real.shape[1])).astype(np.float32)
        out[own:] = mixed / np.linalg.norm(mixed, axis=1, keepdims=True)
    return out


def build(path: Path, lessons: int, real: np.ndarray) -> None:
    partial = path.with_name(path.name + ".partial")
    for leftover in (partial, Path(f"{partial}-wal"), Path(f"{partial}-shm")):
        leftover.unlink(missing_ok=True)
    store = SQLiteStore(partial, vector_index=NEVER)
    try:
        for start in range(0, lessons, CHUNK):
            batch = corpus.experiences(start, min(CHUNK, lessons - start))
            store.put_many(batch)
            rows = vectors_for(start, len(batch), real)
            stored = store.put_vectors(
                [
                    StoredVector(e.scope.tenant, e.id, e.revision, MODEL, row)
                    for e, row in zip(batch, rows.tolist(), strict=True)
                ]
            )
            if stored != len(batch):
                raise RuntimeError(f"stored {stored} vectors of {len(batch)}")
            _progress(f"  stored {start + len(batch)}/{lessons} lessons with vectors")
    finally:
        store.close()
    os.replace(partial, path)


# -- measurements -----------------------------------------------------------------------------


def _searches(store: SQLiteStore, queries: np.ndarray, limit: int, repeat: int) -> tuple[list[float], list[list[str]]]:
    scope = corpus.QUERY_SCOPE
    now = NOW
    found = [
        [c.experience.id for c in store.search_vector(scope, MODEL, q.tolist(), now=now, limit=limit)] for q in queries
    ]
    times = []
    for _ in range(repeat):
        for q in queries:
            vector = q.tolist()
            start = time.perf_counter_ns()
            store.search_vector(scope, MODEL, vector, now=now, limit=limit)
            times.append((time.perf_counter_ns() - start) / 1e6)
    return times, found


def _with_embedding(
    store: SQLiteStore, embed: Callable[[list[str]], list[list[float]]], texts: Sequence[str], limit: int
) -> list[float]:
    times = []
    for text in texts:
        start = time.perf_counter_ns()
        vector = embed([text])[0]
        store.search_vector(corpus.QUERY_SCOPE, MODEL, vector, now=NOW, limit=limit)
        times.append((time.perf_counter_ns() - start) / 1e6)
    return times


_RSS_PROBE = """
import json, sys
from datetime import datetime, timezone
from afteraction.embed import Checked, default_embedder
from afteraction.store import SQLiteStore
import corpus
embedder = default_embedder()
store = SQLiteStore(sys.argv[1])
now = datetime.now(timezone.utc)
for text in corpus.queries(20):
    store.search_vector(corpus.QUERY_SCOPE, embedder.model_id, embedder.embed([text])[0], now=now, limit=20)
kind = store.vectors.entries[(corpus.QUERY_SCOPE.tenant, embedder.model_id)].index.kind
status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
mb = {key: int(status[key].split()[0]) / 1024 for key in ("VmRSS", "VmHWM")}
print(json.dumps({"rss": mb["VmRSS"], "peak": mb["VmHWM"], "kind": kind}))
store.close()
"""


def stored(lessons: int, data_dir: Path | None, real: np.ndarray, tmp: str, *, in_place: bool = False) -> Path:
    """The store of ``lessons`` to measure: a copy of the cached file (built when missing), the
    cached file itself with ``in_place`` (copying a 1M-lesson file takes minutes), or, with no
    cache, one built in ``tmp``."""
    if data_dir is None:
        path = Path(tmp) / "vectors.db"
        build(path, lessons, real)
        return path
    cached = data_dir / f"vectors-c{corpus.VERSION}{STORE_TAG}-n{lessons}-r{len(real)}.db"
    if not cached.exists():
        _progress(f"building the {lessons}-lesson store (cached as {cached.name})")
        build(cached, lessons, real)
    if in_place:
        return cached
    path = Path(tmp) / "vectors.db"
    shutil.copyfile(cached, path)
    return path


def measure_hybrid(lessons: int, args: argparse.Namespace, real: np.ndarray, embedder: Checked) -> dict[str, Any]:
    """``--hybrid-only``: the ANN index made ready (built and saved when missing), then hybrid search alone."""
    with tempfile.TemporaryDirectory(prefix="afteraction-vectors-") as tmp:
        path = stored(lessons, args.data_dir, real, tmp, in_place=args.in_place)
        store = SQLiteStore(path, vector_index=ALWAYS)
        start = time.perf_counter()
        states = store.build_vector_index(MODEL)
        ready_s = time.perf_counter() - start
        store.close()
        times = _hybrid(path, embedder, corpus.queries(args.queries))
    built = any(state.built for state in states)
    return {
        "lessons": lessons,
        "hybrid_p50_ms": statistics.median(times),
        "hybrid_p95_ms": percentile(times, 0.95),
        "index_s": ready_s,
        "index": "built" if built else "loaded",
        "searches": len(times),
    }


def hybrid_table(rows: Sequence[dict[str, Any]]) -> str:
    head = f"{'lessons':>8} | {'hybrid p50':>10} | {'p95':>7} | {'searches':>8} | index ready s"
    lines = [f"hybrid Memory.search (SQLite, {MODEL}), the query embedded each time; ms", head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r['lessons']:>8} | {r['hybrid_p50_ms']:>10.2f} | {r['hybrid_p95_ms']:>7.2f} | {r['searches']:>8} | "
            f"{r['index_s']:.1f} ({r['index']})"
        )
    f = facts()
    lines.append(f"machine: {f['cores']} cores, load average {f['load']:.1f}, Python {f['python']}")
    return "\n".join(lines)


def measure(
    lessons: int,
    args: argparse.Namespace,
    data_dir: Path | None,
    real: np.ndarray,
    queries: Sequence[str],
    query_vectors: np.ndarray,
    embed: Callable[[list[str]], list[list[float]]],
    embedder: Checked,
) -> Result:
    with tempfile.TemporaryDirectory(prefix="afteraction-vectors-") as tmp:
        path = stored(lessons, data_dir, real, tmp, in_place=args.in_place)
        exact = SQLiteStore(path, vector_index=NEVER)
        start = time.perf_counter()
        exact.search_vector(corpus.QUERY_SCOPE, MODEL, query_vectors[0].tolist(), now=NOW, limit=args.limit)
        exact_load = time.perf_counter() - start
        exact_times, exact_found = _searches(exact, query_vectors, args.limit, args.repeat)
        exact_embed = _with_embedding(exact, embed, queries, args.limit)
        exact.close()

        builder = SQLiteStore(path, vector_index=ALWAYS)
        start = time.perf_counter()
        builder.build_vector_index(MODEL, rebuild=True)
        build_s = time.perf_counter() - start
        builder.close()
        ann = SQLiteStore(path, vector_index=ALWAYS)
        start = time.perf_counter()
        ann.search_vector(corpus.QUERY_SCOPE, MODEL, query_vectors[0].tolist(), now=NOW, limit=args.limit)
        load_s = time.perf_counter() - start
        ann_times, ann_found = _searches(ann, query_vectors, args.limit, args.repeat)
        ann_embed = _with_embedding(ann, embed, queries, args.limit)
        ann.close()
        hybrid = _hybrid(path, embedder, queries)
        recalls = [
            len(set(a[:10]) & set(e[:10])) / len(e[:10]) for a, e in zip(ann_found, exact_found, strict=True) if e
        ]

        if args.smoke:  # a second process loading the model costs more than the smoke run's budget
            probe_out = '{"rss": NaN, "peak": NaN, "kind": "-"}'
        else:
            command = [sys.executable, "-c", _RSS_PROBE, str(path)]
            probe = subprocess.run(command, cwd=HERE, capture_output=True, text=True, check=False)
            if probe.returncode != 0:
                raise RuntimeError(f"the RSS probe failed: {probe.stderr[-2000:]}")
            probe_out = probe.stdout
        rss = json.loads(probe_out)
    return Result(
        lessons=lessons,
        exact_p50_ms=statistics.median(exact_times),
        exact_p95_ms=percentile(exact_times, 0.95),
        exact_embed_p50_ms=statistics.median(exact_embed),
        ann_p50_ms=statistics.median(ann_times),
        ann_p95_ms=percentile(ann_times, 0.95),
        ann_embed_p50_ms=statistics.median(ann_embed),
        recall_at_10=statistics.fmean(recalls) if recalls else float("nan"),
        build_s=build_s,
        load_s=load_s,
        exact_load_s=exact_load,
        rss_mb=rss["rss"],
        peak_rss_mb=rss["peak"],
        hybrid_p50_ms=statistics.median(hybrid),
        hybrid_p95_ms=percentile(hybrid, 0.95),
        served_by=rss["kind"],
    )


def _hybrid(path: Path, embedder: Checked, queries: Sequence[str]) -> list[float]:
    """``Memory.search`` (both channels, the query embedded each time: distinct queries, one pass
    after a warm-up of a tenth of them) on the store with its saved index, as a host sees it."""
    distinct = list(dict.fromkeys(queries))
    warm, timed = distinct[: max(1, len(distinct) // 10)], distinct[max(1, len(distinct) // 10) :]
    with aa.Memory(SQLiteStore(path, vector_index=ALWAYS), embedder=embedder, vector_budget=30.0) as mem:
        for query in warm:
            mem.search(query, scope=corpus.QUERY_SCOPE, k=5)
        times = []
        for query in timed:
            started = time.perf_counter_ns()
            mem.search(query, scope=corpus.QUERY_SCOPE, k=5)
            times.append((time.perf_counter_ns() - started) / 1e6)
            if mem.channel_status.reason != "ok":
                raise RuntimeError(f"the vector channel did not run: {mem.channel_status}")
    return times


def measure_reindex(lessons: int, embedder: Checked, real: np.ndarray) -> tuple[float, float]:
    """Lessons per second through ``reindex`` with the default embedder, embedding included; and
    vectors per second through ``put_vectors`` alone (batches of 64, the store's share)."""
    with tempfile.TemporaryDirectory(prefix="afteraction-reindex-") as tmp:
        store = SQLiteStore(Path(tmp) / "reindex.db")
        store.put_many(corpus.experiences(50_000_000, lessons))
        start = time.perf_counter()
        report = reindex(store, embedder, batch=64)
        spent = time.perf_counter() - start
        batch = corpus.experiences(60_000_000, 2_000)
        store.put_many(batch)
        rows = vectors_for(10**7, len(batch), real).tolist()
        items = [
            StoredVector(e.scope.tenant, e.id, e.revision, "put-rate", r) for e, r in zip(batch, rows, strict=True)
        ]
        start = time.perf_counter()
        for i in range(0, len(items), 64):
            store.put_vectors(items[i : i + 64])
        put_rate = len(items) / (time.perf_counter() - start)
        store.close()
    if report.embedded != lessons:
        raise RuntimeError(f"reindex embedded {report.embedded} of {lessons}")
    return lessons / spent, put_rate


# -- output -----------------------------------------------------------------------------------


def facts() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "cores": os.cpu_count() or 1,
        "load": os.getloadavg()[0],
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def table(results: Sequence[Result], reindex_rate: float, args: argparse.Namespace) -> str:
    head = (
        f"{'lessons':>8} | {'exact p50':>9} | {'p95':>6} | {'+embed':>7} | {'ANN p50':>7} | {'p95':>6} | "
        f"{'+embed':>7} | {'recall@10':>9} | {'build s':>7} | {'load s':>6} | {'RSS MB':>6} | {'peak':>5} | "
        f"{'hybrid p50':>10} | {'p95':>6} | served by"
    )
    lines = [
        f"vector search (SQLite, {MODEL}): {args.queries} queries x {args.repeat} passes, limit {args.limit}, "
        f"as scope {corpus.QUERY_SCOPE.tenant}/{corpus.QUERY_SCOPE.app}/{corpus.QUERY_SCOPE.project}; ms",
        f"vectors: the first {args.real} lessons embedded for real, the rest generated from them (see --help)",
        head,
        "-" * len(head),
    ]
    for r in results:
        lines.append(
            f"{r.lessons:>8} | {r.exact_p50_ms:>9.2f} | {r.exact_p95_ms:>6.2f} | {r.exact_embed_p50_ms:>7.2f} | "
            f"{r.ann_p50_ms:>7.2f} | {r.ann_p95_ms:>6.2f} | {r.ann_embed_p50_ms:>7.2f} | {r.recall_at_10:>9.3f} | "
            f"{r.build_s:>7.1f} | {r.load_s:>6.2f} | {r.rss_mb:>6.0f} | {r.peak_rss_mb:>5.0f} | "
            f"{r.hybrid_p50_ms:>10.2f} | {r.hybrid_p95_ms:>6.2f} | {r.served_by}"
        )
    lines.append(
        "hybrid: mem.search (text and vector channels, fused; the query embedded each time, distinct queries, "
        "k=5) on the store with its ANN index saved; target p50 ≤ 10 ms at 10k, ≤ 25 ms at 100k"
    )
    lines.append(f"reindex: {reindex_rate:.0f} lessons/s with embedding ({args.reindex} lessons, batch 64)")
    f = facts()
    lines.append(f"machine: {f['cores']} cores, load average {f['load']:.1f}, Python {f['python']}")
    return "\n".join(lines)


def _sizes(text: str) -> list[int]:
    sizes = [int(part) for part in text.split(",") if part.strip()]
    if not sizes or min(sizes) < 100:
        raise argparse.ArgumentTypeError("sizes must be at least 100 each")
    return sizes


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=_sizes, default=[10_000, 100_000], help="lessons per store (10000,100000)")
    parser.add_argument("--real", type=int, default=3_000, help="lessons embedded for real (3000)")
    parser.add_argument("--queries", type=int, default=100, help="queries (100)")
    parser.add_argument("--repeat", type=int, default=3, help="passes over the queries (3)")
    parser.add_argument("--limit", type=int, default=20, help="candidates asked of search_vector (20)")
    parser.add_argument("--reindex", type=int, default=500, help="lessons for the reindex rate (500)")
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA, help="cache of stores and vectors")
    parser.add_argument(
        "--embedder",
        choices=("minilm", "e5"),
        default="minilm",
        help="the embedder of every vector and query: minilm (the default) or e5 (the embed-e5 extra; --hybrid-only)",
    )
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, no cache: checks that it runs")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the table")
    parser.add_argument(
        "--hybrid-only",
        action="store_true",
        help="measure hybrid Memory.search alone (the ANN index built once and saved beside the store); for 1M",
    )
    parser.add_argument(
        "--in-place",
        action="store_true",
        help="measure the cached store file itself, not a copy (it gains index files and migrations); for 1M",
    )
    args = parser.parse_args(argv)
    if args.smoke:
        args.sizes, args.real, args.queries, args.repeat, args.reindex, args.data_dir = [300], 4, 3, 1, 4, None
    if args.embedder != "minilm" and not args.hybrid_only:
        parser.error("--embedder e5 measures --hybrid-only (the RSS probe and reindex use the default embedder)")
    if args.repeat < 1 or args.queries < 1 or args.real < 2:
        parser.error("--repeat, --queries need at least 1 and --real at least 2")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    global MODEL, STORE_TAG
    if args.smoke:
        embedder = Checked(Hashed())
    elif args.embedder == "e5":
        from afteraction.embed.e5 import E5Small

        embedder = Checked(E5Small())
    else:
        embedder = default_embedder()
    MODEL = embedder.model_id
    STORE_TAG = "" if MODEL in MODEL_IDS.values() else f"-{MODEL}"
    embedder.embed(["warm up"])
    real = real_vectors(args.data_dir, args.real, embedder)
    queries = corpus.queries(args.queries)
    if args.hybrid_only:
        rows = []
        for lessons in args.sizes:
            _progress(f"measuring hybrid search over {lessons} lessons")
            rows.append(measure_hybrid(lessons, args, real, embedder))
        print(json.dumps({"facts": facts(), "results": rows}) if args.json else hybrid_table(rows))
        return 0
    query_vectors = np.asarray([embedder.embed([q])[0] for q in queries], dtype=np.float32)
    results = []
    for lessons in args.sizes:
        _progress(f"measuring {lessons} lessons")
        results.append(measure(lessons, args, args.data_dir, real, queries, query_vectors, embedder.embed, embedder))
    rate, put_rate = measure_reindex(args.reindex, embedder, real)
    if args.json:
        report = {"facts": facts(), "reindex_per_s": rate, "put_vectors_per_s": put_rate}
        print(json.dumps({**report, "results": [asdict(r) for r in results]}))
    else:
        print(table(results, rate, args))
        print(f"put_vectors alone: {put_rate:.0f} vectors/s (batches of 64, one transaction each)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
