"""Trust: Laplace confidence over independent evidence, and the lifecycle it drives."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from afteraction.model import Experience, Status

__all__ = ["REINFORCED_AT", "STICKY", "confidence", "record_outcome"]

#: Supporting evidence at which an uncontested lesson becomes Reinforced.
REINFORCED_AT = 3
#: Statuses that outcomes never change: a person or a newer lesson decided.
STICKY = frozenset({Status.REVOKED, Status.SUPERSEDED, Status.QUARANTINED, Status.CANDIDATE})


def confidence(supporting: int, contradicting: int) -> float:
    """(1 + S) / (2 + S + F)."""
    return (1 + supporting) / (2 + supporting + contradicting)


def record_outcome(experience: Experience, success: bool, now: datetime) -> Experience:
    """The experience after one more independent reuse outcome (not yet stored)."""
    s = experience.supporting + (1 if success else 0)
    f = experience.contradicting + (0 if success else 1)
    status = experience.status
    if status not in STICKY:
        if f > 0 and confidence(s, f) < 0.5:
            status = Status.CONTESTED
        elif s >= REINFORCED_AT and f == 0:
            status = Status.REINFORCED
        else:
            status = Status.VALIDATED
    return replace(
        experience, supporting=s, contradicting=f, confidence=confidence(s, f), status=status, updated_at=now
    )
