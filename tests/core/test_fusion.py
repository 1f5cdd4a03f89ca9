"""Fusion: merging the channels' candidates, the blended relevance, the cosine bound, RRF."""

from __future__ import annotations

import pytest

from afteraction.core.fusion import cosine_bound, fuse, hybrid_relevance, rrf
from afteraction.model import Candidate
from afteraction.testing import make_experience
from tests.builders import ACME, OTHER


def test_fuse_keeps_one_candidate_per_record_with_what_each_channel_knows() -> None:
    a, b, c = (make_experience(task, scope=ACME) for task in ("alpha task", "beta task", "gamma task"))
    text = [Candidate(a, 3.0, frozenset({"alpha"})), Candidate(b, 1.0, frozenset({"beta"}))]
    vector = [Candidate(c, 0.0, frozenset({"gamma"}), 0.9), Candidate(a, 0.0, None, 0.7)]
    merged = fuse(text, vector)
    assert [m.experience.id for m in merged] == [a.id, b.id, c.id]
    assert (merged[0].text_score, merged[0].stems, merged[0].vector_score) == (3.0, frozenset({"alpha"}), 0.7)
    assert merged[1].vector_score is None
    assert (merged[2].text_score, merged[2].vector_score) == (0.0, 0.9)


def test_fuse_tells_tenants_apart() -> None:
    mine = make_experience("same task", scope=ACME, id="exp_same")
    theirs = make_experience("same task", scope=OTHER, id="exp_same")
    merged = fuse([Candidate(mine, 1.0)], [Candidate(theirs, 0.0, None, 0.8)])
    assert [(m.experience.scope.tenant, m.vector_score) for m in merged] == [("acme", None), (OTHER.tenant, 0.8)]


def test_the_cosine_bound_is_the_last_cosine_of_a_full_list_only() -> None:
    exps = [make_experience(f"task {i}", scope=ACME) for i in range(3)]
    found = [Candidate(e, 0.0, None, s) for e, s in zip(exps, (0.9, 0.6, 0.4), strict=True)]
    assert cosine_bound(found, 3) == 0.4
    assert cosine_bound(found, 5) is None  # not full: every record with a vector is in it
    assert cosine_bound([], 0) is None


def test_hybrid_relevance_blends_and_ignores_negative_cosines() -> None:
    assert hybrid_relevance(1.0, 0.5, 0.4) == pytest.approx(0.4 + 0.3)
    assert hybrid_relevance(0.5, -0.8, 0.4) == pytest.approx(0.2)
    assert hybrid_relevance(0.0, 1.0, 0.0) == 1.0


def test_rrf_rewards_agreement_and_scales_to_one() -> None:
    scores = rrf([["a", "b", "c"], ["b", "a"]], k=60)
    assert scores["a"] == scores["b"] == pytest.approx((1 / 61 + 1 / 62) / (2 / 61))
    assert scores["c"] < scores["a"]
    assert rrf([["x"], ["x"]], k=0) == {"x": 1.0}
    with pytest.raises(ValueError, match="k"):
        rrf([["x"]], k=-1)
