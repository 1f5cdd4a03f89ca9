"""Small builders for runs and scopes used across the tests."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from afteraction.model import Attempt, Evidence, Run, Scope, ToolCall

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
ACME = Scope(tenant="acme", app="support", project="refunds")
OTHER = Scope(tenant="globex", app="support", project="refunds")


def call(tool: str, error: str | None = None, result: Any = None, **args: Any) -> ToolCall:
    return ToolCall(tool=tool, args=args, result=result, error=error)


def refund_run(*, checks: tuple[Evidence, ...] = (Evidence("refund-issued", True),), run_id: str = "run-1") -> Run:
    """The DESIGN.md example: attempt 0 fails on a held lock, attempt 1 issues the refund."""
    return Run(
        id=run_id,
        task="Refund ticket 42 is stuck in pending",
        scope=ACME,
        started_at=T0,
        ended_at=T0 + timedelta(seconds=5),
        state="completed",
        env={"os": "linux"},
        attempts=(
            Attempt(0, (call("run_refund_check", error="LockHeldError: refund lock is held", strategy="retry"),)),
            Attempt(1, (call("run_refund_check", result="issued", strategy="wait-for-lock"),)),
        ),
        evidence=checks,
    )
