"""Rank: order eligible candidates by relevance and structured factors. Weights are data.

Fails closed: a candidate outside the caller's scope reaching this function empties the
result. A candidate below the relevance floor is dropped: no block beats a wrong block.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from afteraction.core.text import searchable, stems
from afteraction.model import Candidate, Experience, Hit, Scope, Status

__all__ = ["DEFAULT_WEIGHTS", "Weights", "rank", "relevance"]


@dataclass(frozen=True, slots=True)
class Weights:
    """How the factors combine. ``min_relevance`` is the floor below which a candidate is
    not relevant at all; ``min_confidence`` the eligibility floor passed to the store."""

    relevance: float = 0.6
    confidence: float = 0.15
    recency: float = 0.1
    status: float = 0.05
    environment: float = 0.1
    min_relevance: float = 0.3
    min_confidence: float = 0.5
    half_life_days: float = 90.0


DEFAULT_WEIGHTS = Weights()


def relevance(query_stems: frozenset[str], experience: Experience, record_stems: frozenset[str] | None = None) -> float:
    """The share of the query's content terms that the record contains (after stemming)."""
    if not query_stems:
        return 0.0
    if record_stems is None:
        record_stems = stems(" ".join(searchable(experience)))
    return len(query_stems & record_stems) / len(query_stems)


def _environment_match(query_env: Mapping[str, str] | None, experience: Experience) -> float:
    """1 when every key the query names matches the record's environment, 0 when none does;
    0.5 (neutral) when either side says nothing."""
    record_env = experience.scenario.environment if experience.scenario is not None else {}
    shared = [key for key in (query_env or {}) if key in record_env]
    if not query_env or not record_env or not shared:
        return 0.5
    return sum(1.0 for key in shared if record_env[key] == query_env[key]) / len(shared)


def _recency(experience: Experience, now: datetime, half_life_days: float) -> float:
    age_days = max(0.0, (now - (experience.updated_at or experience.created_at)).total_seconds() / 86_400)
    return math.exp(-math.log(2) * age_days / half_life_days) if half_life_days > 0 else 1.0


def rank(
    query: str,
    candidates: Sequence[Candidate],
    *,
    scope: Scope,
    now: datetime,
    env: Mapping[str, str] | None = None,
    weights: Weights = DEFAULT_WEIGHTS,
) -> list[Hit]:
    """Relevant, eligible candidates as Hits, best first (ties broken by id)."""
    if any(not scope.sees(c.experience.scope) for c in candidates):
        return []
    query_stems = stems(query)
    best_text = max((c.text_score for c in candidates), default=0.0)
    hits: list[Hit] = []
    for candidate in candidates:
        experience = candidate.experience
        if experience.eligibility(now, min_confidence=weights.min_confidence) is not None:
            continue
        coverage = relevance(query_stems, experience, candidate.stems)
        if coverage < weights.min_relevance or coverage == 0.0:
            continue
        text = candidate.text_score / best_text if best_text > 0 else 0.0
        factors = {
            "relevance": 0.8 * coverage + 0.2 * max(0.0, text),
            "confidence": experience.confidence,
            "recency": _recency(experience, now, weights.half_life_days),
            "status": 1.0 if experience.status is Status.REINFORCED else 0.0,
            "environment": _environment_match(env, experience),
        }
        score = (
            weights.relevance * factors["relevance"]
            + weights.confidence * factors["confidence"]
            + weights.recency * factors["recency"]
            + weights.status * factors["status"]
            + weights.environment * factors["environment"]
        )
        hits.append(Hit(experience, score, coverage, factors))
    hits.sort(key=lambda h: (-h.score, h.experience.id))
    return hits
