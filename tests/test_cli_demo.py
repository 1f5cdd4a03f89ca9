"""``afteraction demo --db FILE`` recreates only a file it made: one that holds anything but the demo's own
lessons (API keys, events, spans, another tenant's lessons, or one the demo's tenant got otherwise) is
refused, exit 2, and left exactly as it was."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

import afteraction as aa
from afteraction.demo import SCOPE
from afteraction.store import open_store
from afteraction.store.events import open_events
from afteraction.store.spans import HeldSpan, open_spans
from afteraction.testing import make_experience
from tests.store.test_events import event
from tests.test_cli import SCOPE as DEMO_SCOPE
from tests.test_cli import cli

SECRET = "s" * 48


def service_store(path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A store as README's service flow makes it: `keys create --db events.db`, then `serve` ingests events."""
    db = str(path)
    monkeypatch.setenv("AFTERACTION_SERVER_SECRET", SECRET)
    assert cli("keys", "create", "--tenant", "acme", "--scope", "read,write", "--db", db)[0] == 0
    store = open_events(db)
    store.add_many("acme", [event("e1", session="s1"), event("e2", session="s1")])
    store.close()
    return db


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_demo_refuses_a_service_store_and_leaves_its_keys_and_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = service_store(tmp_path / "events.db", monkeypatch)
    before = digest(tmp_path / "events.db")
    code, out, err = cli("demo", "--db", db)
    assert code == 2 and out == ""
    assert err.startswith(f"error: --db: {db!r} holds what the demo never writes (rows in api_keys, event_counts")
    assert "nothing was deleted" in err and "give it a path of its own" in err
    assert digest(tmp_path / "events.db") == before
    assert cli("keys", "list", "--db", db)[1].count("acme") == 1
    store = open_events(db)
    try:
        assert [s.id for s in store.sessions("acme", limit=10)] == ["s1"]
    finally:
        store.close()


def _events(path: Path) -> None:
    store = open_events(str(path))
    store.add_many("acme", [event("e1")])
    store.close()


def _spans(path: Path) -> None:
    store = open_store(str(path))
    try:
        open_spans(store).hold("acme", [HeldSpan("ab" * 16, "cd" * 8, "{}")], now=0.0)
    finally:
        store.close()


def _demo_tenant_lesson(path: Path) -> None:  # the demo's tenant, but not a lesson the demo writes
    with aa.Memory.open(str(path), embedder=None) as memory:
        memory.add(make_experience("Package feed returns 401", scope=SCOPE))


def _other_application(path: Path) -> None:
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE notes (body TEXT)")
        db.execute("INSERT INTO notes VALUES ('keep me')")
        db.commit()


def _not_sqlite(path: Path) -> None:
    path.write_text("my notes, not a database\n")


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (_events, "rows in event_counts, events, sessions)"),
        (_spans, "holds what the demo never writes (rows in otlp_spans)"),
        (_demo_tenant_lesson, "holds lessons that are not the demo's"),
        (_other_application, "is not an afteraction store"),
        (_not_sqlite, "cannot be read (file is not a database)"),
    ],
)
def test_the_demo_refuses_a_file_holding_anything_it_did_not_write(
    tmp_path: Path, make: Callable[[Path], None], said: str
) -> None:
    path = tmp_path / "mine.db"
    make(path)
    before = digest(path)
    code, out, err = cli("demo", "--db", str(path))
    assert code == 2 and out == "" and said in err
    assert digest(path) == before


def test_the_demo_recreates_its_own_file_after_it_was_read_and_changed(tmp_path: Path) -> None:
    db = str(tmp_path / "demo.db")
    code, first, _ = cli("demo", "--db", db)
    assert code == 0
    lesson = cli("lessons", *DEMO_SCOPE, "--json", "--db", db)[1].split('"id": "')[1].split('"')[0]
    assert cli("outcome", lesson, "--failure", "--key", "run:9", *DEMO_SCOPE, "--db", db)[0] == 0
    assert cli("forget", lesson, *DEMO_SCOPE, "--db", db)[1] == f"{lesson}  forgotten\n"
    assert cli("demo", "--db", db) == (0, first, "")  # only its own lessons, fewer of them: recreated
    assert cli("demo", "--db", f"sqlite:///{db}")[0] == 0
    index = tmp_path / "demo.db-vectors"
    index.mkdir(exist_ok=True)
    (index / "left.usearch").write_bytes(b"a vector")
    assert cli("demo", "--db", db)[0] == 0 and not (index / "left.usearch").exists()  # its index files go with it


def test_the_demo_takes_an_empty_file_but_not_a_postgresql_database(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()
    assert cli("demo", "--db", str(empty))[0] == 0
    code, out, err = cli("demo", "--db", "postgresql://u@127.0.0.1:1/x")
    assert code == 2 and out == "" and "not a PostgreSQL database" in err
