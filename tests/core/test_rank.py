from __future__ import annotations

from datetime import timedelta

import pytest

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


def test_by_text_a_record_holding_only_the_querys_numbers_is_not_relevant() -> None:
    """h18 #7: every distilled lesson says "Verified after 1 attempt. Worked: attempt 0.", so a text-only
    search for "order 1 pizza with 0 toppings" gave a block of unrelated lessons (2 of 5 terms: 0.4)."""
    lesson = "Verified after 1 attempt. Worked: attempt 0. Checks: [done]."
    candidates = [cand("Book a hotel in Lisbon for two nights", lesson=lesson)]
    assert rank("order 1 pizza with 0 toppings", candidates, scope=ACME, now=T0) == []
    assert len(rank("hotel for 2 nights", [cand("Book a hotel for 2 nights")], scope=ACME, now=T0)) == 1
    assert len(rank("Lisbon 2", [cand("Book a hotel in Lisbon", lesson=lesson)], scope=ACME, now=T0)) == 1


@pytest.mark.parametrize(
    ("query", "task"),
    [  # h26: numbers a lesson says are what a request shares with it
        ("handle 429", "Back off when the payments API answers 429"),
        ("why did my job die with 137", "Container killed with exit code 137"),
        ("can't reach 5432", "Postgres refuses connections on 5432"),
        ("what happened with 48213", "Ticket 48213 refund dispute"),
        ("move to 3.12", "Upgrade the runtime to python 3.12"),
    ],
)
def test_by_text_a_number_the_lesson_says_still_matches(query: str, task: str) -> None:
    lesson = "Verified after 1 attempt. Worked: attempt 0. Checks: [done]."
    assert len(rank(query, [cand(task, lesson=lesson)], scope=ACME, now=T0)) == 1


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


def vcand(task: str, cosine: float | None, **fields: object) -> Candidate:
    return Candidate(make_experience(task, scope=ACME, **fields), 1.0, None, cosine)  # type: ignore[arg-type]


def test_hybrid_lets_a_paraphrase_through_on_its_cosine() -> None:
    paraphrase = vcand("Package feed returns 401 after the token expired", 0.75)
    loose = vcand("Rotate the TLS certificate on the edge", 0.2)
    hits = rank("nightly build cannot pull from our private registry", [paraphrase, loose], scope=ACME, now=T0)
    assert hits == []  # text only: no shared words
    hits = rank(
        "nightly build cannot pull from our private registry", [paraphrase, loose], scope=ACME, now=T0, hybrid=True
    )
    assert [h.experience.task for h in hits] == [paraphrase.experience.task]
    assert hits[0].factors["vector"] == 0.75 and hits[0].relevance == pytest.approx((1 - Weights().text_share) * 0.75)


def test_hybrid_drops_a_record_loosely_similar_in_both_channels() -> None:
    near = vcand("Kafka consumer group falls behind the topic", 0.25)  # 2 of 5 terms, a low cosine
    assert rank("kafka consumers rebalance endlessly after a deploy", [near], scope=ACME, now=T0, hybrid=True) == []


def test_a_record_without_a_cosine_is_judged_by_the_bound_or_by_text() -> None:
    unindexed = vcand("Refund ticket 42 is stuck in pending", None)
    query = "refund stuck pending customer"
    assert len(rank(query, [unindexed], scope=ACME, now=T0, hybrid=True)) == 1  # text rule: 3 of 4 terms
    assert rank(query, [unindexed], scope=ACME, now=T0, hybrid=True, cosine_bound=0.0) == []


def test_rrf_orders_by_agreement_between_the_channels() -> None:
    a = vcand("Refund stuck in pending state", 0.5, id="exp_a")
    b = vcand("Refund stuck", 0.9, id="exp_b")
    weights = Weights(fusion="rrf", confidence=0, recency=0, status=0, environment=0)
    hits = rank("refund stuck in pending state", [a, b], scope=ACME, now=T0, hybrid=True, weights=weights)
    assert {h.id for h in hits} == {"exp_a", "exp_b"}
    assert hits[0].factors["relevance"] == hits[1].factors["relevance"]  # first in one channel each
    with pytest.raises(ValueError, match="fusion"):
        Weights(fusion="max")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="text_share"):
        Weights(text_share=1.5)


def test_coverage_counts_against_at_most_max_terms() -> None:
    record = make_experience("deploy orders api readiness probe timeout helm upgrade", scope=ACME)
    query = stems("deploy orders api readiness probe timeout helm upgrade weekend customers angry manager asking")
    assert len(query) == 13
    assert relevance(query, record) == pytest.approx(8 / 13)
    assert relevance(query, record, max_terms=8) == 1.0
    assert relevance(query, record, max_terms=10) == pytest.approx(8 / 10)
    assert relevance(query, record, max_terms=20) == pytest.approx(8 / 13)
    assert relevance(stems("deploy orders nightly"), record, max_terms=8) == pytest.approx(2 / 3)


def test_hybrid_does_not_hold_a_long_request_against_its_lesson() -> None:
    lesson = vcand("Deployment of orders-api times out waiting for the readiness probe on helm upgrade", 0.25)
    query = (
        "morning folks, our orders api deployment keeps timing out on the readiness probe during the helm "
        "upgrade, customers are complaining, the manager wants an update before lunch, cheers"
    )
    assert len(stems(query)) > 16
    weights = Weights(confidence=0, recency=0, status=0, environment=0)
    [hit] = rank(query, [lesson], scope=ACME, now=T0, hybrid=True, weights=weights)
    assert hit.relevance >= weights.min_hybrid_relevance
    uncapped = Weights(confidence=0, recency=0, status=0, environment=0, coverage_terms=32)
    assert rank(query, [lesson], scope=ACME, now=T0, hybrid=True, weights=uncapped) == []
    short = vcand("Kafka consumer group falls behind the topic", 0.25)  # a short query: the cap changes nothing
    assert rank("kafka consumers rebalance endlessly after a deploy", [short], scope=ACME, now=T0, hybrid=True) == []


def test_coverage_terms_must_be_a_positive_integer() -> None:
    for bad in (0, -1, True, 2.5):
        with pytest.raises(ValueError, match="coverage_terms"):
            Weights(coverage_terms=bad)  # type: ignore[arg-type]


def test_a_text_only_hit_carries_the_relevance_its_score_uses() -> None:
    """Found by a user: without the vector channel ``Hit.relevance`` was the coverage alone, while the
    score used 0.8 × coverage + 0.2 × normalized BM25 (as docs/retrieval.md says)."""
    candidates = [cand("Refund ticket 42 is stuck in pending", score=2.0), cand("Refund stuck", score=0.5)]
    hits = rank("refund ticket stuck in pending", candidates, scope=ACME, now=T0)
    assert len(hits) == 2
    for hit in hits:
        assert hit.relevance == hit.factors["relevance"]
    assert hits[1].relevance == pytest.approx(0.8 * 2 / 4 + 0.2 * 0.25)


def test_a_record_holding_every_code_the_request_names_is_found_however_low_its_cosine() -> None:
    """Found by a user: ``NU1004`` found its lesson by text (coverage 1.0) and lost it once vectors were on
    (cosine 0.1: relevance 0.28 under the floor)."""
    lesson = vcand("dotnet restore fails with NU1004 after the lock file changed", 0.105)
    for query in ("NU1004", "error NU1004", "getting NU1004 on CI"):
        assert [h.experience.task for h in rank(query, [lesson], scope=ACME, now=T0, hybrid=True)] == [
            lesson.experience.task
        ]
    other = vcand("dotnet restore fails with NU1101 for a missing package", 0.105)
    assert rank("NU1004", [other], scope=ACME, now=T0, hybrid=True) == []  # another code: not about it
    weak = vcand("Generate the x509 certificate for the edge proxy", 0.105)
    assert rank("x509 renewal", [weak], scope=ACME, now=T0, hybrid=True) == []  # x509 is a name, not a code


def test_a_request_in_a_script_the_embedder_does_not_know_must_share_its_terms() -> None:
    """Found by a user: with an English model any two Chinese (or Russian) texts score ~0.5, so
    "how to bathe a cat" got the Chinese refund lesson."""
    refund = vcand("退款卡在处理中 订单 42", 0.65)
    assert rank("如何给猫洗澡", [refund], scope=ACME, now=T0, hybrid=True) == []
    russian = vcand("Возврат завис в статусе ожидания", 0.46)
    assert rank("Какая сегодня погода в Москве", [russian], scope=ACME, now=T0, hybrid=True) == []
    hits = rank("Возврат завис снова", [russian], scope=ACME, now=T0, hybrid=True)  # shares its words
    assert [h.experience.task for h in hits] == [russian.experience.task]


def test_a_request_typed_without_accents_covers_a_lesson_written_with_them() -> None:
    """Found by a user: the store matched ``facturacion electronica``, then the ranker dropped it."""
    spanish = cand("Falla la facturación electrónica al timbrar")
    hits = rank("facturacion electronica falla", [spanish], scope=ACME, now=T0)
    assert [h.experience.task for h in hits] == [spanish.experience.task] and hits[0].factors["relevance"] > 0.7
