"""PostgreSQL text search chooses its candidates among the rows the caller may use
(``postgres_search``): a tenant's rows of other apps or projects, or its ineligible rows, never
take a scope's places, however many of them hold the query's stems."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from afteraction.model import Experience, Status
from afteraction.store.postgres import PostgresStore
from afteraction.store.postgres_search import BUDGET
from tests.conformance.builders import NOW, SCOPE, experience, scoped

pytestmark = pytest.mark.postgres

MANY = BUDGET + 100  # more rows holding the stem than one stem's candidates
MINE = experience("mine", task="Refund ticket waits in pending", lesson="Wait for the lock, then retry the refund.")


@pytest.fixture
def store(pg_url: str) -> Iterator[PostgresStore]:
    opened = PostgresStore(pg_url)
    yield opened
    opened.close()


def newer(n: int, name: str = "other", **fields: Any) -> list[Experience]:
    """``n`` lessons holding "refund", each newer than ``MINE`` (stored after it)."""
    return [experience(f"{name}-{i}", task=f"Refund batch {i} was slow", **fields) for i in range(n)]


def found(store: PostgresStore, terms: list[str]) -> list[str]:
    return [c.experience.id for c in store.search_text(SCOPE, terms, now=NOW, limit=5)]


@pytest.mark.parametrize(
    "others",
    [
        {"scope": scoped(SCOPE, app="billing")},
        {"scope": scoped(SCOPE, project="tickets")},
        {"scope": scoped(SCOPE, user="someone-else")},
        {"status": Status.REVOKED},
        {"status": Status.QUARANTINED},
        {"confidence": 0.2},
        {"expires_at": NOW - timedelta(hours=1)},
    ],
    ids=["other app", "other project", "other user", "revoked", "quarantined", "low confidence", "expired"],
)
def test_rows_the_caller_may_not_use_never_hide_its_lesson(store: PostgresStore, others: dict[str, Any]) -> None:
    assert store.put_many([MINE, *newer(MANY, **others)]) == MANY + 1
    assert found(store, ["refund"]) == ["mine"]


def test_a_rare_stem_held_only_elsewhere_does_not_hide_the_lesson_of_a_commoner_one(store: PostgresStore) -> None:
    elsewhere = scoped(SCOPE, app="billing")
    stuck = [experience(f"stuck-{i}", task=f"Job {i} is stuck", scope=elsewhere) for i in range(10)]
    store.put_many([MINE, *newer(MANY, scope=elsewhere), *stuck])
    # "stuck" (10 rows, none of this scope) is the rarest stem and chooses first; "refund" must still choose
    assert found(store, ["refund", "stuck"]) == ["mine"]


def test_the_scopes_own_newest_rows_fill_the_budget(store: PostgresStore) -> None:
    store.put_many([*newer(MANY, "mine"), *newer(MANY, scope=scoped(SCOPE, app="billing"))])
    hits = store.search_text(SCOPE, ["refund"], now=NOW, limit=50)
    assert len(hits) == 50 and {c.experience.scope for c in hits} == {SCOPE}
