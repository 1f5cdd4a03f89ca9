"""What deleting rows must not take back in the SQLite store (m010): the ``written`` stamp, so that
a record written after the newest one was deleted is still found by ``missing_vectors``, and each
(tenant, model)'s vector ``seq``, so that an index already loaded in another process still loads the
vectors written after every other of its (tenant, model) was deleted. Two stores on one file stand
for two processes."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from dataclasses import replace
from pathlib import Path

import pytest

from afteraction.store import SQLiteStore
from afteraction.store.base import StoredVector
from afteraction.store.sqlite_schema import MIGRATIONS
from tests.conformance.builders import SCOPE, experience, scoped
from tests.store.test_sqlite_vectors import MODEL, fill, top, unit_rows

ADA = scoped(SCOPE, user="ada")


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


def stamps(path: Path) -> dict[str, int]:
    with closing(sqlite3.connect(path)) as db:
        return dict(db.execute("SELECT id, written FROM experiences").fetchall())


def indexed(store: SQLiteStore, *ids: str) -> None:
    """``ids`` stored with a vector each, and a pass of ``missing_vectors`` that finds nothing
    left (so the model's mark moves up to the latest stamp)."""
    store.put_many([experience(id, scope=ADA) for id in ids])
    rows = unit_rows(len(ids))
    store.put_vectors([StoredVector("acme", id, 1, MODEL, rows[i].tolist()) for i, id in enumerate(ids)])
    assert store.missing_vectors(MODEL) == []


@pytest.mark.parametrize("how", ["delete", "delete_user"])
def test_a_record_written_after_the_newest_was_deleted_is_found_missing(path: Path, how: str) -> None:
    host, other = SQLiteStore(path), SQLiteStore(path)
    indexed(host, "a", "b")
    newest = max(stamps(path).values())
    if how == "delete":
        assert other.delete(ADA, ["b"]) == 1  # the record holding the largest stamp
    else:
        assert sorted(other.delete_user("acme", "ada")) == ["a", "b"]  # every record, the newest included
    other.put(experience("c"))  # written by another process, say with no embedder
    assert stamps(path)["c"] > newest  # the stamp never goes down
    assert [e.id for e in host.missing_vectors(MODEL)] == ["c"]
    assert host.count_missing_vectors(MODEL) == 1
    host.close()
    other.close()


def test_a_record_updated_after_the_newest_was_deleted_is_found_missing(path: Path) -> None:
    store = SQLiteStore(path)
    indexed(store, "a", "b")
    assert store.delete(ADA, ["b"]) == 1
    store.update(replace(experience("a", scope=ADA), lesson="Changed."), expected_revision=1)  # no vector at revision 2
    assert [(e.id, e.revision) for e in store.missing_vectors(MODEL)] == [("a", 2)]
    store.close()


def test_the_stamp_survives_deleting_every_record_and_a_reopen(path: Path) -> None:
    store = SQLiteStore(path)
    indexed(store, "a", "b", "c")
    assert store.delete(ADA, ["a", "b", "c"]) == 3
    store.close()
    reopened = SQLiteStore(path)
    reopened.put(experience("d"))
    assert stamps(path) == {"d": 4}
    assert [e.id for e in reopened.missing_vectors(MODEL)] == ["d"]
    reopened.close()


def test_an_index_loaded_elsewhere_loads_vectors_written_after_every_other_was_deleted(path: Path) -> None:
    host = SQLiteStore(path)
    fill(host, 1)
    assert top(host, unit_rows(1)[0]) == ["e00000"]  # the host's index has seen seq 1
    admin = SQLiteStore(path)
    assert admin.delete(SCOPE, ["e00000"]) == 1  # the tenant's only vector
    data = fill(admin, 3, seed=5, start=10)
    admin.close()
    for i in range(3):
        assert top(host, data[i])[0] == f"e{10 + i:05d}"
    assert sorted(top(host, data[0])) == ["e00010", "e00011", "e00012"]
    host.close()


def test_an_index_loaded_elsewhere_loads_vectors_written_after_a_drop(path: Path) -> None:
    host = SQLiteStore(path)
    fill(host, 3)
    assert top(host, unit_rows(1)[0])[0] == "e00000"
    admin = SQLiteStore(path)
    assert admin.drop_vectors(MODEL) == 3
    data = fill(admin, 2, seed=9, start=20)
    admin.close()
    assert top(host, data[1]) == ["e00021", "e00020"]  # the two stored since, none dropped
    host.close()


def test_an_index_loaded_elsewhere_is_rebuilt_when_the_model_comes_back_at_another_dimension(path: Path) -> None:
    host = SQLiteStore(path)
    fill(host, 3)
    assert top(host, unit_rows(1)[0])[0] == "e00000"
    admin = SQLiteStore(path)
    assert admin.delete(SCOPE, ["e00000", "e00001", "e00002"]) == 3
    admin.put_many([experience("x"), experience("y")])
    admin.put_vectors(
        [StoredVector("acme", "x", 1, MODEL, [1.0, 0.0]), StoredVector("acme", "y", 1, MODEL, [0.0, 1.0])]
    )
    admin.close()
    assert top(host, [0.0, 1.0]) == ["y", "x"]
    host.close()


def test_an_old_database_upgrades_and_a_record_a_delete_stranded_is_found_again(path: Path) -> None:
    """A file at m009 where a delete let a record take a stamp at or below the model's mark (the
    bug m010 fixes): after the upgrade its rows are all there, and the next pass finds the record."""
    assert MIGRATIONS[-1].__name__ == "m010_high_water"
    store = SQLiteStore(path)
    indexed(store, "a", "b")
    assert store.delete(ADA, ["b"]) == 1
    store.put(experience("stranded"))
    store.close()
    with closing(sqlite3.connect(path, isolation_level=None)) as db:  # back to m009, as that code left it
        db.execute("DROP TABLE high_water")
        db.execute("DROP TABLE vector_seqs")
        db.execute("DELETE FROM _afteraction_migrations WHERE name = 'm010_high_water'")
        db.execute(f"PRAGMA user_version = {len(MIGRATIONS) - 1}")
        db.execute("UPDATE experiences SET written = 2 WHERE id = 'stranded'")  # as m009 stamped it: b's again
        db.execute(
            "INSERT INTO vector_marks (model, written) VALUES (?, 2) ON CONFLICT DO UPDATE SET written = 2", (MODEL,)
        )
        before = (
            db.execute("SELECT count(*) FROM experiences").fetchone()[0],
            db.execute("SELECT count(*) FROM vectors").fetchone()[0],
        )
    upgraded = SQLiteStore(path)
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        after = (
            db.execute("SELECT count(*) FROM experiences").fetchone()[0],
            db.execute("SELECT count(*) FROM vectors").fetchone()[0],
        )
    assert after == before == (2, 1)
    assert [e.id for e in upgraded.missing_vectors(MODEL)] == ["stranded"]
    upgraded.put(experience("later"))
    assert stamps(path)["later"] == 3
    upgraded.close()
