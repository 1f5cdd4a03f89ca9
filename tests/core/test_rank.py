from __future__ import annotations

from datetime import timedelta

from afteraction.core.rank import Weights, rank, relevance
from afteraction.core.text import stems
from afteraction.model import Candidate, Scenario, Scope, Status
from afteraction.testing import make_experience
from tests.builders import ACME, OTHER, T0


def cand(task: str, *, score: float = 1.0, scope: Scope = ACME, **fields: object) -> Candidate:
    return Candidate(make_experience(task, scope=scope, **fields), score)  # type: ignore[arg-type]


def test_foreign_scope_row_empties_the_result() -> None:
    candidates = [cand("refund stuck in pending"), cand("refund stuck in pending again", scope=OTHER)]
    assert rank("refund stuck pending", candidates, scope=ACME, now=T0) == []


def test_irrelevant_candidates_are_dropped() -> None:
    candidates = [cand("Refund ticket 42 is stuck in pending"), cand("Rotate the TLS certificate on the edge")]
    hits = rank("refund stuck in pending", candidates, scope=ACME, now=T0)
    assert [h.experience.task for h in hits] == ["Refund ticket 42 is stuck in pending"]
    assert rank("book a meeting room for Thursday", candidates, scope=ACME, now=T0) == []


def test_stemming_matches_word_forms() -> None:
    exp = make_experience("Deployment timeouts on the staging cluster", scope=ACME)
    assert relevance(stems("deploys were timing out"), exp) > 0


def test_ineligible_rows_are_never_ranked() -> None:
    candidates = [
        cand("refund stuck in pending", status=Status.QUARANTINED),
        cand("refund stuck in pending x", confidence=0.4),
        cand("refund stuck in pending y", expires_at=T0),
    ]
    assert rank("refund stuck pending", candidates, scope=ACME, now=T0) == []


def test_factors_order_ties_confidence_recency_status_environment() -> None:
    base = "refund stuck in pending"
    low = cand(base, id="exp_low", confidence=0.6)
    high = cand(base, id="exp_high", confidence=0.9)
    assert [h.id for h in rank(base, [low, high], scope=ACME, now=T0)] == ["exp_high", "exp_low"]
    old = cand(base, id="exp_old", created_at=T0 - timedelta(days=400))
    new = cand(base, id="exp_new", created_at=T0 - timedelta(days=1))
    assert [h.id for h in rank(base, [old, new], scope=ACME, now=T0)] == ["exp_new", "exp_old"]
    reinforced = cand(base, id="exp_r", status=Status.REINFORCED)
    validated = cand(base, id="exp_v")
    assert rank(base, [validated, reinforced], scope=ACME, now=T0)[0].id == "exp_r"
    mac = cand(base, id="exp_mac", scenario=Scenario(task=base, environment={"os": "macos"}))
    linux = cand(base, id="exp_linux", scenario=Scenario(task=base, environment={"os": "linux"}))
    assert rank(base, [mac, linux], scope=ACME, now=T0, env={"os": "linux"})[0].id == "exp_linux"


def test_weights_are_data() -> None:
    old = T0 - timedelta(days=900)
    candidates = [
        cand("refund stuck in pending", id="exp_a", confidence=0.6),
        cand("refund stuck in pending", id="exp_b", confidence=0.9, created_at=old),
    ]
    by_recency = Weights(relevance=0.1, confidence=0.0, recency=1.0, status=0.0, environment=0.0)
    by_confidence = Weights(relevance=0.1, confidence=1.0, recency=0.0, status=0.0, environment=0.0)
    assert rank("refund stuck pending", candidates, scope=ACME, now=T0, weights=by_recency)[0].id == "exp_a"
    assert rank("refund stuck pending", candidates, scope=ACME, now=T0, weights=by_confidence)[0].id == "exp_b"
    strict = Weights(min_relevance=0.9)
    assert rank("refund stuck pending for customer", candidates, scope=ACME, now=T0, weights=strict) == []


def test_single_letters_are_not_content() -> None:
    from afteraction.core.text import content_terms

    assert content_terms("the team's x-ray took 5 s on node 2") == ["team", "ray", "took", "5", "node", "2"]
