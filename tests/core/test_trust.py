from __future__ import annotations

from afteraction.core.trust import confidence, record_outcome
from afteraction.model import Status
from afteraction.testing import make_experience
from tests.builders import ACME, T0


def test_laplace_confidence() -> None:
    assert confidence(1, 0) == 2 / 3
    assert confidence(0, 0) == 0.5
    assert confidence(0, 1) == 1 / 3


def test_outcomes_reinforce_and_contest() -> None:
    e = make_experience("task", scope=ACME)
    for _ in range(2):
        e = record_outcome(e, True, T0)
    assert e.status is Status.REINFORCED and e.supporting == 3 and e.confidence == 4 / 5
    for _ in range(4):
        e = record_outcome(e, False, T0)
    assert e.status is Status.CONTESTED and e.confidence < 0.5
    assert e.updated_at == T0


def test_revoked_is_sticky() -> None:
    e = make_experience("task", scope=ACME, status=Status.REVOKED)
    assert record_outcome(e, True, T0).status is Status.REVOKED
