"""Derived identifiers: the same inputs always give the same ID, so a retry never
creates a second record."""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace

from afteraction.model import Experience, Scope

__all__ = ["derive_id", "experience_id", "own_id"]

_DERIVED = re.compile(r"exp_[0-9a-f]{24}")


def derive_id(prefix: str, *parts: str | None) -> str:
    """``prefix_`` + 24 hex digits of SHA-256 over the parts (None and "" kept distinct)."""
    digest = hashlib.sha256()
    for part in parts:
        encoded = b"\x00" if part is None else b"\x01" + part.encode("utf-8")
        digest.update(len(encoded).to_bytes(4, "big") + encoded)
    return f"{prefix}_{digest.hexdigest()[:24]}"


def experience_id(run_id: str, scope: Scope) -> str:
    """The ID of the lesson distilled from run ``run_id`` in ``scope``."""
    return derive_id("exp", scope.tenant, scope.app, scope.project, scope.team, scope.agent, scope.user, run_id)


def own_id(experience: Experience) -> Experience:
    """``experience`` with an id of the derived form (``exp_`` + 24 hex digits) that is not the one its
    ``task_id`` and scope derive re-derived from them; other ids as given. A lesson added or imported
    under the id another scope's run derives (ids are unique per tenant) would otherwise take that
    run's place: its lesson refused, and whether that id is stored answered to a caller of one
    project about another."""
    if _DERIVED.fullmatch(experience.id) is None:
        return experience
    try:
        own = experience_id(experience.task_id, experience.scope)
    except UnicodeEncodeError:  # a lone surrogate: the store refuses the record, naming the field
        return experience
    return experience if own == experience.id else replace(experience, id=own)
