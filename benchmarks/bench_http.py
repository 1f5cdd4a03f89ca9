"""Experience over HTTP: search and the reference block through a real ``afteraction serve``.

It stores ``--lessons`` generated lessons (``corpus.py``, moved into tenant ``dev``) in a fresh
SQLite file, starts ``afteraction serve --dev --no-vectors`` on a free loopback port, and times
``POST /experience/search`` (k=5) and ``POST /experience/block`` for ``--queries`` queries over
one keep-alive connection, after a warm-up pass on other queries. With ``--vectors`` the server
runs both channels (it embeds each query with the default model) over vectors stored for every
lesson as ``bench_vectors.py`` makes them (3,000 embedded for real, the rest blended from those:
embedding 10k lessons here takes minutes). Warm-up, search and block each get their own distinct
queries, so the server's cache of query embeddings is never hit.

    .venv/bin/python benchmarks/bench_http.py                   # 10k lessons, 200 queries
    .venv/bin/python benchmarks/bench_http.py --vectors         # both channels
    .venv/bin/python benchmarks/bench_http.py --smoke --json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus
from _http import HOST, Server

import afteraction as aa

TARGET_MS = 15.0  # issue 5: search + block over HTTP p50 at 10k lessons


def build(db: Path, lessons: int) -> int:
    """``lessons`` generated lessons in tenant ``dev``; how many the dev tenant's query scope sees."""
    with aa.Memory.open(db, embedder=None) as mem:
        for start in range(0, lessons, 5000):
            batch = corpus.experiences(start, min(5000, lessons - start))
            mem.add_many(replace(exp, scope=replace(exp.scope, tenant="dev")) for exp in batch)
        return mem.store.count(scope())


def add_vectors(db: Path, lessons: int) -> None:
    """Vectors of the default model for every stored lesson, as ``bench_vectors.py`` makes them:
    the first 3,000 embedded for real (cached), the rest blended from those (embedding 10k
    lessons takes minutes here)."""
    import bench_vectors

    from afteraction.embed import default_embedder
    from afteraction.store import SQLiteStore
    from afteraction.store.base import StoredVector

    embedder = default_embedder()  # the server's: its model id is the one stored
    real = bench_vectors.real_vectors(bench_vectors.DEFAULT_DATA, 3_000, embedder)
    store = SQLiteStore(db)
    try:
        for start in range(0, lessons, 5000):
            batch = corpus.experiences(start, min(5000, lessons - start))
            rows = bench_vectors.vectors_for(start, len(batch), real).tolist()
            store.put_vectors(
                [StoredVector("dev", e.id, e.revision, embedder.model_id, v) for e, v in zip(batch, rows, strict=True)]
            )
    finally:
        store.close()


def scope() -> aa.Scope:
    return replace(corpus.QUERY_SCOPE, tenant="dev")


def timed(http: httpx.Client, path: str, bodies: list[dict[str, Any]]) -> list[float]:
    out = []
    for body in bodies:
        started = time.perf_counter_ns()
        answer = http.post(path, json=body)
        out.append((time.perf_counter_ns() - started) / 1e6)
        if answer.status_code != 200:
            raise SystemExit(f"{path} answered {answer.status_code}: {answer.text[:300]}")
    return out


def measure(lessons: int, queries: int, vectors: bool = False) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="afteraction-http-") as tmp:
        db = Path(tmp) / "served.db"
        print(f"storing {lessons:,} lessons ...", file=sys.stderr)
        visible = build(db, lessons)
        if vectors:
            add_vectors(db, lessons)
        # Three sets of distinct queries (warm-up, search, block): the server keeps an LRU of
        # query embeddings, which a repeated query would hit.
        texts = corpus.queries(3 * queries)
        where = scope().to_dict()
        warm = [{"query": q, "scope": where, "k": 5} for q in texts[:queries]]
        searches = [{"query": q, "scope": where, "k": 5} for q in texts[queries : 2 * queries]]
        blocks = [{"task": q, "scope": where} for q in texts[2 * queries :]]
        with (
            Server.start(db, *(() if vectors else ("--no-vectors",))) as server,
            httpx.Client(base_url=f"http://{HOST}:{server.port}", timeout=30) as http,
        ):
            timed(http, "/experience/search", warm)  # warm-up: caches, the model, first connections
            search = timed(http, "/experience/search", searches)
            block = timed(http, "/experience/block", blocks)
    return {
        "lessons": lessons,
        "vectors": vectors,
        "visible": visible,
        "queries": queries,
        "search_p50_ms": statistics.median(search),
        "search_p95_ms": statistics.quantiles(search, n=20)[-1] if len(search) > 1 else search[0],
        "block_p50_ms": statistics.median(block),
        "block_p95_ms": statistics.quantiles(block, n=20)[-1] if len(block) > 1 else block[0],
    }


def table(r: dict[str, Any]) -> str:
    channels = (
        "hybrid (text + vector, the query embedded by the server)" if r["vectors"] else "text channel (--no-vectors)"
    )
    mark = "" if r["search_p50_ms"] <= TARGET_MS and r["block_p50_ms"] <= TARGET_MS else " !"
    return "\n".join(
        [
            f"experience over HTTP · {r['lessons']:,} lessons ({r['visible']:,} visible to the query scope) · "
            f"{r['queries']} queries · {channels} · target p50 ≤ {TARGET_MS:g} ms",
            "route                     | p50 ms | p95 ms",
            "--------------------------+--------+-------",
            f"POST /experience/search   | {r['search_p50_ms']:6.2f} | {r['search_p95_ms']:6.2f}{mark}",
            f"POST /experience/block    | {r['block_p50_ms']:6.2f} | {r['block_p95_ms']:6.2f}{mark}",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lessons", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--smoke", action="store_true", help="500 lessons, 20 queries")
    parser.add_argument(
        "--vectors", action="store_true", help="serve with the vector channel (default embedder) over stored vectors"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.smoke:
        args.lessons, args.queries = 500, 20
    result = measure(args.lessons, args.queries, args.vectors)
    print(json.dumps(result) if args.json else table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
