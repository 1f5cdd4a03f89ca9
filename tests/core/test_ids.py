from __future__ import annotations

from afteraction.core.ids import derive_id, experience_id
from afteraction.model import Scope
from tests.builders import ACME, OTHER


def test_ids_are_derived_and_scoped() -> None:
    assert experience_id("run-1", ACME) == experience_id("run-1", ACME)
    assert experience_id("run-1", ACME) != experience_id("run-1", OTHER)
    assert experience_id("run-1", ACME) != experience_id("run-2", ACME)
    agent = Scope(tenant="acme", app="support", project="refunds", agent="a")
    assert experience_id("run-1", agent) != experience_id("run-1", ACME)


def test_parts_cannot_be_shifted() -> None:
    assert derive_id("x", "ab", "c") != derive_id("x", "a", "bc")
    assert derive_id("x", None) != derive_id("x", "")
