"""The Store contract: every backend implements it and passes ``tests/conformance/``.

Rules every backend keeps:
- Rows are keyed by (tenant, id): another tenant's row is never returned, counted or
  deduplicated against. Reads take the caller's ``Scope`` and return only rows it sees
  (``Scope.sees``).
- Eligibility (status Validated or Reinforced, confidence at or above the floor, not expired)
  is applied inside the store query, before any ranking.
- Writes are atomic: a failed write leaves what was stored intact.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from afteraction.errors import ValidationError
from afteraction.model import Candidate, Experience, Scope, Status

__all__ = ["Candidate", "Store", "check_page"]


@runtime_checkable
class Store(Protocol):
    def put(self, experience: Experience) -> bool:
        """Insert unless a row with the same (tenant, id) exists. True when inserted;
        False when it existed (the stored row is left as it was)."""
        ...

    def put_many(self, experiences: Sequence[Experience]) -> int:
        """Insert several in one transaction, each idempotently; the number inserted."""
        ...

    def get(self, scope: Scope, id: str) -> Experience | None:
        """The record with this id visible to ``scope``, or None."""
        ...

    def update(self, experience: Experience, *, expected_revision: int) -> Experience:
        """Replace the record (same tenant and id) if its stored revision is
        ``expected_revision``; store it with revision + 1 and return it.
        Raises NotFoundError when absent and ConflictError when the revision differs."""
        ...

    def search_text(
        self,
        scope: Scope,
        terms: Sequence[str],
        *,
        now: datetime,
        limit: int = 50,
        min_confidence: float = 0.5,
    ) -> list[Candidate]:
        """Eligible records visible to ``scope`` whose task, summary or lesson contains
        any of ``terms`` (plain lower-case words; the backend stems them), best BM25 first."""
        ...

    def lessons(
        self,
        scope: Scope,
        *,
        limit: int = 50,
        offset: int = 0,
        status: Status | None = None,
    ) -> list[Experience]:
        """Records visible to ``scope``, any status, newest first (created_at, then id)."""
        ...

    def count(self, scope: Scope) -> int:
        """How many records ``scope`` sees."""
        ...

    def iter_all(self, tenant: str | None = None) -> Iterator[Experience]:
        """Every record (of one tenant if given), for the host's own export and maintenance."""
        ...

    def close(self) -> None: ...


def check_page(limit: int, offset: int) -> bool:
    """The page rule every backend's ``lessons`` keeps: a negative offset is an error; a
    limit of 0 or less asks for nothing (False: return no rows)."""
    if offset < 0:
        raise ValidationError("offset", f"must be at least 0, got {offset}")
    return limit > 0
