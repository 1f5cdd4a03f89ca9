"""Indexing throughput and query latency of the bundled embedder, through ``index_experiences``.

The lessons are the quality corpus's (``quality_corpus.json``) followed by ``--generated``
lessons of ``corpus.py``, each embedded from ``core.text.embedding_text`` (task and first
symptom) exactly as background indexing and ``afteraction reindex`` do, into an in-memory store,
``--batch`` records per call (the ``Indexer``'s batch size). For each ``--configs`` entry
(``VARIANT:PARALLEL``, variant ``requantized`` or ``shipped``), in its own subprocess:

- ``lessons/s``: wall clock and per CPU-second (``process_time``, all threads) over
  ``--repeat`` passes over every lesson, median;
- ``query p50``: one query embedded at a time (the query cache off), wall and CPU, alone and
  while another thread indexes in a loop (is a query starved by indexing?);
- ``RSS``: resident memory of the process at the end.

On a shared machine the wall clock depends on the load: ``uptime`` is printed with the table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def lessons(generated: int) -> list[Any]:
    import corpus

    import afteraction as aa

    data = json.loads((HERE / "quality_corpus.json").read_text(encoding="utf-8"))
    return [aa.Experience.from_dict(item) for item in data["lessons"]] + corpus.experiences(0, generated)


def measure(variant: str, parallel: int, args: argparse.Namespace) -> dict[str, Any]:
    import corpus

    from afteraction.core.text import embedding_text
    from afteraction.embed import Checked, MiniLM
    from afteraction.indexing import index_experiences
    from afteraction.store.memory import MemoryStore

    records = lessons(args.generated)
    store = MemoryStore()
    store.put_many(records)
    embedder = Checked(MiniLM(variant=variant, parallel=parallel, cache_size=0))
    embedder.embed(["warm up"])
    batches = [records[i : i + args.batch] for i in range(0, len(records), args.batch)]
    wall, cpu = [], []
    for _ in range(args.repeat):
        started, used = time.perf_counter(), time.process_time()
        for batch in batches:
            index_experiences(store, embedder, batch)
        wall.append(len(records) / (time.perf_counter() - started))
        cpu.append(len(records) / (time.process_time() - used))

    queries = corpus.queries(args.queries)

    def time_queries() -> tuple[float, float]:
        walls, cpus = [], []
        for query in queries:
            started, used = time.perf_counter(), time.thread_time()
            embedder.embed([query])
            walls.append((time.perf_counter() - started) * 1000)
            cpus.append((time.thread_time() - used) * 1000)
        return statistics.median(walls), statistics.median(cpus)

    alone = time_queries()
    stop = threading.Event()
    indexed = [0]

    def index_loop() -> None:
        while not stop.is_set():
            for batch in batches:
                if stop.is_set():
                    return
                indexed[0] += index_experiences(store, embedder, batch)

    worker = threading.Thread(target=index_loop)
    worker.start()
    time.sleep(0.5)
    busy = time_queries()
    stop.set()
    worker.join()
    texts = [embedding_text(record) for record in records]
    return {
        "config": f"{variant}:{parallel}",
        "model_id": embedder.model_id,
        "lessons": len(records),
        "chars": statistics.mean(len(text) for text in texts),
        "lessons_per_s": statistics.median(wall),
        "lessons_per_cpu_s": statistics.median(cpu),
        "query_p50_ms": alone[0],
        "query_p50_cpu_ms": alone[1],
        "query_p50_ms_indexing": busy[0],
        "query_p50_cpu_ms_indexing": busy[1],
        "rss_mb": rss_mb(),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--configs", default="shipped:1,requantized:1,requantized:2", help="VARIANT:PARALLEL,...")
    parser.add_argument("--generated", type=int, default=1000, help="corpus.py lessons after the quality corpus's")
    parser.add_argument("--batch", type=int, default=32, help="records per index_experiences call (32)")
    parser.add_argument("--repeat", type=int, default=3, help="passes over every lesson (3)")
    parser.add_argument("--queries", type=int, default=100, help="single queries timed (100)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--smoke", action="store_true", help="one config, 16 generated lessons, one pass, 5 queries")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.smoke:
        args.configs, args.generated, args.repeat, args.queries = "requantized:2", 16, 1, 5
    if args.one:
        variant, _, parallel = args.one.partition(":")
        print(json.dumps(measure(variant, int(parallel), args)))
        return 0
    rows = []
    for config in args.configs.split(","):
        command = [sys.executable, __file__, "--one", config, *(argv or sys.argv[1:])]
        done = subprocess.run(command, capture_output=True, text=True, check=True, env=os.environ)
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    load = os.getloadavg()
    if args.json:
        print(json.dumps({"loadavg": load, "rows": rows}, indent=2))
        return 0
    print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; {rows[0]['lessons']} lessons, "
          f"embedding_text {rows[0]['chars']:.0f} chars on average")  # fmt: skip
    head = ["variant:parallel", "lessons/s", "per CPU-s", "query p50 ms (CPU)", "… while indexing (CPU)", "RSS MB"]
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|")
    for row in rows:
        cells = [
            row["config"],
            f"{row['lessons_per_s']:.0f}",
            f"{row['lessons_per_cpu_s']:.0f}",
            f"{row['query_p50_ms']:.1f} ({row['query_p50_cpu_ms']:.1f})",
            f"{row['query_p50_ms_indexing']:.1f} ({row['query_p50_cpu_ms_indexing']:.1f})",
            f"{row['rss_mb']:.0f}",
        ]
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
