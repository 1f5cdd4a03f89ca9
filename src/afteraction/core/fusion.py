"""Fusion: one candidate list from the text and vector channels, and the relevance they share.

Pure. The text channel (BM25 over stems) and the vector channel (cosine of embeddings) each
return their best candidates; ``fuse`` merges them by record, keeping what each channel knows
(the record's stems and BM25 score, its cosine). Relevance then blends the two measures:

    relevance = text_share × coverage + (1 − text_share) × max(0, cosine)

where coverage is the share of the query's stems the record holds, counted against at most
``Weights.coverage_terms`` of them (so that words around a long request do not dilute it). One
floor on that blend lets a paraphrase through on its cosine and a reworded exact match through on
its coverage, and keeps out a record that is only loosely similar in both (see
``docs/retrieval.md``).

A record with no cosine (the vector channel did not return it) is judged by ``cosine_bound``:
when the vector channel's list was full, any record outside it is at most as similar as the
last one in it, so that cosine stands in; when the list was not full, every record with a
vector is in it, so the record has none yet (written moments ago, not yet indexed) and is
judged by the text rule alone.

``rrf`` is reciprocal rank fusion over the two channels' orders, kept as the alternative
ordering (``Weights.fusion = "rrf"``) that the benchmark compares.
"""

from __future__ import annotations

from collections.abc import Sequence

from afteraction.model import Candidate

__all__ = ["cosine_bound", "fuse", "hybrid_relevance", "rrf"]


def _key(candidate: Candidate) -> tuple[str, str]:
    return candidate.experience.scope.tenant, candidate.experience.id


def fuse(text: Sequence[Candidate], vector: Sequence[Candidate]) -> list[Candidate]:
    """The union of both channels' candidates, one per record (text order first, then the
    vector-only ones in their order), each carrying its BM25 score, stems and cosine."""
    cosines = {_key(c): c for c in vector}
    merged: list[Candidate] = []
    seen: set[tuple[str, str]] = set()
    for candidate in text:
        key = _key(candidate)
        if key in seen:
            continue
        seen.add(key)
        other = cosines.get(key)
        if other is None:
            merged.append(candidate)
            continue
        merged.append(
            Candidate(
                candidate.experience,
                candidate.text_score,
                candidate.stems if candidate.stems is not None else other.stems,
                other.vector_score,
            )
        )
    for candidate in vector:
        key = _key(candidate)
        if key not in seen:
            seen.add(key)
            merged.append(Candidate(candidate.experience, 0.0, candidate.stems, candidate.vector_score))
    return merged


def cosine_bound(vector: Sequence[Candidate], limit: int) -> float | None:
    """What a record missing from the vector channel's ``limit`` results may be assumed to score:
    the lowest cosine returned when the list is full, None when it is not (the record has no vector)."""
    if limit <= 0 or len(vector) < limit:
        return None
    return min((c.vector_score for c in vector if c.vector_score is not None), default=None)


def hybrid_relevance(coverage: float, cosine: float, text_share: float) -> float:
    """The blend of the query's term coverage and the embedding cosine (negative cosines count 0)."""
    return text_share * coverage + (1.0 - text_share) * max(0.0, cosine)


def rrf(orders: Sequence[Sequence[str]], k: int) -> dict[str, float]:
    """Reciprocal rank fusion: each id scores Σ 1 / (k + rank) over the orders it appears in
    (rank 1 first), scaled so that first in every order is 1."""
    if k < 0:
        raise ValueError(f"rrf k must be at least 0, got {k}")
    scores: dict[str, float] = {}
    for order in orders:
        for rank, id in enumerate(order, start=1):
            scores[id] = scores.get(id, 0.0) + 1.0 / (k + rank)
    top = len(orders) / (k + 1) if orders else 1.0
    return {id: score / top for id, score in scores.items()}
