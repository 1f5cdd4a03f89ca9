"""Experiment (not shipped): a cross-encoder as a second stage over the shipped hybrid search.

Two steps in the project's venv around one in a venv with PyTorch (``cross_encoder_train.py``):

    .venv/bin/python benchmarks/experiments/cross_encoder_eval.py dump --out /tmp/ce
    /tmp/ft/bin/python benchmarks/experiments/cross_encoder_train.py --base DIR --data /tmp/ce   # ~25 min here
    .venv/bin/python benchmarks/experiments/cross_encoder_eval.py report --data /tmp/ce

``dump`` runs every query of the used corpora (never the sealed ``quality_heldout6.json``) through
the shipped default with no relevance floor and keeps, per query, its candidates in the order the
default ranks them, with their blended relevance and cosine, and the text each lesson is embedded
from (``core.text.embedding_text``). ``report`` reads the cross-encoder's score of each (request,
candidate) pair and compares, per corpus: the shipped floor; the cross-encoder's order with a
threshold on its score; and the two blended. Thresholds are chosen on the project corpus (as the
shipped floor was) and, as a second view, on the other five corpora pooled (leave one corpus out),
each time the one that leaves the fewest answerable requests with nothing while at most 8% of the
requests with no answer get a block. Last, how well the best candidate's scores tell a request
with an answer from one without (AUC), alone and combined by a logistic fit left out the same way.
Results and the decision: ``benchmarks/experiments/README.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench_quality as bq

import afteraction as aa
from afteraction.core.text import embedding_text

ROOT = Path(__file__).resolve().parents[2]
CORPORA = (  # the used ones: never the sealed quality_heldout6
    "quality_corpus",
    "quality_heldout",
    "quality_heldout2",
    "quality_heldout3",
    "quality_heldout4",
    "quality_heldout5",
)
SHIPPED_FLOOR = aa.Weights().min_hybrid_relevance
TOP = 8  # candidates the cross-encoder reads per request
CAP = 0.08  # requests with no answer given a block, at most, where a threshold is chosen

Rows = list[dict[str, Any]]
Metrics = tuple[float, float, float, float]


def dump(out: Path) -> None:
    data: dict[str, Any] = {}
    for name in CORPORA:
        corpus = bq.load(ROOT / "benchmarks" / f"{name}.json")
        weights = replace(aa.Weights(), min_hybrid_relevance=0.0)
        rows = []
        with tempfile.TemporaryDirectory() as tmp:
            clock = partial(lambda at: at, corpus.now)
            mem = aa.Memory.open(str(Path(tmp) / "q.db"), clock=clock, weights=weights)
            try:
                mem.add_many(corpus.lessons)
                if not mem.wait_indexed(timeout=600):
                    raise RuntimeError("indexing did not finish")
                for query in corpus.queries:
                    hits = mem.search(query.text, scope=query.scope, k=30)
                    if not mem.channel_status.ok:
                        raise RuntimeError(f"the vector channel did not run: {mem.channel_status}")
                    rows.append(
                        {
                            "id": query.id,
                            "text": query.text,
                            "answers": list(query.answers),
                            "hits": [
                                {"id": h.id, "relevance": h.relevance, "cosine": h.factors.get("vector", 0.0)}
                                for h in hits
                            ],
                        }
                    )
            finally:
                mem.close()
        data[name] = {"queries": rows, "lessons": {x.id: embedding_text(x) for x in corpus.lessons}}
        print(name, len(rows), "queries", flush=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / "candidates.json").write_text(json.dumps(data))


def metrics(rows: Rows, returned: Sequence[list[str]]) -> Metrics:
    """R@1 (all), MRR (answerable), answerable with nothing, no answer given a block: as bench_quality."""
    r1, rr, none, block = [], [], [], []
    for row, ids in zip(rows, returned, strict=True):
        answers = set(row["answers"])
        if answers:
            rank = next((n for n, id in enumerate(ids[: bq.K], start=1) if id in answers), None)
            r1.append(rank == 1)
            rr.append(1 / rank if rank else 0.0)
            none.append(not ids)
        else:
            r1.append(not ids)
            block.append(bool(ids))
    return float(np.mean(r1)), float(np.mean(rr)), float(np.mean(none)), float(np.mean(block))


Decide = Callable[[dict[str, Any], dict[str, float], float], list[str]]


def shipped(row: dict[str, Any], ce: dict[str, float], t: float) -> list[str]:
    return [h["id"] for h in row["hits"] if h["relevance"] >= t]


def cross_encoder(row: dict[str, Any], ce: dict[str, float], t: float) -> list[str]:
    scored = sorted(((ce[h["id"]], h["id"]) for h in row["hits"][:TOP]), reverse=True)
    return [id for score, id in scored if score >= t]


def blended(row: dict[str, Any], ce: dict[str, float], t: float) -> list[str]:
    mix = [(0.5 / (1 + np.exp(-ce[h["id"]])) + 0.5 * h["relevance"], h["id"]) for h in row["hits"][:TOP]]
    return [id for score, id in sorted(mix, reverse=True) if score >= t]


def measure(data: dict[str, Any], scores: dict[str, Any], name: str, decide: Decide, t: float) -> Metrics:
    rows = data[name]["queries"]
    return metrics(rows, [decide(row, scores[name].get(row["id"], {}), t) for row in rows])


def choose(data: dict[str, Any], scores: dict[str, Any], names: Sequence[str], decide: Decide) -> float:
    grid = np.linspace(-8, 8, 321) if decide is cross_encoder else np.linspace(0, 1, 201)
    best: tuple[float, float] | None = None
    for t in grid:
        runs = [measure(data, scores, name, decide, float(t)) for name in names]
        none, block = float(np.mean([m[2] for m in runs])), float(np.mean([m[3] for m in runs]))
        if block <= CAP and (best is None or none < best[1]):
            best = (float(t), none)
    if best is None:
        raise RuntimeError("no threshold keeps the blocks under the cap")
    return best[0]


def line(name: str, m: Metrics) -> str:
    return f"  {name:18s} R@1 {m[0]:.3f}  MRR {m[1]:.3f}  no result {m[2]:6.1%}  given a block {m[3]:6.1%}"


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    pos, neg = scores[labels], scores[~labels]
    return float(np.mean(pos[:, None] > neg[None, :]) + 0.5 * np.mean(pos[:, None] == neg[None, :]))


def logistic(x: np.ndarray, y: np.ndarray, l2: float = 1e-2) -> Callable[[np.ndarray], np.ndarray]:
    """A logistic fit by Newton's method on standardized features."""
    mu, sd = x.mean(0), x.std(0) + 1e-9

    def design(v: np.ndarray) -> np.ndarray:
        return np.hstack([(v - mu) / sd, np.ones((len(v), 1))])

    z, w = design(x), np.zeros(x.shape[1] + 1)
    for _ in range(100):
        p = 1 / (1 + np.exp(-z @ w))
        gradient = z.T @ (p - y) + l2 * np.r_[w[:-1], 0]
        hessian = (z * (p * (1 - p))[:, None]).T @ z + l2 * np.eye(len(w))
        w -= np.linalg.solve(hessian, gradient)
    return lambda v: 1 / (1 + np.exp(-design(v) @ w))


def features(data: dict[str, Any], scores: dict[str, Any], name: str) -> tuple[np.ndarray, np.ndarray]:
    """Per request: the best candidate's blended relevance, the highest cosine, the highest cross-encoder score."""
    x, y = [], []
    for row in data[name]["queries"]:
        hits, ce = row["hits"], scores[name].get(row["id"], {})
        best = hits[0] if hits else {"relevance": 0.0}
        x.append(
            [
                best["relevance"],
                max((h["cosine"] for h in hits), default=0.0),
                max((ce[h["id"]] for h in hits[:TOP]), default=-10.0),
            ]
        )
        y.append(bool(row["answers"]))
    return np.array(x), np.array(y)


def report(folder: Path) -> None:
    data = json.loads((folder / "candidates.json").read_text())
    scores = json.loads((folder / "scores.json").read_text())
    names = [name for name in CORPORA if name in data]
    for label, decide in (("shipped floor", shipped), ("cross-encoder", cross_encoder), ("blend 0.5/0.5", blended)):
        t = SHIPPED_FLOOR if decide is shipped else choose(data, scores, ["quality_corpus"], decide)
        where = "shipped" if decide is shipped else "chosen on the project corpus"
        print(f"{label}, threshold {t:.3f} ({where})")
        for name in names:
            print(line(name, measure(data, scores, name, decide, t)))
        if decide is not shipped:
            print(f"{label}, threshold chosen on the other five corpora")
            for name in names:
                t = choose(data, scores, [n for n in names if n != name], decide)
                print(line(name, measure(data, scores, name, decide, t)) + f"  (threshold {t:.3f})")
    print("no floor, order only: MRR of the shipped order / of the cross-encoder's order")
    for name in names:
        a, b = measure(data, scores, name, shipped, -1.0), measure(data, scores, name, cross_encoder, -99.0)
        print(f"  {name:18s} {a[1]:.3f} / {b[1]:.3f}")
    print("AUC (a request with an answer against one without), fitted on the other five corpora:")
    for label, columns in (("best relevance", [0]), ("+ highest cosine", [0, 1]), ("+ cross-encoder", [0, 1, 2])):
        cells = []
        for name in names:
            parts = [features(data, scores, n) for n in names if n != name]
            model = logistic(np.vstack([p[0][:, columns] for p in parts]), np.concatenate([p[1] for p in parts]))
            x, y = features(data, scores, name)
            cells.append(auc(model(x[:, columns]), y))
        print(f"  {label:18s}" + " ".join(f"{c:.3f}" for c in cells) + f"  mean {np.mean(cells):.3f}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=("dump", "report"))
    parser.add_argument("--out", "--data", dest="folder", type=Path, default=Path("/tmp/ce"))
    args = parser.parse_args(argv)
    if args.step == "dump":
        dump(args.folder)
    else:
        report(args.folder)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
