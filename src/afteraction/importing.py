"""Lessons imported from an export (``afteraction import``): added, or brought up to date.

An import is an operator's move of a store's own lessons (``export`` on one store, ``import`` on
another, or on the same one later), so it keeps each lesson's id as written; ``Memory.add``
derives a mismatched id again (``core.ids.own_id``) because its callers are a host's or the
service's, who may not pick another scope's id.

A lesson whose (tenant, id) is stored already, in the same scope, is brought up to date (``_merged``):
the copy changed later (``updated_at``, else ``created_at``) gives the record, so outcomes and wordings
at the source since the last import carry over and a stored copy that changed after the file's is kept;
and a person's decision that keeps the lesson out of blocks (revoked, superseded, stale) holds whichever
side made it (the graver when both did: a revocation over a superseding over marking stale): a revocation
at the source arrives even after outcomes at the destination, and one at the destination is not undone by
a later outcome at the source. One of another scope is kept (ids are unique in a tenant). The updated
record takes the stored revision plus one, as any update does, and keeps its ``updated_at``: importing
the same file again changes nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from afteraction.core.capture import clean_experience
from afteraction.core.trust import PERSON_SET
from afteraction.errors import ConflictError
from afteraction.model import Experience, Status

if TYPE_CHECKING:
    from afteraction.memory import Memory

__all__ = ["Imported", "import_lessons"]


@dataclass(frozen=True)
class Imported:
    """What an import did: lessons added, stored ones replaced by a newer copy, stored ones kept."""

    added: int = 0
    updated: int = 0
    kept: int = 0

    def __add__(self, other: Imported) -> Imported:
        return Imported(self.added + other.added, self.updated + other.updated, self.kept + other.kept)


def _changed(experience: Experience) -> datetime:
    return experience.updated_at or experience.created_at


#: When both sides hold a person's decision, the graver holds: a revocation (harmful) over a superseding over
#: marking stale. A record's ``updated_at`` is no time of its decision: any outcome moves it.
_GRAVITY = {Status.STALE: 0, Status.SUPERSEDED: 1, Status.REVOKED: 2}


def _merged(record: Experience, stored: Experience) -> Experience | None:
    """What the stored lesson becomes given the file's copy of it, or None to keep it as it is: the copy
    changed later gives the record, and a person's decision that keeps the lesson out of blocks (revoked,
    superseded, stale) holds whichever side made it; when both did, the graver (``_GRAVITY``), the later
    copy's between equals. Without a time for each decision, one side's reinstatement cannot be told from
    before or after the other's revocation: the lesson stays out of blocks (a person reinstates it again
    at the destination)."""
    if stored.scope != record.scope or stored.revision >= Experience.MAX_REVISION:
        return None
    base = record if _changed(record) > _changed(stored) else stored
    decided = sorted(
        (c for c in (record, stored) if c.status in PERSON_SET), key=lambda c: (_GRAVITY[c.status], _changed(c))
    )
    if decided and base.status is not decided[-1].status:
        base = replace(base, status=decided[-1].status, status_reason=decided[-1].status_reason)
    return None if base == stored else base


def import_lessons(
    memory: Memory, records: Sequence[Experience], *, undated: Collection[tuple[str, str]] = ()
) -> Imported:
    """Store ``records`` in one transaction, each scrubbed as ``Memory.add`` does, keeping its id; then
    replace each stored one the file holds a newer copy of (one update each). ``undated``: the (tenant,
    id) of records whose line gave no time (``created_at`` was the reading's): added when missing, never
    replacing. Only what this call wrote is queued for embedding: a lesson stored the same already keeps
    its vectors."""
    batch = [clean_experience(record, memory.limits) for record in records]
    before = [memory.store.get(record.scope, record.id) for record in batch]
    added = memory.store.put_many(batch)
    written: list[Experience] = []
    updated = 0
    for record, stored in zip(batch, before, strict=True):
        if stored is None:
            if memory.store.get(record.scope, record.id) == record:
                written.append(record)
        elif (record.scope.tenant, record.id) not in undated and (merged := _merged(record, stored)) is not None:
            try:
                written.append(memory.store.update(merged, expected_revision=stored.revision))
            except ConflictError:  # changed meanwhile by a run of this store: that change is newer
                continue
            updated += 1
    if written:
        memory._index(written)
    return Imported(added=added, updated=updated, kept=len(batch) - added - updated)
