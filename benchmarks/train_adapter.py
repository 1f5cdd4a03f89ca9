"""Train the default embedder's adapter: a linear map on MiniLM's vectors, learned from lessons and requests.

all-MiniLM-L6-v2 gives a request and the lesson that answers it in other words ("our event readers keep
reshuffling who owns which partition" → "Consumers of the orders topic rebalance in a loop") about the same
cosine as a request and a close neighbour that does not answer it. The adapter is one 384 × 384 matrix ``W``
applied to every vector, queries and lessons alike (then unit length again), trained so that a request's
own lesson is nearer than every other and than a fixed bar that unrelated requests and near neighbours stay
under. It ships as ``afteraction/embed/data/<NAME>.npy``; ``afteraction.embed.adapter`` applies it.

The training set, ``benchmarks/adapter_training/*.json``, was written for this purpose only: 112 clusters of
5 near-neighbour lessons (the same system, five different problems), five requests per lesson (a paraphrase
sharing no content word, other word forms, filler-heavy, a long messy ticket, one leaning on a sibling's
words) and 280 unrelated requests, across infrastructure, data systems, developer tools, hosts, business
applications and operations. Its writers did not see the quality corpora (``quality_*.json``), so those stay
fit to judge the result.

The loss, full batch, Adam, ``W`` starting at the identity:
- InfoNCE over every lesson (temperature ``TAU``): the request's own lesson first;
- a pairwise softplus (``BETA``, ``MARGIN``, temperature ``TAU2``) between every request's cosine with its
  own lesson and the highest cosine of each "no answer" case: a request's siblings with its own lesson
  hidden (a request about a lesson in another scope, whose neighbour is visible), and each unrelated request;
- ``LAMBDA`` · ‖W − I‖² / 2, so the map stays near the model it adapts.

The settings were chosen on the training set alone, holding out a quarter of its clusters (``--validate``
prints that split's figures); the quality corpora were used only after, to choose the blend and floor of
``Weights`` (``docs/retrieval.md``). Deterministic: no random initialization or sampling.

    .venv/bin/python benchmarks/train_adapter.py              # writes src/afteraction/embed/data/<NAME>.npy
    .venv/bin/python benchmarks/train_adapter.py --validate   # the held-out clusters' figures, nothing written
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from afteraction.core.text import EMBED_CHARS
from afteraction.embed.adapter import ADAPTER_NAME, ADAPTER_PATH
from afteraction.embed.minilm import MiniLM

HERE = Path(__file__).resolve().parent
DATA = HERE / "adapter_training"
KINDS = ("paraphrase", "morphology", "stopword_heavy", "realistic", "distractor")
LAMBDA, TAU, BETA, MARGIN, TAU2, STEPS, RATE = 0.3, 0.05, 3.0, 0.1, 0.05, 100, 0.005

Matrix = npt.NDArray[np.float64]


@dataclass
class TrainingSet:
    lessons: list[dict[str, str]]  # id, cluster, text
    requests: list[dict[str, str]]  # lesson, kind, text, cluster
    unrelated: list[str]


def load(paths: Sequence[Path]) -> TrainingSet:
    """Read and check the training files; ``ValueError`` names the file and what is wrong."""
    found = TrainingSet([], [], [])
    for path in paths:
        data = json.loads(path.read_text(encoding="utf-8"))
        for number, cluster in enumerate(data["clusters"]):
            name = f"{path.stem}/{number}"
            ids = {lesson["id"] for lesson in cluster["lessons"]}
            for lesson in cluster["lessons"]:
                text = f"{lesson['task'].strip()}\n{lesson['symptom'].strip()}"[:EMBED_CHARS]
                found.lessons.append({"id": lesson["id"], "cluster": name, "text": text})
            for request in cluster["queries"]:
                if request["lesson"] not in ids or request["kind"] not in KINDS:
                    where = f"{path}: cluster {number}: request {request['text'][:40]!r}"
                    raise ValueError(f"{where} names no lesson of its cluster or no known kind")
                found.requests.append({**request, "cluster": name})
        found.unrelated.extend(data.get("unrelated", []))
    if len({lesson["id"] for lesson in found.lessons}) != len(found.lessons):
        raise ValueError("lesson ids are not unique across the training files")
    return found


class Vectors:
    """The training set as base-model vectors: lessons ``L``, requests ``Q``, unrelated ``U``."""

    def __init__(self, data: TrainingSet, embed: Any) -> None:
        self.L = np.asarray(embed([lesson["text"] for lesson in data.lessons]), dtype=np.float64)
        self.Q = np.asarray(embed([request["text"] for request in data.requests]), dtype=np.float64)
        self.U = np.asarray(embed(data.unrelated), dtype=np.float64).reshape(-1, self.L.shape[1])
        index = {lesson["id"]: n for n, lesson in enumerate(data.lessons)}
        self.answer = np.array([index[request["lesson"]] for request in data.requests])
        clusters = np.array([lesson["cluster"] for lesson in data.lessons])
        self.siblings = np.array([clusters == request["cluster"] for request in data.requests])
        self.siblings[np.arange(len(data.requests)), self.answer] = False


def _unit(x: Matrix) -> tuple[Matrix, Matrix]:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / norms, norms


def _through_unit(grad: Matrix, unit: Matrix, norms: Matrix) -> Matrix:
    """The gradient of a function of ``x / |x|`` with respect to ``x``."""
    return (grad - np.sum(grad * unit, axis=1, keepdims=True) * unit) / norms


def train(v: Vectors, steps: int = STEPS) -> Matrix:
    """The map ``W`` (see the module docstring); gradients by hand, Adam, full batch."""
    n = len(v.answer)
    rows = np.arange(n)
    eye = np.eye(v.L.shape[1])
    w = eye.copy()
    first, second = np.zeros_like(w), np.zeros_like(w)
    for step in range(1, steps + 1):
        (qh, qn), (lh, ln), (uh, un) = _unit(v.Q @ w.T), _unit(v.L @ w.T), _unit(v.U @ w.T)
        cos = qh @ lh.T
        z = cos / TAU
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        g_cos = p / TAU / n
        g_cos[rows, v.answer] -= 1 / TAU / n
        own = cos[rows, v.answer]
        hidden = np.where(v.siblings, cos, -9.0)
        near = hidden.argmax(axis=1)
        cos_u = uh @ lh.T
        far = cos_u.argmax(axis=1)
        negatives = np.concatenate([hidden[rows, near], cos_u[np.arange(len(far)), far]])
        s = 1 / (1 + np.exp(-(negatives[None, :] - own[:, None] + MARGIN) / TAU2))
        scale = BETA / s.size / TAU2
        g_cos[rows, v.answer] -= s.sum(axis=1) * scale
        g_cos[rows, near] += s.sum(axis=0)[:n] * scale
        g_u = np.zeros_like(cos_u)
        g_u[np.arange(len(far)), far] = s.sum(axis=0)[n:] * scale
        grad = (
            _through_unit(g_cos @ lh, qh, qn).T @ v.Q
            + _through_unit(g_cos.T @ qh + g_u.T @ uh, lh, ln).T @ v.L
            + _through_unit(g_u @ lh, uh, un).T @ v.U
            + LAMBDA * (w - eye)
        )
        first = 0.9 * first + 0.1 * grad
        second = 0.999 * second + 0.001 * grad**2
        w -= RATE * (first / (1 - 0.9**step)) / (np.sqrt(second / (1 - 0.999**step)) + 1e-8)
    return w


def figures(v: Vectors, w: Matrix) -> dict[str, float]:
    """R@1 among all lessons; the share of requests whose own lesson is first and above the bar that
    90% of the "no answer" cases stay under ("kept"); how often an own lesson beats a "no answer" case (AUC)."""
    (qh, _), (lh, _), (uh, _) = _unit(v.Q @ w.T), _unit(v.L @ w.T), _unit(v.U @ w.T)
    cos = qh @ lh.T
    rows = np.arange(len(v.answer))
    first = cos.argmax(axis=1) == v.answer
    own = cos[rows, v.answer]
    negatives = np.concatenate([np.where(v.siblings, cos, -9.0).max(axis=1), (uh @ lh.T).max(axis=1)])
    bar = float(np.quantile(negatives, 0.9))
    return {
        "r1": round(float(first.mean()), 3),
        "kept": round(float(((own >= bar) & first).mean()), 3),
        "auc": round(float((own[:, None] > negatives[None, :]).mean()), 3),
    }


def split(data: TrainingSet) -> tuple[TrainingSet, TrainingSet]:
    """Every fourth cluster (in file order) held out, with the last quarter of the unrelated requests."""
    clusters = sorted({lesson["cluster"] for lesson in data.lessons})
    held = set(clusters[3::4])
    cut = len(data.unrelated) * 3 // 4

    def part(keep: bool) -> TrainingSet:
        return TrainingSet(
            [lesson for lesson in data.lessons if (lesson["cluster"] in held) != keep],
            [request for request in data.requests if (request["cluster"] in held) != keep],
            data.unrelated[:cut] if keep else data.unrelated[cut:],
        )

    return part(True), part(False)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--validate", action="store_true", help="train on 3/4 of the clusters, print the rest's figures"
    )
    parser.add_argument("--output", type=Path, default=ADAPTER_PATH, help="where to write the matrix (.npy)")
    args = parser.parse_args(argv)
    data = load(sorted(DATA.glob("*.json")))
    embed = MiniLM().embed
    print(
        f"train_adapter: {len(data.lessons)} lessons, {len(data.requests)} requests, {len(data.unrelated)} unrelated",
        file=sys.stderr,
    )
    if args.validate:
        fit, held = split(data)
        v_fit, v_held = Vectors(fit, embed), Vectors(held, embed)
        w = train(v_fit)
        eye = np.eye(w.shape[0])
        print(f"held-out clusters, base model: {figures(v_held, eye)}")
        print(f"held-out clusters, adapted:    {figures(v_held, w)}")
        print(f"training clusters, adapted:    {figures(v_fit, w)}")
        return 0
    vectors = Vectors(data, embed)
    w = train(vectors)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    np.save(args.output, w.astype(np.float32))
    digest = hashlib.sha256(args.output.read_bytes()).hexdigest()
    print(f"{ADAPTER_NAME}: {figures(vectors, np.eye(w.shape[0]))} → {figures(vectors, w)}")
    print(f"wrote {args.output} (sha256 {digest}); set ADAPTER_SHA256 in afteraction/embed/adapter.py to it")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
