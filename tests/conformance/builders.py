"""Small builders of Experience values for the store suites."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

from afteraction.model import Experience, Scenario, Scope, Skill, Solution, Status, Tried

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
SCOPE = Scope(tenant="acme", app="support", project="refunds")


def experience(
    id: str = "exp-1",
    *,
    task: str = "Refund ticket is stuck in pending",
    lesson: str = "Wait for the refund lock to clear, then retry the refund.",
    scope: Scope = SCOPE,
    status: Status = Status.VALIDATED,
    confidence: float = 0.75,
    created_at: datetime | None = None,
    **fields: Any,
) -> Experience:
    return Experience(
        id=id,
        task_id=fields.pop("task_id", f"task-{id}"),
        task=task,
        lesson=lesson,
        status=status,
        confidence=confidence,
        scope=scope,
        created_at=created_at or NOW - timedelta(days=1),
        **fields,
    )


def scoped(scope: Scope, **parts: str | None) -> Scope:
    """``scope`` with some parts changed."""
    return replace(scope, **parts)


def large_experience(id: str = "exp-large") -> Experience:
    """Every field set, text at its limits."""
    return experience(
        id,
        task="Migrate the billing database without downtime " * 100,
        lesson=("Take a logical backup first; replay the WAL on the replica. " * 400)[:16_384],
        summary="Zero-downtime migration of billing, verified by the host's checks. " * 50,
        scope=Scope(tenant="acme", app="billing", project="db", team="platform", agent="migrator", user="u-42"),
        status=Status.REINFORCED,
        confidence=0.875,
        scenario=Scenario(
            task="Migrate the billing database",
            environment={f"key{i}": f"value {i}" for i in range(64)},
            symptoms=tuple(f"symptom {i}: replication lag" for i in range(64)),
            failure_signature="LockTimeout: relation billing.invoices",
        ),
        solution=Solution(
            tried=tuple(
                Tried(attempt=i, tool="run_sql", error_class="LockTimeout", args={"statement": f"ALTER {i}", "n": i})
                for i in range(1, 21)
            ),
            worked="online schema change with a shadow table",
            steps=tuple(f"step {i}" for i in range(64)),
        ),
        skill=Skill(
            statement="Prefer shadow-table migrations for hot tables.",
            authored_by="host",
            applicable_when=("table is hot",),
            not_applicable_when=("table is tiny",),
        ),
        checks=("migration-verified", "row-count-equal"),
        supporting=6,
        contradicting=1,
        revision=3,
        updated_at=NOW - timedelta(hours=2),
        expires_at=NOW + timedelta(days=365),
        source="import",
    )
