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
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from afteraction.errors import ValidationError
from afteraction.model import Candidate, Experience, Scope, Status, _check

__all__ = [
    "Candidate",
    "Store",
    "StoredVector",
    "VectorModelInfo",
    "VectorStore",
    "check_ids",
    "check_names",
    "check_owner",
    "check_page",
]


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
        any of ``terms`` (plain lower-case words; the backend stems them), best text score first. The score
        is each backend's own (SQLite: FTS5 BM25; PostgreSQL: ``ts_rank`` weighted by rarity among the rows the
        caller may use): it orders one search's candidates and is not comparable across backends."""
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

    def delete(self, scope: Scope, ids: Sequence[str]) -> int:
        """Delete the records with these ids that ``scope`` sees (the rule of ``get``), and
        everything derived from them (text-search rows, vectors), in one transaction; the number
        deleted. An id not stored, or not visible to ``scope``, is skipped: deleting again is 0.
        ValidationError("ids", …) when ``ids`` is a string or holds a non-string."""
        ...

    def delete_user(self, tenant: str, user: str) -> list[str]:
        """Delete every record of ``tenant`` stored for ``user`` (its scope's ``user`` part; any
        app, project, team or agent), with everything derived from them, in one transaction; the
        ids deleted. Records shared by several users (no ``user`` part) are kept.
        ValidationError("tenant" / "user", …) when either is not a name."""
        ...

    def iter_all(self, tenant: str | None = None) -> Iterator[Experience]:
        """Every record (of one tenant if given), for the host's own export and maintenance."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class StoredVector:
    """The vector of record (tenant, id) at ``revision``, made by embedding model ``model``
    (unit length, so a dot product is the cosine)."""

    tenant: str
    id: str
    revision: int
    model: str
    vector: Sequence[float]


@dataclass(frozen=True, slots=True)
class VectorModelInfo:
    """The vectors of one embedding model held in a store (of one tenant, when asked so):
    ``vectors`` stored, of which ``current`` were made from their record's current revision
    (the others are stale: the record changed since, and no search uses them)."""

    model: str
    dimension: int
    vectors: int
    current: int

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "dimension": self.dimension, "vectors": self.vectors, "current": self.current}


@runtime_checkable
class VectorStore(Protocol):
    """A store that also keeps vectors beside its records. Rules every backend keeps:

    - A vector belongs to one record at one revision and one model. It is written only while
      the record is still at that revision (so a slow embedding never overwrites a newer
      record's vector with an older one), and it stops being used once the record changes.
    - Vectors of different models are never compared: a search names its model.
    - A search applies the same scope and eligibility as ``search_text``, inside the store.
    """

    def put_vectors(self, vectors: Sequence[StoredVector]) -> int:
        """Store each vector whose record exists at exactly that revision, replacing that
        record's earlier vector of the same model; skip the others. The number stored."""
        ...

    def search_vector(
        self,
        scope: Scope,
        model: str,
        vector: Sequence[float],
        *,
        now: datetime,
        limit: int = 50,
        min_confidence: float = 0.5,
    ) -> list[Candidate]:
        """Eligible records visible to ``scope`` with a current vector of ``model``, most
        similar first, each with ``vector_score`` (the cosine) and ``text_score`` 0.
        ValidationError("vector", …) when its length differs from the stored vectors'."""
        ...

    def missing_vectors(
        self,
        model: str,
        *,
        limit: int = 256,
        tenant: str | None = None,
        after: tuple[str, str] | None = None,
        unreadable: list[tuple[str, str, str]] | None = None,
    ) -> list[Experience]:
        """Records (any status; of one tenant if given) with no vector of ``model`` at their
        current revision, in (tenant, id) order after ``after``: what background indexing and
        ``reindex`` embed next (``after`` lets a pass skip records it could not embed). A record
        stored unreadable (its JSON cannot be decoded) is passed over, never raised: logged once
        and appended to ``unreadable`` as (tenant, id, why) when a list is given, so that one
        damaged record never stops the others from getting their vectors."""
        ...

    def vector_models(self, *, tenant: str | None = None) -> list[VectorModelInfo]:
        """Each model with vectors stored (of one tenant if given), by model id. A model stored
        at two dimensions (possible in two tenants of the SQLite and memory stores) is listed
        once per dimension."""
        ...

    def drop_vectors(self, model: str, *, tenant: str | None = None) -> int:
        """Delete every vector of ``model`` (of one tenant if given), and what served only them
        (index files, index, bookkeeping); the number deleted, 0 when there were none. The
        model's records are then missing a vector of it again (``missing_vectors``). One
        transaction: a failed drop leaves the vectors stored. An owner's operation where the
        backend has roles (PostgreSQL)."""
        ...


def check_names(model: str | None, tenant: str | None) -> None:
    """ValidationError naming ``model`` or ``tenant`` when either is given but empty."""
    for field, value in (("model", model), ("tenant", tenant)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise ValidationError(field, f"must be a non-empty string, got {value!r}")


#: The largest ``limit`` or ``offset`` of a page: past any store, and within the 64-bit integers
#: SQLite and PostgreSQL take (10**20 raised OverflowError there, or ``bigint out of range``).
MAX_PAGE = 2**53


def check_page(limit: int, offset: int) -> bool:
    """The page rule every backend's ``lessons`` keeps: a negative offset is an error, and so is a
    limit or offset over ``MAX_PAGE``; a limit of 0 or less asks for nothing (False: no rows)."""
    if offset < 0:
        raise ValidationError("offset", f"must be at least 0, got {offset}")
    for name, value in (("limit", limit), ("offset", offset)):
        if value > MAX_PAGE:
            raise ValidationError(name, f"must be at most {MAX_PAGE}, got {value}")
    return limit > 0


def check_ids(ids: Sequence[str], what: str = "lesson") -> list[str]:
    """The distinct ids of a deletion (``Store.delete``; ``EventStore.delete_sessions`` with ``what``
    "session"), in order; ValidationError naming ``ids`` when it is a string (a sequence of its
    characters) or not a sequence of non-empty strings."""
    if isinstance(ids, str | bytes) or not isinstance(ids, Sequence):
        raise ValidationError("ids", f"must be a list of {what} ids, got {type(ids).__name__}")
    for i, id in enumerate(ids):
        if not isinstance(id, str) or not id:
            raise ValidationError(f"ids[{i}]", f"must be a non-empty string, got {id!r}")
    return list(dict.fromkeys(ids))


def check_owner(tenant: object, user: object) -> tuple[str, str]:
    """The tenant and user of ``Store.delete_user``; ValidationError naming the one that is not a
    name (a non-empty string without control characters, as a scope's parts are)."""
    return _check.name(tenant, "tenant"), _check.name(user, "user")
