"""Derived identifiers: the same inputs always give the same ID, so a retry never
creates a second record."""

from __future__ import annotations

import hashlib

from afteraction.model import Scope

__all__ = ["derive_id", "experience_id"]


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
