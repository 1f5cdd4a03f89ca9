"""Rank: order eligible candidates by relevance and structured factors. Weights are data.

Fails closed: a candidate outside the caller's scope reaching this function empties the
result. A candidate below the relevance floor is dropped: no block beats a wrong block.

Two modes. Text only (no vector channel this search): relevance is the share of the query's
terms a record holds, floor ``min_relevance``; a record holding nothing of the query but the numbers of
its attempts ("Worked: attempt 0") is not relevant. Hybrid (``hybrid=True``: the candidates carry
cosines, see ``core.fusion``): relevance blends that share (counted against at most
``coverage_terms`` of the query's terms) with the cosine, floor ``min_hybrid_relevance``; the
order is by that blend (``fusion="score"``) or by reciprocal rank fusion of the two channels'
orders (``fusion="rrf"``), then the structured factors. In hybrid mode a record holding every code
the query names (``core.text.codes``: ``NU1004``) passes the floor, and a query mostly in a script
the embedder does not know (``core.text.mostly_latin``) must also pass the text rule. Coverage
compares stems with accents dropped (``core.text.unaccented``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from afteraction.core.fusion import hybrid_relevance, rrf
from afteraction.core.text import codes, mostly_latin, query_stems, searchable, stems, unaccented
from afteraction.model import Candidate, Experience, Hit, Scope, Status

__all__ = ["DEFAULT_WEIGHTS", "Weights", "rank", "relevance"]


@dataclass(frozen=True, slots=True)
class Weights:
    """How the factors combine. ``min_relevance`` is the floor below which a candidate is
    not relevant at all; ``min_confidence`` the eligibility floor passed to the store.

    Hybrid search (see ``core.fusion``): relevance = ``text_share`` × term coverage +
    (1 − ``text_share``) × cosine, floor ``min_hybrid_relevance``, where the coverage counts the
    terms matched against at most ``coverage_terms`` of the query's terms (a long, chatty request is
    not judged less relevant for its length); ``fusion`` orders by that blend
    ("score") or by reciprocal rank fusion with constant ``rrf_k`` ("rrf"). Measured on the
    quality benchmark, see ``docs/retrieval.md``."""

    relevance: float = 0.6
    confidence: float = 0.15
    recency: float = 0.1
    status: float = 0.05
    environment: float = 0.1
    min_relevance: float = 0.3
    min_confidence: float = 0.5
    half_life_days: float = 90.0
    text_share: float = 0.2
    min_hybrid_relevance: float = 0.355
    coverage_terms: int = 8
    fusion: Literal["score", "rrf"] = "score"
    rrf_k: int = 60

    def __post_init__(self) -> None:
        if not 0.0 <= self.text_share <= 1.0:
            raise ValueError(f"Weights.text_share must be between 0 and 1, got {self.text_share}")
        if self.fusion not in ("score", "rrf"):
            raise ValueError(f"Weights.fusion must be 'score' or 'rrf', got {self.fusion!r}")
        if isinstance(self.coverage_terms, bool) or not isinstance(self.coverage_terms, int) or self.coverage_terms < 1:
            raise ValueError(f"Weights.coverage_terms must be an integer of at least 1, got {self.coverage_terms!r}")
        if self.rrf_k < 0:
            raise ValueError(f"Weights.rrf_k must be at least 0, got {self.rrf_k}")


DEFAULT_WEIGHTS = Weights()


def relevance(
    query_stems: frozenset[str],
    experience: Experience,
    record_stems: frozenset[str] | None = None,
    *,
    max_terms: int | None = None,
) -> float:
    """The share of the query's content terms that the record contains (after stemming). With
    ``max_terms``, the share of at most that many: a record holding ``max_terms`` of a longer
    query's terms covers it fully."""
    if not query_stems:
        return 0.0
    if record_stems is None:
        record_stems = stems(" ".join(searchable(experience)))
    wanted = len(query_stems) if max_terms is None else min(len(query_stems), max_terms)
    return min(1.0, len(_held(query_stems, record_stems)) / wanted)


def _held(query_stems: frozenset[str], record_stems: frozenset[str]) -> frozenset[str]:
    """The query's stems the record holds, accents aside (``facturacion`` holds ``facturación``)."""
    held = query_stems & record_stems
    if len(held) < len(query_stems) and not ("".join(query_stems) + "".join(record_stems)).isascii():
        return unaccented(query_stems) & unaccented(record_stems)
    return held


#: The numbers every distilled lesson says of its attempts (``core.distill``: "Verified after 2 attempts.
#: Failed: attempt 0 — … Worked: attempt 1."): no request means them.
_ATTEMPT_NUMBERS = re.compile(r"\bafter \d+ attempts?\b|\battempt \d+\b", re.IGNORECASE)


def _only_attempt_numbers(query_stems: frozenset[str], record_stems: frozenset[str], experience: Experience) -> bool:
    """Whether the record holds nothing of the query but numbers its lesson gives only as attempt counts
    (h18: every lesson's "Verified after 1 attempt. Worked: attempt 0." held "order 1 pizza with 0
    toppings" at coverage 0.4). A number the record says elsewhere (``429``, ``5432``, a ticket) counts."""
    held = _held(query_stems, record_stems)
    if not held or not all(stem.isdigit() for stem in held):
        return False
    said = stems(_ATTEMPT_NUMBERS.sub(" ", " ".join(searchable(experience))))
    return not (held & said)


def _environment_match(query_env: Mapping[str, str] | None, experience: Experience) -> float:
    """1 when every key the query names matches the record's environment, 0 when none does;
    0.5 (neutral) when either side says nothing."""
    if not query_env:
        return 0.5
    record_env = experience.scenario.environment if experience.scenario is not None else {}
    shared = [key for key in query_env if key in record_env]
    if not record_env or not shared:
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
    hybrid: bool = False,
    cosine_bound: float | None = None,
) -> list[Hit]:
    """Relevant, eligible candidates as Hits, best first (ties broken by id). ``hybrid``: the
    vector channel ran, so candidates carry cosines; one that does not is judged by
    ``cosine_bound`` (see ``core.fusion.cosine_bound``), or by the text rule when that is None."""
    if any(not scope.sees(c.experience.scope) for c in candidates):
        return []
    wanted = query_stems(query)
    named = codes(wanted)  # a record holding every code the request names (``NU1004``) is about it
    latin = mostly_latin(query)  # else the cosine says little (an English model): the terms must match
    best_text = max((c.text_score for c in candidates), default=0.0)
    kept: list[tuple[Candidate, float, dict[str, float]]] = []
    for candidate in candidates:
        experience = candidate.experience
        if experience.eligibility(now, min_confidence=weights.min_confidence) is not None:
            continue
        held = candidate.stems if candidate.stems is not None else stems(" ".join(searchable(experience)))
        coverage = relevance(wanted, experience, held)
        text = candidate.text_score / best_text if best_text > 0 else 0.0
        lexical = 0.8 * coverage + 0.2 * max(0.0, text)
        cosine = candidate.vector_score if candidate.vector_score is not None else cosine_bound
        if not hybrid or cosine is None:
            if coverage < weights.min_relevance or coverage == 0.0 or _only_attempt_numbers(wanted, held, experience):
                continue
            kept.append((candidate, lexical, {"relevance": lexical}))
            continue
        covered = relevance(wanted, experience, held, max_terms=weights.coverage_terms)
        blended = hybrid_relevance(covered, cosine, weights.text_share)
        if not latin and coverage < weights.min_relevance:
            continue
        if blended < weights.min_hybrid_relevance and not (named and named <= _held(named, held)):
            continue
        kept.append((candidate, blended, {"relevance": blended, "text": lexical, "vector": cosine}))
    if hybrid and weights.fusion == "rrf" and kept:
        by_text = sorted(kept, key=lambda k: (-k[2].get("text", k[2]["relevance"]), k[0].experience.id))
        by_vector = sorted((k for k in kept if "vector" in k[2]), key=lambda k: (-k[2]["vector"], k[0].experience.id))
        fused = rrf([[k[0].experience.id for k in by_text], [k[0].experience.id for k in by_vector]], weights.rrf_k)
        for candidate, _, factors in kept:
            factors["relevance"] = fused[candidate.experience.id]
    hits: list[Hit] = []
    for candidate, shown, factors in kept:
        experience = candidate.experience
        factors.update(
            confidence=experience.confidence,
            recency=_recency(experience, now, weights.half_life_days),
            status=1.0 if experience.status is Status.REINFORCED else 0.0,
            environment=_environment_match(env, experience),
        )
        score = (
            weights.relevance * factors["relevance"]
            + weights.confidence * factors["confidence"]
            + weights.recency * factors["recency"]
            + weights.status * factors["status"]
            + weights.environment * factors["environment"]
        )
        hits.append(Hit(experience, score, shown, factors))
    hits.sort(key=lambda h: (-h.score, h.experience.id))
    return hits
