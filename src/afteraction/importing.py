"""Lessons imported from an export (``afteraction import``): added, or brought up to date.

An import is an operator's move of a store's own lessons (``export`` on one store, ``import`` on
another, or on the same one later), so it keeps each lesson's id as written; ``Memory.add``
derives a mismatched id again (``core.ids.own_id``) because its callers are a host's or the
service's, who may not pick another scope's id.

A lesson whose (tenant, id) is stored already is replaced when the file's copy is newer: same scope,
and changed later (``updated_at``, else ``created_at``) than the stored one. So a lesson revoked,
reinforced or given wordings at the source since the last import carries that over; a stored copy
that changed after it (outcomes at the destination) is kept, as is one of another scope (ids are
unique in a tenant). The replaced record takes the stored revision plus one, as any update does, and
keeps the file's ``updated_at``: importing the same file again changes nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from afteraction.core.capture import clean_experience
from afteraction.errors import ConflictError
from afteraction.model import Experience

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


def _newer(record: Experience, stored: Experience | None) -> bool:
    return (
        stored is not None
        and stored.scope == record.scope
        and _changed(record) > _changed(stored)
        and stored.revision < Experience.MAX_REVISION
    )


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
        elif (record.scope.tenant, record.id) not in undated and _newer(record, stored):
            try:
                written.append(memory.store.update(record, expected_revision=stored.revision))
            except ConflictError:  # changed meanwhile by a run of this store: that change is newer
                continue
            updated += 1
    if written:
        memory._index(written)
    return Imported(added=added, updated=updated, kept=len(batch) - added - updated)
