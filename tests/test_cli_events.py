"""``afteraction events prune`` and ``events delete``: sessions go with their events, once, in the
tenant named; bad times are named."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from afteraction.errors import StoreError
from afteraction.store import events as events_module
from afteraction.store.events import open_events
from tests.store.test_events import event
from tests.test_cli import cli


def stored(path: Path) -> str:
    db = str(path)
    store = open_events(db)
    store.add_many("acme", [event("a1", "2025-06-01T00:00:00Z", session="old"), event("a2", session="new")])
    store.add_many("globex", [event("g1", "2025-06-01T00:00:00Z", session="old")])
    store.close()
    return db


def sessions(db: str, tenant: str) -> list[str]:
    store = open_events(db)
    try:
        return [s.id for s in store.sessions(tenant, limit=10)]
    finally:
        store.close()


def test_delete_removes_the_tenants_sessions_once(tmp_path: Path) -> None:
    db = stored(tmp_path / "e.db")
    assert cli("events", "delete", "old", "gone", "--tenant", "acme", "--db", db) == (
        0,
        "deleted 1 of 2 session(s)\n",
        "",
    )
    assert sessions(db, "acme") == ["new"] and sessions(db, "globex") == ["old"]
    assert json.loads(cli("events", "delete", "old", "--tenant", "acme", "--json", "--db", db)[1]) == {"deleted": 0}
    code, _, err = cli("events", "delete", "old", "--db", db)
    assert code == 2 and "--tenant" in err


def test_prune_keeps_a_window_of_one_tenant_or_of_all(tmp_path: Path) -> None:
    db = stored(tmp_path / "e.db")
    code, out, _ = cli("events", "prune", "--before", "2026-01-01T00:00:00Z", "--tenant", "globex", "--db", db)
    assert code == 0 and out.startswith("deleted 1 session(s) of tenant 'globex' that ended before 2026-01-01")
    assert sessions(db, "acme") == ["new", "old"] and sessions(db, "globex") == []
    code, out, _ = cli("events", "prune", "--older-than", "30d", "--json", "--db", db)
    assert code == 0 and json.loads(out)["deleted"] == 2  # both of acme's ended long before 30 days ago
    assert sessions(db, "acme") == []


def test_prune_names_a_bad_time_and_deletes_nothing(tmp_path: Path) -> None:
    db = stored(tmp_path / "e.db")
    for args, field in (
        (["--before", "2026-01-01T00:00:00"], "--before"),  # no offset: which instant is meant cannot be known
        (["--older-than", "30 days"], "--older-than"),
        ([], "--before: give --before TIME or --older-than AGE"),  # said "not both" when neither was given
        (["--before", "2026-01-01T00:00:00Z", "--older-than", "1d"], "--before: give one of the two, not both"),
    ):
        code, out, err = cli("events", "prune", *args, "--db", db)
        assert code == 2 and out == "" and field in err, (args, err)
    assert sessions(db, "acme") == ["new", "old"]
    code, _, err = cli("events", "prune", "--older-than", "1d", "--db", str(tmp_path / "missing.db"))
    assert code == 2 and "no store" in err and not (tmp_path / "missing.db").exists()


@pytest.mark.parametrize("command", [["prune", "--older-than", "1d"], ["delete", "s1", "--tenant", "acme"]])
def test_a_database_that_cannot_be_opened_exits_2_and_a_failed_deletion_1(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_text("not a database\n")
    newer = stored(tmp_path / "newer.db")
    with closing(sqlite3.connect(newer)) as db:
        db.execute("PRAGMA user_version = 999")
    for where, said in ((str(garbage), "not an SQLite database"), (str(tmp_path), "is a directory"), (newer, "newer")):
        code, out, err = cli("events", *command, "--db", where)
        assert (code, out) == (2, "") and said in err, (where, err)

    class Refusing:  # a PostgreSQL role without DELETE on the event tables, say
        def prune(self, *args: object) -> int:
            raise StoreError("permission denied: GRANT DELETE ON afteraction_events ...")

        delete_sessions = prune

        def close(self) -> None:
            pass

    monkeypatch.setattr(events_module, "open_events", lambda db: Refusing())
    code, _, err = cli("events", *command, "--db", stored(tmp_path / "e.db"))
    assert code == 1 and err.startswith("error: permission denied: GRANT DELETE")


def test_a_blank_tenant_or_session_id_is_refused(tmp_path: Path) -> None:
    db = stored(tmp_path / "e.db")
    for args, field in (
        (["prune", "--older-than", "1d", "--tenant", ""], "--tenant"),
        (["delete", "old", "--tenant", ""], "--tenant"),
        (["delete", "old", "", "--tenant", "acme"], "SESSION_ID"),
    ):
        code, out, err = cli("events", *args, "--db", db)
        assert (code, out) == (2, "") and err.startswith(f"error: {field}: must"), (args, err)
    assert sessions(db, "acme") == ["new", "old"] and sessions(db, "globex") == ["old"]
