from __future__ import annotations

import json

from afteraction.core.distill import distill, lesson_text
from afteraction.core.verify import verify
from afteraction.model import Attempt, Evidence, Run, Status
from tests._golden import assert_golden
from tests.builders import ACME, T0, call, refund_run


def test_lesson_matches_the_documented_example() -> None:
    run = refund_run()
    verdict = verify(run)
    assert verdict is not None
    assert lesson_text(run, verdict) == (
        "Verified after 2 attempts. Failed: attempt 0 — LockHeldError. Worked: attempt 1. Checks: [refund-issued]."
    )


def test_verified_run_is_validated_at_two_thirds() -> None:
    run = refund_run()
    experience = distill(run, verify(run), T0)  # type: ignore[arg-type]
    assert experience.status is Status.VALIDATED
    assert experience.confidence == 2 / 3
    assert experience.task_id == "run-1"
    assert experience.solution is not None and experience.solution.worked == "attempt 1"
    assert [t.error_class for t in experience.solution.tried] == ["LockHeldError"]
    assert experience.scenario is not None and experience.scenario.failure_signature == "LockHeldError"
    assert experience.scenario.environment == {"os": "linux"}
    assert experience.skill is None


def test_failed_run_is_quarantined() -> None:
    run = refund_run(checks=(Evidence("refund-issued", False),))
    verdict = verify(run)
    assert verdict is not None and not verdict.passed
    experience = distill(run, verdict, T0)
    assert experience.status is Status.QUARANTINED
    assert experience.confidence == 1 / 3
    assert experience.lesson.startswith("Failed verification after 2 attempts.")
    assert "Checks failed: [refund-issued]" in experience.lesson


def test_distill_is_deterministic_and_id_is_derived() -> None:
    a = distill(refund_run(), verify(refund_run()), T0)  # type: ignore[arg-type]
    b = distill(refund_run(), verify(refund_run()), T0)  # type: ignore[arg-type]
    assert a == b
    assert a.id == distill(refund_run(), verify(refund_run()), T0).id  # type: ignore[arg-type]
    other = distill(refund_run(run_id="run-2"), verify(refund_run()), T0)  # type: ignore[arg-type]
    assert other.id != a.id


def test_single_attempt_lesson() -> None:
    run = Run(
        id="r",
        task="Deploy the billing service",
        scope=ACME,
        started_at=T0,
        attempts=(Attempt(0, (call("deploy", result={"status": "ok"}, env="prod"),)),),
        evidence=(Evidence("healthy", True),),
    )
    verdict = verify(run)
    assert verdict is not None
    assert lesson_text(run, verdict) == "Verified after 1 attempt. Worked: attempt 0. Checks: [healthy]."


def test_the_attempt_that_worked_is_not_called_failed() -> None:
    """An error met within the attempt that worked (a retried call, or the ``with`` body raising after
    the checks passed) is said where it worked, not listed as a failure of that same attempt."""
    attempt = Attempt(0, (call("deploy", error="TimeoutError: slow"), call("deploy", result="ok")), "RuntimeError: x")
    run = Run(id="r", task="Deploy", scope=ACME, started_at=T0, attempts=(attempt,), evidence=(Evidence("up", True),))
    verdict = verify(run)
    assert verdict is not None and verdict.passed
    assert lesson_text(run, verdict) == (
        "Verified after 1 attempt. Worked: attempt 0, past TimeoutError, RuntimeError. Checks: [up]."
    )


def test_golden_lessons() -> None:
    runs = {
        "verified": refund_run(),
        "quarantined": refund_run(checks=(Evidence("refund-issued", False),)),
        "three-attempts": Run(
            id="r3",
            task="Pull packages from the private feed in the nightly build",
            scope=ACME,
            started_at=T0,
            attempts=(
                Attempt(0, (call("restore", error="HTTP 401 Unauthorized", feed="internal"),)),
                Attempt(1, (call("restore", error="Command failed: exit code 1", feed="internal"),)),
                Attempt(2, (call("rotate_token", result="rotated"), call("restore", result="ok", feed="internal"))),
            ),
            evidence=(Evidence("build-green", True),),
        ),
    }
    out = []
    for name, run in runs.items():
        verdict = verify(run)
        assert verdict is not None
        out.append(f"## {name}\n{json.dumps(distill(run, verdict, T0).to_dict(), indent=2, ensure_ascii=False)}\n")
    assert_golden("lessons.md", "\n".join(out))
