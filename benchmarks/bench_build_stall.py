"""Searches while the SQLite store builds its ANN index: a graph built in a thread of the searching
process against one built in a child process (``IndexPolicy.build_in_child``, ``store/ann_build.py``).

usearch's ``Index.add`` holds the GIL for the whole call, so a graph built in a thread stalls every other
thread of the process; a search gives the GIL up at each sqlite3 call and waits to get it back.

For each variant and round: a copy of ``bench_vectors``' cached store of ``--lessons`` lessons (built
when missing; about half of them in the searched tenant), opened with no saved index and the ANN
index due from ``--ann-from`` vectors; the first search starts the background build of the searched
tenant's graph, then searches run back to back from the main thread (``search_vector``,
query vectors computed once) until the build has ended. Printed per variant (medians over rounds):
the build's wall time, the searches done meanwhile, their p50 / p95 / longest. The variants alternate
round by round, so both see the same machine.

    .venv/bin/python benchmarks/bench_build_stall.py --lessons 30000 --rounds 2
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import bench_vectors as bv
import corpus
import numpy as np

from afteraction.embed import Checked, default_embedder
from afteraction.embed.minilm import MODEL_IDS
from afteraction.store import SQLiteStore
from afteraction.store.sqlite_vectors import IndexPolicy

VARIANTS = {"thread": False, "child process": True}


def one(path: Path, queries: np.ndarray, *, in_child: bool, limit: int, ann_from: int) -> dict[str, float]:
    """Open ``path`` fresh, start the build with a search, search until it ends."""
    for left in path.parent.glob(f"{path.name}-vectors/*"):
        left.unlink()
    store = SQLiteStore(path, vector_index=IndexPolicy(ann_from=ann_from, background_from=0, build_in_child=in_child))
    try:
        scope, model = corpus.QUERY_SCOPE, bv.MODEL
        start = time.perf_counter()
        store.search_vector(scope, model, queries[0].tolist(), now=bv.NOW, limit=limit)
        times: list[float] = []
        while any(thread.is_alive() for thread in store.vectors._threads):
            query = queries[len(times) % len(queries)].tolist()
            began = time.perf_counter()
            store.search_vector(scope, model, query, now=bv.NOW, limit=limit)
            times.append((time.perf_counter() - began) * 1000)
        built_s = time.perf_counter() - start
        index = store.vectors.entries[(scope.tenant, model)].index
        if index.kind != "ann":
            raise RuntimeError(f"the build did not end in an ANN index ({index.kind}, {len(index)} vectors)")
    finally:
        store.close()
    times = times or [float("nan")]
    return {
        "vectors": len(index),
        "build_s": built_s,
        "searches": len(times),
        "p50": statistics.median(times),
        "p95": bv.percentile(times, 0.95),
        "max": max(times),
    }


def table(rows: dict[str, list[dict[str, float]]], lessons: int) -> str:
    vectors = next(iter(rows.values()))[0]["vectors"]
    head = f"{'built in':<14} | {'build s':>7} | {'searches':>8} | {'p50 ms':>8} | {'p95 ms':>8} | {'longest ms':>10}"
    title = f"search_vector while the ANN index of {vectors:.0f} vectors builds ({lessons} lessons; medians of rounds)"
    lines = [title, head]
    lines.append("-" * len(head))
    for name, runs in rows.items():
        m = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
        lines.append(
            f"{name:<14} | {m['build_s']:>7.1f} | {m['searches']:>8.0f} | {m['p50']:>8.2f} | {m['p95']:>8.2f} | "
            f"{m['max']:>10.1f}"
        )
    for name, runs in rows.items():
        lines.append(f"  {name}, per round (build s, p50, longest): " + "; ".join(
            f"{run['build_s']:.1f}, {run['p50']:.2f}, {run['max']:.0f}" for run in runs
        ))  # fmt: skip
    f = bv.facts()
    lines.append(f"machine: {f['cores']} cores, load average {f['load']:.1f}, Python {f['python']}")
    return "\n".join(lines)


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lessons", type=int, default=30_000, help="vectors in the store (30000)")
    parser.add_argument("--ann-from", type=int, default=10_000, help="IndexPolicy.ann_from (10000)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of each variant, alternated (2)")
    parser.add_argument("--limit", type=int, default=20, help="candidates asked of search_vector (20)")
    parser.add_argument("--real", type=int, default=3_000, help="lessons embedded for real (3000)")
    parser.add_argument("--data-dir", type=Path, default=bv.DEFAULT_DATA, help="cache of stores and vectors")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, no cache: checks that it runs")
    args = parser.parse_args(argv)
    if args.smoke:
        args.lessons, args.ann_from, args.rounds, args.real, args.data_dir = 1_000, 200, 1, 200, None
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    embedder = Checked(bv.Hashed()) if args.smoke else default_embedder()
    bv.MODEL = embedder.model_id
    bv.STORE_TAG = "" if bv.MODEL in MODEL_IDS.values() else f"-{bv.MODEL}"
    real = bv.real_vectors(args.data_dir, args.real, embedder)
    queries = real[: min(200, len(real))]
    rows: dict[str, list[dict[str, float]]] = {name: [] for name in VARIANTS}
    with tempfile.TemporaryDirectory(prefix="afteraction-stall-") as tmp:
        path = bv.stored(args.lessons, args.data_dir, real, tmp)
        for round_ in range(args.rounds):
            for name, in_child in VARIANTS.items():
                bv._progress(f"round {round_ + 1}: built in a {name}")
                rows[name].append(one(path, queries, in_child=in_child, limit=args.limit, ann_from=args.ann_from))
    print(table(rows, args.lessons))
    return 0


if __name__ == "__main__":
    sys.exit(main())
