"""Writes beside reads in one SQLite store: does a search hold up a finished run's write?

A store of ``--lessons`` generated lessons (``corpus.py``), each with a stored unit vector of
``--dimension`` (model ``bench``; no embedder runs), is copied afresh for every measurement:

- ``1 proc``: in one process, ``put`` of one lesson (what a finished run stores) and
  ``put_vectors`` of its vector (what background indexing writes), one every ``--interval``
  seconds for ``--seconds``, alone and while ``--readers`` threads search without pause (text
  search, then vector search, in the query scope, 30 candidates as ``Memory.search`` asks);
- ``2 procs``: two processes on the file, started together: A writes as above while one thread
  searches, B only writes. Both write to the searched tenant, so A's vector search catches up
  with B's rows (an ANN index from ``--ann-from`` vectors, loaded from the files beside the
  database, as a long-lived process would have).

``--baseline DIR`` measures a second version too, alternating with this one ``--rounds`` times:
``DIR/src`` holds its package (``git archive <rev> src | tar -x -C DIR``). Each measurement runs
in a fresh subprocess with that ``src`` first on ``sys.path``. Medians over rounds; ``uptime`` is
printed before and after (the machine may be shared).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
sys.path.insert(0, str(HERE))

MODEL = "bench"
NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
SCENARIOS = ("1 proc, writes alone", "1 proc, writes + readers", "2 procs: A writes + searches", "2 procs: B writes")


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def unit_vectors(seed: int, n: int, dimension: int) -> Any:
    import numpy as np

    vectors = np.random.default_rng(seed).standard_normal((n, dimension)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


# -- the workers (run in subprocesses, with the code under test first on sys.path) -----------


def _open(db: Path, ann_from: int) -> Any:
    from afteraction.store.sqlite import SQLiteStore
    from afteraction.store.vector_index import IndexPolicy

    return SQLiteStore(db, vector_index=IndexPolicy(ann_from=ann_from, background_from=10**9))


def _writes(store: Any, worker: int, seconds: float, interval: float, dimension: int) -> dict[str, list[float]]:
    """``put`` then ``put_vectors`` of one new lesson of the query scope, paced; their latencies (ms)."""
    import corpus

    from afteraction.store.base import StoredVector

    pool = corpus.experiences(0, 200)
    vectors = unit_vectors(1000 + worker, 256, dimension)
    put: list[float] = []
    vec: list[float] = []
    clock = time.perf_counter
    deadline = clock() + seconds
    i = 0
    while clock() < deadline:
        experience = replace(pool[i % len(pool)], id=f"w{worker}-{i}", scope=corpus.QUERY_SCOPE)
        vector = vectors[i % len(vectors)].tolist()
        start = clock()
        store.put(experience)
        middle = clock()
        store.put_vectors([StoredVector(experience.scope.tenant, experience.id, experience.revision, MODEL, vector)])
        end = clock()
        put.append((middle - start) * 1e3)
        vec.append((end - middle) * 1e3)
        i += 1
        time.sleep(max(0.0, interval - (clock() - start)))
    return {"put": put, "vec": vec}


def _searching(store: Any, stop: threading.Event, counts: list[int], index: int, dimension: int) -> None:
    import corpus

    from afteraction.core.text import query_terms

    queries = [query_terms(q) for q in corpus.queries(50)]
    vectors = unit_vectors(7 + index, 64, dimension)
    i = 0
    while not stop.is_set():
        store.search_text(corpus.QUERY_SCOPE, queries[i % len(queries)], now=NOW, limit=30)
        store.search_vector(corpus.QUERY_SCOPE, MODEL, vectors[i % len(vectors)].tolist(), now=NOW, limit=30)
        counts[index] += 1
        i += 1


def worker(args: argparse.Namespace) -> dict[str, Any]:
    import afteraction

    print(f"  worker {args.worker_id}: afteraction from {Path(afteraction.__file__).parent}", file=sys.stderr)
    store = _open(Path(args.db), args.ann_from)
    try:
        store.search_vector(__import__("corpus").QUERY_SCOPE, MODEL, [1.0] + [0.0] * (args.dimension - 1), now=NOW)
        time.sleep(max(0.0, args.start - time.time()))
        stop = threading.Event()
        counts = [0] * args.readers
        threads = [
            threading.Thread(target=_searching, args=(store, stop, counts, n, args.dimension), daemon=True)
            for n in range(args.readers)
        ]
        for thread in threads:
            thread.start()
        started = time.perf_counter()
        found: dict[str, Any] = _writes(store, args.worker_id, args.seconds, args.interval, args.dimension)
        stop.set()
        for thread in threads:
            thread.join()
        found["searches_per_s"] = sum(counts) / (time.perf_counter() - started)
        return found
    finally:
        store.close()


# -- the orchestration ---------------------------------------------------------------------


def prepare(path: Path, lessons: int, dimension: int, ann_from: int) -> None:
    import corpus

    from afteraction.store.base import StoredVector

    store = _open(path, ann_from)
    try:
        for start in range(0, lessons, 2_000):
            chunk = corpus.experiences(start, min(2_000, lessons - start))
            store.put_many(chunk)
            vectors = unit_vectors(start, len(chunk), dimension)
            store.put_vectors(
                [
                    StoredVector(e.scope.tenant, e.id, e.revision, MODEL, v.tolist())
                    for e, v in zip(chunk, vectors, strict=True)
                ]
            )
        store.build_vector_index(MODEL)
    finally:
        store.close()


def _copy(prepared: Path, into: Path) -> Path:
    """The prepared database and its index files, copied into the (new, empty) folder ``into``."""
    db = into / prepared.name
    shutil.copyfile(prepared, db)
    folder = prepared.with_name(prepared.name + "-vectors")
    if folder.exists():
        shutil.copytree(folder, into / folder.name)
    return db


def _spawn(src: Path, db: Path, args: argparse.Namespace, **options: Any) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(HERE)])}
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", "--db", str(db)]
    for name in ("seconds", "interval", "dimension", "ann_from"):
        command += [f"--{name.replace('_', '-')}", str(getattr(args, name))]
    for name, value in options.items():
        command += [f"--{name.replace('_', '-')}", str(value)]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True)


def _result(process: subprocess.Popen[str]) -> dict[str, Any]:
    out, _ = process.communicate(timeout=600)
    if process.returncode != 0:
        raise RuntimeError(f"a worker failed (exit {process.returncode})")
    found: dict[str, Any] = json.loads(out)
    return found


def measure(src: Path, prepared: Path, tmp: Path, args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """Every scenario once with the package in ``src``."""
    results: dict[str, dict[str, Any]] = {}
    for name, readers in ((SCENARIOS[0], 0), (SCENARIOS[1], args.readers)):
        db = _copy(prepared, Path(tempfile.mkdtemp(dir=tmp)))
        start = time.time() + 1.0
        results[name] = _result(_spawn(src, db, args, readers=readers, worker_id=0, start=start))
    db = _copy(prepared, Path(tempfile.mkdtemp(dir=tmp)))
    start = time.time() + 1.5
    a = _spawn(src, db, args, readers=1, worker_id=1, start=start)
    b = _spawn(src, db, args, readers=0, worker_id=2, start=start)
    results[SCENARIOS[2]], results[SCENARIOS[3]] = _result(a), _result(b)
    return results


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return f"load average: {', '.join(f'{v:.2f}' for v in os.getloadavg())}"


def summary(rounds: list[dict[str, dict[str, Any]]]) -> dict[str, dict[str, float]]:
    """Per scenario, the median over rounds of each figure."""
    out: dict[str, dict[str, float]] = {}
    for name in SCENARIOS:
        figures: dict[str, list[float]] = {}
        for measured in rounds:
            found = measured[name]
            for kind in ("put", "vec"):
                figures.setdefault(f"{kind}_p50", []).append(percentile(found[kind], 0.5))
                figures.setdefault(f"{kind}_p95", []).append(percentile(found[kind], 0.95))
                figures.setdefault(f"{kind}_max", []).append(max(found[kind], default=float("nan")))
            figures.setdefault("writes", []).append(len(found["put"]))
            figures.setdefault("searches_per_s", []).append(found["searches_per_s"])
        out[name] = {key: statistics.median(values) for key, values in figures.items()}
    return out


def table(results: dict[str, dict[str, dict[str, float]]], args: argparse.Namespace, loads: list[str]) -> str:
    head = (
        f"{'code':<9}| {'scenario':<29}| put p50 ms | put p95 ms | put max ms | vec p50 ms | vec p95 ms "
        "| writes | searches/s"
    )
    lines = [head, "-" * len(head)]
    for name in SCENARIOS:
        for code, figures in results.items():
            f = figures[name]
            lines.append(
                f"{code:<9}| {name:<29}| {f['put_p50']:>10.2f} | {f['put_p95']:>10.2f} | {f['put_max']:>10.1f} "
                f"| {f['vec_p50']:>10.2f} | {f['vec_p95']:>10.2f} | {f['writes']:>6.0f} | {f['searches_per_s']:>10.1f}"
            )
    lines += [
        "",
        f"{args.lessons:,} lessons with {args.dimension}-d vectors (ANN index from {args.ann_from:,} per tenant); "
        f"one write every {args.interval * 1e3:.0f} ms for {args.seconds:g} s; {args.readers} reader thread(s) "
        f"in '1 proc'; medians of {args.rounds} round(s); {os.cpu_count()} cores",
        *(f"uptime {when}: {load}" for when, load in zip(("before", "after"), loads, strict=False)),
    ]
    return "\n".join(lines)


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--lessons", type=int, default=20_000, help="lessons in the store (default 20000)")
    parser.add_argument("--dimension", type=int, default=384, help="vector dimension (default 384)")
    parser.add_argument("--ann-from", type=int, default=5_000, help="vectors per tenant from which ANN serves")
    parser.add_argument("--seconds", type=float, default=8.0, help="seconds each scenario writes (default 8)")
    parser.add_argument("--interval", type=float, default=0.01, help="seconds between writes (default 0.01)")
    parser.add_argument("--readers", type=int, default=2, help="search threads in '1 proc' (default 2)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds, alternating the versions (default 2)")
    parser.add_argument("--baseline", type=Path, help="a folder whose src/ holds the version to compare with")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: checks that it runs")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the table")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    parser.add_argument("--worker-id", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--start", type=float, default=0.0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.smoke:
        args.lessons, args.seconds, args.rounds, args.ann_from = 300, 0.5, 1, 100
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    if args.worker:
        print(json.dumps(worker(args)))
        return 0
    codes = {"this": SRC}
    if args.baseline is not None:
        if not (args.baseline / "src" / "afteraction").is_dir():
            print(f"{args.baseline}/src/afteraction is not there", file=sys.stderr)
            return 2
        codes = {"baseline": args.baseline / "src", "this": SRC}
    loads = [uptime()]
    with tempfile.TemporaryDirectory(prefix="afteraction-bench-") as tmp:
        prepared = Path(tmp) / "prepared" / "memory.db"
        prepared.parent.mkdir()
        print(f"preparing {args.lessons:,} lessons with vectors ...", file=sys.stderr, flush=True)
        prepare(prepared, args.lessons, args.dimension, args.ann_from)
        rounds: dict[str, list[dict[str, dict[str, Any]]]] = {code: [] for code in codes}
        for number in range(args.rounds):
            order = list(codes) if number % 2 == 0 else list(reversed(codes))
            for code in order:
                print(f"round {number + 1}: {code} ...", file=sys.stderr, flush=True)
                rounds[code].append(measure(codes[code], prepared, Path(tmp), args))
    loads.append(uptime())
    results = {code: summary(measured) for code, measured in rounds.items()}
    if args.json:
        print(json.dumps({"results": results, "uptime": loads, "args": {k: str(v) for k, v in vars(args).items()}}))
    else:
        print(table(results, args, loads))
    return 0


if __name__ == "__main__":
    sys.exit(main())
