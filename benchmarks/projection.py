"""Deterministic stand-in embeddings for latency benchmarks at sizes no real embedder reaches here.

Embedding a million lessons with the bundled MiniLM at ~250 texts/s on this machine would take
over an hour, so the PostgreSQL benchmark gives each corpus lesson a vector made by a fixed
random projection, of the same dimension (384) and unit length as MiniLM's:

- every word (lower-cased run of letters and digits) has a fixed Gaussian vector, seeded by the
  SHA-256 of the word; a text's vector is the sum of its words' vectors over sqrt(words);
- a lesson's vector is ``topic + 0.7 × text(task and first symptom) + 0.3 × noise``, normalized:
  the topic's own fixed Gaussian vector makes lessons of one topic cluster, as real embeddings
  of texts on one subject do, the words spread them inside the cluster, the noise (seeded by
  the lesson's index) keeps near-duplicate tasks apart;
- a query's vector is the projection of its words alone (the ``Projection`` embedder, which
  ``Memory`` calls as it would call MiniLM: ~0.1 ms, against MiniLM's ~4 ms per query).

So the HNSW index meets clustered, MiniLM-shaped data; the rankings say nothing about quality
(``bench_quality.py`` does that with the real embedder).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from functools import lru_cache

import corpus
import numpy as np

from afteraction import Experience
from afteraction.core.text import embedding_text

__all__ = ["DIM", "MODEL", "Projection", "lesson_vector", "lesson_vectors"]

DIM = 384
MODEL = "bench-projection@1"
_WORD = re.compile(r"[a-z0-9]+")


@lru_cache(maxsize=200_000)
def _gaussian(key: str) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).standard_normal(DIM).astype(np.float32) / np.float32(DIM**0.5)


def _text(text: str) -> np.ndarray:
    words = _WORD.findall(text.lower())
    if not words:
        return np.zeros(DIM, dtype=np.float32)
    return np.sum([_gaussian(f"w:{w}") for w in words], axis=0) / np.float32(len(words) ** 0.5)


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return vector / np.float32(norm) if norm > 0 else _gaussian("empty")


def lesson_vector(case: corpus.Case, experience: Experience) -> np.ndarray:
    """The vector of one corpus lesson (``experience`` is ``corpus.experience(case)``)."""
    noise = np.random.default_rng(case.index).standard_normal(DIM).astype(np.float32) / np.float32(DIM**0.5)
    return _unit(_gaussian(f"t:{case.topic}") + 0.7 * _text(embedding_text(experience)) + 0.3 * noise)


def lesson_vectors(start: int, n: int) -> list[tuple[str, str, str]]:
    """(tenant, id, vector literal) of corpus lessons ``start`` .. ``start + n - 1``."""
    out = []
    for case in corpus.cases(n, start=start):
        experience = corpus.experience(case)
        vector = lesson_vector(case, experience)
        out.append((experience.scope.tenant, experience.id, "[" + ",".join(f"{x:.6g}" for x in vector) + "]"))
    return out


class Projection:
    """An ``Embedder`` giving queries the projection of their words."""

    model_id = MODEL
    dimension = DIM

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [_unit(_text(text)).tolist() for text in texts]
