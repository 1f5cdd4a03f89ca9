"""Step 1: dump, per query of each used corpus, every candidate the shipped search ranks, with the features
a per-query normalization needs. Never touches quality_heldout6.json.

For each corpus: the lessons go into a fresh SQLite store through Memory.add_many (the default embedder, MiniLM +
adapter, as bench_quality.run does), the vectors are waited for, then each query is asked through mem.search(k=5)
and mem.reference_block. core.rank.rank is wrapped during the search call: the real call decides the search (so the
shipped result is recorded unchanged), and a second call with the floor at 0 gives every eligible candidate with
its factors. Per candidate we keep: capped coverage (rank.relevance, coverage_terms=8), cosine (None when judged
by the text rule), the non-relevance part of the score, and whether it was a text-only candidate.
Separately, every lesson and query is embedded with afteraction.embed.default_embedder() (lessons from
core.text.embedding_text, queries from searching.query_text, as the store does) so that the cosine of every query to
every visible eligible lesson, and each lesson's cosines to the others, are known (checked against the store's).

    PYTHONPATH=src:benchmarks:benchmarks/experiments .venv/bin/python benchmarks/experiments/normalize_dump.py \
        --out /tmp/normalize/dump
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_quality as bq  # noqa: E402

import afteraction as aa  # noqa: E402
import afteraction.searching as searching  # noqa: E402
from afteraction.core import rank as rank_mod  # noqa: E402
from afteraction.core.text import embedding_text, query_stems  # noqa: E402
from afteraction.embed import default_embedder  # noqa: E402

CORPORA = (
    "quality_corpus",
    "quality_heldout",
    "quality_heldout2",
    "quality_heldout3",
    "quality_heldout4",
    "quality_heldout5",
)  # never quality_heldout6


def dump_corpus(name: str) -> dict:
    assert "heldout6" not in name
    corpus = bq.load(ROOT / "benchmarks" / f"{name}.json")
    original = rank_mod.rank
    captured: dict = {}
    state = {"on": False}

    def wrapped(query, candidates, **kw):
        hits = original(query, candidates, **kw)
        if state["on"]:
            w0 = replace(kw.get("weights", rank_mod.DEFAULT_WEIGHTS), min_hybrid_relevance=-1.0)
            allhits = original(query, candidates, **{**kw, "weights": w0})
            wanted = query_stems(query)
            by_id = {c.experience.id: c for c in candidates}
            rows = []
            for h in allhits:
                c = by_id[h.experience.id]
                held = c.stems if c.stems is not None else None
                cov = rank_mod.relevance(wanted, h.experience, held, max_terms=8)
                f = h.factors
                rest = h.score - 0.6 * f["relevance"]
                rows.append(
                    {
                        "id": h.experience.id,
                        "cov": cov,
                        "cos": f.get("vector"),
                        "rel0": f["relevance"],
                        "rest": rest,
                        "vec_cand": c.vector_score is not None,
                    }
                )
            captured["rows"] = rows
            captured["hybrid"] = kw.get("hybrid", False)
            captured["bound"] = kw.get("cosine_bound")
            captured["n_vec"] = sum(1 for c in candidates if c.vector_score is not None)
            captured["qtext"] = query
        return hits

    searching.rank = wrapped  # searching imported the name
    out = {"queries": []}
    errors: list[str] = []
    try:
        with tempfile.TemporaryDirectory(prefix="e1-") as tmp:
            mem = aa.Memory.open(
                str(Path(tmp) / "q.db"),
                clock=lambda: corpus.now,
                on_error=lambda exc, where: errors.append(f"{where}: {exc}"),
            )
            try:
                assert mem.add_many(corpus.lessons) == len(corpus.lessons)
                assert mem.wait_indexed(timeout=600)
                for q in corpus.queries:
                    mem.search(q.text, scope=q.scope, k=bq.K)  # warm-up, as bench_quality.measure
                for q in corpus.queries:
                    captured.clear()
                    state["on"] = True
                    hits = mem.search(q.text, scope=q.scope, k=bq.K)
                    state["on"] = False
                    ok = mem.channel_status.ok
                    block = bool(mem.reference_block(q.text, scope=q.scope))
                    out["queries"].append(
                        {
                            "id": q.id,
                            "category": q.category,
                            "text": q.text,
                            "qtext": captured.get("qtext", ""),
                            "scope": q.scope.to_dict(),
                            "answers": list(q.answers),
                            "about": list(q.about),
                            "returned": [h.experience.id for h in hits],
                            "block": block,
                            "vector_ok": ok,
                            "hybrid": captured.get("hybrid"),
                            "bound": captured.get("bound"),
                            "n_vec": captured.get("n_vec"),
                            "cands": captured.get("rows", []),
                        }
                    )
            finally:
                mem.close()
    finally:
        searching.rank = original
    if errors:
        print(name, "ERRORS", errors[:5], file=sys.stderr)
    # every lesson / query through the default embedder, as the store does
    emb = default_embedder()
    lessons = corpus.lessons
    lv = np.array(emb.embed([embedding_text(x) for x in lessons]), dtype=np.float64)
    qv = np.array(emb.embed([searching.query_text(q.text) for q in corpus.queries]), dtype=np.float64)
    out["lessons"] = [
        {
            "id": x.id,
            "scope": x.scope.to_dict(),
            "eligible": x.eligibility(corpus.now, min_confidence=aa.Weights().min_confidence) is None,
        }
        for x in lessons
    ]
    out["lesson_vec"] = lv.round(6).tolist()
    out["query_vec"] = qv.round(6).tolist()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--corpus", action="append", default=[])
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.corpus or CORPORA:
        data = dump_corpus(name)
        (args.out / f"{name}.json").write_text(json.dumps(data))
        print(name, len(data["queries"]), "queries dumped", flush=True)


if __name__ == "__main__":
    main()
