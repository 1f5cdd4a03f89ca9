"""SQLite-specific behaviour: pragmas, migrations, refusing foreign files, atomic writes,
several connections on one file; and ``open_store`` (the narrowed search: ``test_sqlite_search.py``)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import closing
from pathlib import Path

import pytest

from afteraction.errors import ConfigError, ConflictError, StoreError
from afteraction.model import Status
from afteraction.store import MemoryStore, SQLiteStore, Store, open_store
from afteraction.store import sqlite as sqlite_module
from afteraction.store.sqlite import row
from afteraction.store.sqlite_schema import APPLICATION_ID, MIGRATIONS, migrate
from tests.conformance.builders import NOW, SCOPE, experience


def connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def pragma(path: Path, name: str) -> object:
    with closing(connect(path)) as db:
        return db.execute(f"PRAGMA {name}").fetchone()[0]


def filled(path: Path, n: int = 200) -> SQLiteStore:
    store = SQLiteStore(path)
    store.put_many([experience(f"exp-{i:04d}", lesson=f"Lesson number {i} about the refund lock.") for i in range(n)])
    return store


# opening and migrating

EXPECTED_SCHEMA = [
    ("index", "api_keys_tenant"),
    ("index", "events_session_at"),
    ("index", "events_tenant_at"),
    ("index", "experiences_scope_created"),
    ("index", "experiences_written"),
    ("index", "sessions_parent"),
    ("index", "sessions_started"),
    ("index", "sessions_trace"),
    ("index", "sqlite_autoindex__afteraction_migrations_1"),
    ("index", "sqlite_autoindex_events_1"),
    ("index", "sqlite_autoindex_experiences_1"),
    ("index", "vectors_seq"),
    ("table", "_afteraction_migrations"),
    ("table", "api_keys"),
    ("table", "event_counts"),
    ("table", "events"),
    ("table", "experiences"),
    ("table", "experiences_fts"),
    ("table", "experiences_fts_config"),
    ("table", "experiences_fts_data"),
    ("table", "experiences_fts_docsize"),
    ("table", "experiences_fts_idx"),
    ("table", "experiences_fts_terms"),
    ("table", "high_water"),
    ("table", "otlp_spans"),
    ("table", "sessions"),
    ("table", "vector_marks"),
    ("table", "vector_seqs"),
    ("table", "vectors"),
    ("trigger", "experiences_fts_delete"),
    ("trigger", "experiences_fts_insert"),
    ("trigger", "experiences_fts_update"),
]
EXPECTED_COLUMNS = [
    *("pk", "tenant", "id", "app", "project", "team", "agent", "user", "task_id", "task", "summary", "lesson"),
    *("status", "confidence", "created_at", "updated_at", "expires_at", "revision", "data"),
    *("task_terms", "summary_terms", "lesson_terms", "anchor", "written"),
]
EXPECTED_LISTING_INDEX = ["tenant", "app", "project", "created_at", "id", "team", "agent", "user", "status"]


def test_a_blank_database_migrates_to_the_expected_schema(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "store.db"  # the parent directory is created
    SQLiteStore(path).close()
    with closing(connect(path)) as db:
        schema = db.execute("SELECT type, name FROM sqlite_master ORDER BY type, name").fetchall()
        columns = [r[1] for r in db.execute("PRAGMA table_xinfo(experiences)")]
        listing = [r[2] for r in db.execute("PRAGMA index_xinfo(experiences_scope_created)") if r[1] >= 0]
        unique = [r[2] for r in db.execute("PRAGMA index_info(sqlite_autoindex_experiences_1)")]
        applied = [name for (name,) in db.execute("SELECT name FROM _afteraction_migrations ORDER BY name")]
    assert schema == EXPECTED_SCHEMA
    assert columns == EXPECTED_COLUMNS
    assert listing == EXPECTED_LISTING_INDEX
    assert unique == ["tenant", "id"]
    assert (
        applied
        == [m.__name__ for m in MIGRATIONS]
        == [
            *("m001_experiences", "m002_search", "m003_events", "m004_keys", "m005_event_reads", "m006_vectors"),
            "m007_vector_marks",
            "m008_otlp_spans",
            "m009_key_event_rates",
            "m010_high_water",
        ]
    )
    assert pragma(path, "user_version") == len(MIGRATIONS)
    assert pragma(path, "application_id") == APPLICATION_ID


def test_wal_and_connection_pragmas(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "store.db")
    with store._connections.writer() as writer:  # the writer
        db = writer.db
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
        assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert db.execute("PRAGMA busy_timeout").fetchone()[0] == sqlite_module.BUSY_TIMEOUT_MS
        assert db.execute("PRAGMA query_only").fetchone()[0] == 0
    with store._reading() as db:  # a reader
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("PRAGMA busy_timeout").fetchone()[0] == sqlite_module.BUSY_TIMEOUT_MS
        assert db.execute("PRAGMA query_only").fetchone()[0] == 1
    store.close()
    assert pragma(tmp_path / "store.db", "journal_mode") == "wal"  # persistent in the file


def test_an_old_database_upgrades_without_losing_a_row(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    originals = [experience(f"exp-{i}", lesson=f"Old lesson {i}: wait for the refund lock.") for i in range(25)]
    with closing(connect(path)) as db:
        assert migrate(db, str(path), MIGRATIONS[:1]) == 1
        columns = EXPECTED_COLUMNS[1:19]  # the columns of version 1
        marks = ", ".join("?" * len(columns))
        db.executemany(
            f"INSERT INTO experiences ({', '.join(columns)}) VALUES ({marks})", [row(e)[:18] for e in originals]
        )
    assert pragma(path, "user_version") == 1

    store = SQLiteStore(path)
    assert pragma(path, "user_version") == len(MIGRATIONS)
    assert list(store.iter_all()) == sorted(originals, key=lambda e: e.id)  # iter_all goes in (tenant, id) order
    assert store.count(SCOPE) == 25
    assert len(store.search_text(SCOPE, ["waiting", "locks"], now=NOW)) == 25  # the new index covers old rows
    store.close()


def test_a_newer_schema_asks_to_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    SQLiteStore(path).close()
    with closing(connect(path)) as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(StoreError, match=r"newer than this afteraction.*upgrade afteraction"):
        SQLiteStore(path)


def test_a_foreign_sqlite_database_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    with closing(connect(path)) as db:
        db.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
        db.execute("INSERT INTO customers (name) VALUES ('Ada')")
    before = path.read_bytes()
    with pytest.raises(StoreError, match="another application") as raised:
        SQLiteStore(path)
    assert str(path) in str(raised.value) and "customers" in str(raised.value)
    assert path.read_bytes() == before
    assert pragma(path, "journal_mode") == "delete"


def test_a_database_with_another_application_id_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with closing(connect(path)) as db:
        db.execute("PRAGMA application_id = 1234")
    with pytest.raises(StoreError, match="application_id 0x4d2"):
        SQLiteStore(path)


def test_a_text_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("these are my notes, not a database\n" * 10)
    with pytest.raises(StoreError, match="not an SQLite database") as raised:
        SQLiteStore(path)
    assert str(path) in str(raised.value)
    assert path.read_text().startswith("these are my notes")


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is a directory"):
        SQLiteStore(tmp_path)


def test_a_truncated_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    filled(path).close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(StoreError, match="truncated") as raised:
        SQLiteStore(path)
    assert str(path) in str(raised.value)


def test_a_corrupted_database_raises_store_error(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    filled(path).close()
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    data[page:] = bytes((i * 37 + 11) % 256 for i in range(len(data) - page))  # every page after the first
    path.write_bytes(bytes(data))
    with pytest.raises(StoreError, match=str(path)):
        store = SQLiteStore(path)
        list(store.iter_all())
        store.search_text(SCOPE, ["refund"], now=NOW)


def test_a_closed_store_raises_store_error(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "store.db")
    store.close()
    store.close()  # twice is fine
    with pytest.raises(StoreError, match="closed"):
        store.count(SCOPE)


# atomic writes


def test_a_failed_put_many_inserts_none_and_keeps_what_was_stored(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    store = SQLiteStore(path)
    kept = [experience("kept-1"), experience("kept-2")]
    store.put_many(kept)
    with closing(connect(path)) as db:
        db.execute(
            "CREATE TRIGGER boom BEFORE INSERT ON experiences WHEN new.id = 'bad' "
            "BEGIN SELECT RAISE(ABORT, 'boom'); END"
        )
    batch = [experience("new-1", lesson="Fresh lesson about quotas."), experience("bad"), experience("new-2")]
    with pytest.raises(StoreError, match="boom"):
        store.put_many(batch)
    with pytest.raises(StoreError, match="boom"):
        store.put(experience("bad"))
    assert list(store.iter_all()) == kept
    assert store.get(SCOPE, "new-1") is None
    assert store.search_text(SCOPE, ["quotas"], now=NOW) == []
    with closing(connect(path)) as db:
        db.execute("INSERT INTO experiences_fts (experiences_fts) VALUES ('integrity-check')")
        db.execute("DROP TRIGGER boom")
    assert store.put_many(batch) == 3  # the store is still usable
    assert store.count(SCOPE) == 5
    store.close()


def test_a_failed_update_leaves_the_row(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    store = SQLiteStore(path)
    original = experience("exp-1")
    store.put(original)
    with closing(connect(path)) as db:
        db.execute("CREATE TRIGGER boom BEFORE UPDATE ON experiences BEGIN SELECT RAISE(ABORT, 'boom'); END")
    with pytest.raises(StoreError, match="boom"):
        store.update(experience("exp-1", lesson="Changed."), expected_revision=1)
    assert store.get(SCOPE, "exp-1") == original
    store.close()


# several connections


def test_writers_on_separate_connections_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"  # blank: the four stores also race to migrate it
    updates = [0] * 4
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            store = SQLiteStore(path)
            store.put(experience("shared"))
            for i in range(20):
                store.put(experience(f"w{worker}-{i}"))
                store.put(experience(f"both-{i}"))  # every worker tries the same ids
                while True:
                    current = store.get(SCOPE, "shared")
                    assert current is not None
                    try:
                        store.update(current, expected_revision=current.revision)
                        break
                    except ConflictError:
                        continue
                updates[worker] += 1
            store.close()
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    store = SQLiteStore(path)
    stored = [e.id for e in store.iter_all()]
    assert len(stored) == len(set(stored)) == 1 + 4 * 20 + 20
    shared = store.get(SCOPE, "shared")
    assert shared is not None and shared.revision == 1 + sum(updates) == 81
    with closing(connect(path)) as db:
        assert db.execute("SELECT count(*) FROM _afteraction_migrations").fetchone()[0] == len(MIGRATIONS)
    store.close()


def test_data_persists_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    store = SQLiteStore(path)
    original = experience("exp-1", status=Status.REINFORCED)
    store.put(original)
    store.update(experience("exp-1", lesson="Updated lesson about locks."), expected_revision=1)
    store.close()
    reopened = SQLiteStore(path)
    stored = reopened.get(SCOPE, "exp-1")
    assert stored is not None and stored.revision == 2 and stored.lesson == "Updated lesson about locks."
    assert [c.experience.id for c in reopened.search_text(SCOPE, ["locks"], now=NOW)] == ["exp-1"]
    reopened.close()


# open_store


def test_open_store_picks_the_backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert isinstance(open_store(":memory:"), MemoryStore)
    cases = {
        "sqlite:///relative.db": tmp_path / "relative.db",  # SQLAlchemy style: three slashes, then the path
        f"sqlite:///{tmp_path}/absolute.db": tmp_path / "absolute.db",  # so four for an absolute path
        "sqlite:short.db": tmp_path / "short.db",
        f"sqlite:{tmp_path}/short-absolute.db": tmp_path / "short-absolute.db",
        str(tmp_path / "plain.db"): tmp_path / "plain.db",
        "nested/plain.db": tmp_path / "nested" / "plain.db",
        ":memory:.db": tmp_path / ":memory:.db",
    }
    for url, expected in cases.items():
        store = open_store(url)
        assert isinstance(store, SQLiteStore) and isinstance(store, Store), url
        store.close()
        assert expected.exists(), url


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://localhost:8080", "names an afteraction service.*RemoteMemory.*needs a database URL"),
        ("https://memory.example.com", "names an afteraction service.*RemoteMemory.*needs a database URL"),
        ("redis://localhost", "'redis://localhost' is not one afteraction can open.*:memory:.*sqlite:"),
        ("", "empty"),
        ("sqlite://host/x.db", "names a host"),
        ("sqlite:", "no path"),
    ],
)
def test_open_store_refuses_what_it_cannot_open(url: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as raised:
        open_store(url)
    assert "secret" not in str(raised.value)


def test_open_store_names_the_extra_when_psycopg_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as in an install without the postgres extra
    monkeypatch.delitem(sys.modules, "afteraction.store.postgres", raising=False)
    with pytest.raises(ConfigError, match=r"pip install 'afteraction\[postgres\]'") as raised:
        open_store("postgresql://user:secret@db/afteraction")
    assert "secret" not in str(raised.value)


def test_a_migrated_store_opens_while_another_connection_writes(tmp_path: Path) -> None:
    """Opening needs the write lock only to migrate: a long write of another process (an import) must not keep
    readers from opening the store, which WAL lets them read."""
    path = tmp_path / "m.db"
    SQLiteStore(path).close()
    writer = sqlite3.connect(path, isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")  # held for as long as the test runs
        started = time.monotonic()
        store = SQLiteStore(path)
        assert time.monotonic() - started < 2
        assert store.count(SCOPE) == 0
        store.close()
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_a_store_that_cannot_be_written_is_not_called_corrupted(tmp_path: Path) -> None:
    from afteraction.store.sqlite_connection import _failed

    db = sqlite3.connect(":memory:")
    found = _failed(db, "x.db", sqlite3.OperationalError("attempt to write a readonly database"))
    assert "cannot be written" in str(found) and "permissions" in str(found) and "corrupted" not in str(found)
    assert "mounted read-only" in str(found)
    full = _failed(sqlite3.connect(":memory:"), "x.db", sqlite3.OperationalError("database or disk is full"))
    assert "space" in str(full)


_OTHER_PROCESS = """
import sys
from afteraction.store import SQLiteStore
from tests.conformance.builders import experience
store = SQLiteStore(sys.argv[1])
store.put_many([experience(f"other-{i:03d}") for i in range(50)])
store.close()
"""


def test_a_second_open_in_the_process_keeps_the_first_stores_locks(tmp_path: Path) -> None:
    """Found by a lifecycle session: opening (and closing) the file from Python to check its header released
    every POSIX lock of the process, the first store's included; another process then took the WAL for
    abandoned, checkpointed and deleted it under that store: its later writes were lost and the file malformed."""
    path = tmp_path / "store.db"
    first = filled(path, 20)
    SQLiteStore(path).close()  # a second store on the same file, opened and closed (a per-request open)
    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", _OTHER_PROCESS, str(path)], check=True, cwd=root, timeout=120)
    assert (tmp_path / "store.db-wal").exists()  # the first store still holds the WAL open
    first.put_many([experience(f"after-{i:03d}") for i in range(30)])
    first.close()
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert db.execute("SELECT count(*) FROM experiences").fetchone() == (100,)
