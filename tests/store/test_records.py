"""Search results decoded on demand (``store/records.py``), here in the SQLite store (every backend:
``tests/conformance/test_vectors.py``): to a caller they are the stored Experience in every respect;
an unreadable record still fails as a StoreError."""

from __future__ import annotations

import dataclasses
import pickle
import sqlite3
from contextlib import closing
from datetime import timedelta
from pathlib import Path

import pytest

import afteraction as aa
from afteraction.errors import StoreError
from afteraction.model import Experience, Scenario, Status
from afteraction.store import SQLiteStore
from afteraction.store.base import StoredVector
from afteraction.store.records import SearchedExperience, settled
from tests.conformance.builders import NOW, SCOPE, experience, large_experience, scoped

FULL = dataclasses.replace(
    large_experience("rich"),
    task="Refund ticket is stuck in pending while the refund lock is held " * 20,
    scope=scoped(SCOPE, team="payments", agent="refund-agent"),
    status=Status.REINFORCED,
    updated_at=NOW - timedelta(hours=3, microseconds=17),
    expires_at=NOW + timedelta(days=30),
    revision=1,
)


@pytest.fixture
def store(tmp_path: Path) -> SQLiteStore:
    found = SQLiteStore(tmp_path / "memory.db")
    found.put_many([FULL, experience("plain", task="Refund ticket is stuck in pending review")])
    found.put_vectors([StoredVector("acme", e, 1, "m", [1.0, 0.0]) for e in ("rich", "plain")])
    return found


def found(store: SQLiteStore, *, vector: bool = False) -> dict[str, Experience]:
    scope = scoped(SCOPE, team="payments", agent="refund-agent")
    if vector:
        candidates = store.search_vector(scope, "m", [1.0, 0.0], now=NOW, limit=10)
    else:
        candidates = store.search_text(scope, ["refund", "ticket", "stuck"], now=NOW, limit=10)
    return {c.experience.id: c.experience for c in candidates}


@pytest.mark.parametrize("vector", [False, True], ids=["text", "vector"])
def test_a_searched_record_is_the_stored_one_in_every_field_and_comparison(store: SQLiteStore, vector: bool) -> None:
    got = found(store, vector=vector)["rich"]
    assert store.get(scoped(SCOPE, team="payments", agent="refund-agent"), "rich") == FULL
    for field in dataclasses.fields(Experience):
        assert getattr(got, field.name) == getattr(FULL, field.name), field.name
    assert got.created_at.tzinfo is not None and got.created_at.utcoffset() == timedelta(0)
    assert got == FULL
    assert FULL.__eq__(got) is NotImplemented and got.__eq__(FULL) is True  # so FULL == got asks got
    assert [got] == [FULL] and {"r": got} == {"r": FULL}
    assert isinstance(got, Experience) and got.to_dict() == FULL.to_dict()
    assert settled(got) == FULL and type(settled(got)) is Experience
    changed = dataclasses.replace(got, revision=2)
    assert (
        changed.revision == 2
        and changed.lesson == FULL.lesson
        and settled(changed) == dataclasses.replace(FULL, revision=2)
    )
    assert pickle.loads(pickle.dumps(got)) == FULL
    store.close()


def test_a_record_with_a_scenario_hashes_like_the_stored_one(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "memory.db")
    plain = experience("h", scenario=Scenario(task="t", symptoms=("x",)))
    store.put_many([plain])
    [candidate] = store.search_text(SCOPE, ["refund"], now=NOW)
    with pytest.raises(TypeError):  # the environment is a mapping: neither hashes
        hash(plain)
    with pytest.raises(TypeError):
        hash(candidate.experience)
    assert candidate.experience == plain
    store.close()


def test_an_unreadable_record_is_a_store_error_when_read_and_passed_over_by_search(
    store: SQLiteStore, tmp_path: Path
) -> None:
    with closing(sqlite3.connect(tmp_path / "memory.db")) as db:
        db.execute("UPDATE experiences SET data = '{not json' WHERE id = 'plain'")
        db.commit()
    got = found(store)["plain"]
    assert isinstance(got, SearchedExperience) and got.scope.tenant == "acme"  # ranking fields come from columns
    with pytest.raises(StoreError, match="cannot be read"):
        _ = got.lesson
    mem = aa.Memory(store, embedder=None)  # search passes over it (searching._readable), the others still found
    hits = mem.search("refund ticket stuck in pending review", scope=SCOPE)
    assert "plain" not in {hit.experience.id for hit in hits}
    mem.close()


def test_memory_search_hands_out_plain_experiences(store: SQLiteStore) -> None:
    mem = aa.Memory(store, embedder=None)
    hits = mem.search("refund ticket stuck pending", scope=scoped(SCOPE, team="payments", agent="refund-agent"))
    assert hits and all(type(hit.experience) is Experience for hit in hits)
    assert "plain" in {hit.experience.id for hit in hits}
    mem.close()
