"""The SQLite schema: an ordered list of named migrations, and the checks that a file is ours.

Each migration is a function that takes the connection inside the open transaction; its name
is recorded in ``_afteraction_migrations`` when it has run. ``PRAGMA user_version`` holds the
number of migrations applied and ``PRAGMA application_id`` marks the file as afteraction's.
Never edit a migration that has shipped: append a new one.

Search reads Snowball stems that Python writes beside the text (``task_terms`` ...), not the
FTS5 ``porter`` tokenizer: Porter 1 stems "deploys" to "deploi" but "deployment" to "deploy",
so they would never meet; both backends share ``afteraction.core.text.stem`` instead.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path

from afteraction.core.text import searchable, stemmed
from afteraction.errors import StoreError
from afteraction.model import Experience

__all__ = [
    "ANCHOR",
    "APPLICATION_ID",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "TEXT_COLUMNS",
    "check_content",
    "check_file",
    "inspect",
    "migrate",
    "stemmed",
]

APPLICATION_ID = 0x41664163  # "AfAc"
MIGRATIONS_TABLE = "_afteraction_migrations"

Migration = Callable[[sqlite3.Connection], None]

TEXT_COLUMNS = ("task_terms", "summary_terms", "lesson_terms")
ANCHOR = "_"  # a token of its own (tokenchars '_'): ``stemmed`` text and query stems never contain "_"


def m001_experiences(db: sqlite3.Connection) -> None:
    db.execute(
        """
        CREATE TABLE experiences (
            pk INTEGER PRIMARY KEY,
            tenant TEXT NOT NULL,
            id TEXT NOT NULL,
            app TEXT NOT NULL,
            project TEXT NOT NULL,
            team TEXT,
            agent TEXT,
            user TEXT,
            task_id TEXT NOT NULL,
            task TEXT NOT NULL,
            summary TEXT NOT NULL,
            lesson TEXT NOT NULL,
            status TEXT NOT NULL,
            confidence REAL NOT NULL,
            created_at INTEGER NOT NULL,
            updated_at INTEGER,
            expires_at INTEGER,
            revision INTEGER NOT NULL,
            data TEXT NOT NULL,
            UNIQUE (tenant, id)
        )
        """
    )
    # Listing and counting by scope, newest first, without touching the table.
    db.execute(
        "CREATE INDEX experiences_scope_created "
        "ON experiences (tenant, app, project, created_at, id, team, agent, user, status)"
    )


def m002_search(db: sqlite3.Connection) -> None:
    for column in TEXT_COLUMNS:
        db.execute(f"ALTER TABLE experiences ADD COLUMN {column} TEXT NOT NULL DEFAULT ''")
    # One token in every row, weighted 0 in bm25: lets a query match "the rows with a rare term"
    # and still score every term on them (see SQLiteStore.search_text).
    db.execute(f"ALTER TABLE experiences ADD COLUMN anchor TEXT GENERATED ALWAYS AS ('{ANCHOR}') VIRTUAL")
    rows = db.execute("SELECT pk, data FROM experiences").fetchall()
    db.executemany(
        "UPDATE experiences SET task_terms = ?, summary_terms = ?, lesson_terms = ? WHERE pk = ?",
        [(*map(stemmed, searchable(Experience.from_dict(json.loads(data)))), pk) for pk, data in rows],
    )
    columns = ", ".join((*TEXT_COLUMNS, "anchor"))
    db.execute(
        f"""
        CREATE VIRTUAL TABLE experiences_fts USING fts5(
            {columns}, content='experiences', content_rowid='pk',
            tokenize="unicode61 remove_diacritics 2 tokenchars '_'"
        )
        """
    )
    new = f"new.pk, {', '.join('new.' + c for c in TEXT_COLUMNS)}, '{ANCHOR}'"
    old = f"'delete', old.pk, {', '.join('old.' + c for c in TEXT_COLUMNS)}, '{ANCHOR}'"
    insert_new = f"INSERT INTO experiences_fts (rowid, {columns}) VALUES ({new});"
    delete_old = f"INSERT INTO experiences_fts (experiences_fts, rowid, {columns}) VALUES ({old});"
    db.execute(f"CREATE TRIGGER experiences_fts_insert AFTER INSERT ON experiences BEGIN {insert_new} END")
    db.execute(f"CREATE TRIGGER experiences_fts_delete AFTER DELETE ON experiences BEGIN {delete_old} END")
    db.execute(
        f"CREATE TRIGGER experiences_fts_update AFTER UPDATE OF {', '.join(TEXT_COLUMNS)} "
        f"ON experiences BEGIN {delete_old} {insert_new} END"
    )
    db.execute("INSERT INTO experiences_fts (experiences_fts) VALUES ('rebuild')")
    # Merge index segments sooner than the default (4): fewer segments, faster searches (about
    # a third at 100k rows) for no measurable cost in writes.
    db.execute("INSERT INTO experiences_fts (experiences_fts, rank) VALUES ('automerge', 2)")
    # How many rows hold each term: search reads it to find the rare query terms.
    db.execute("CREATE VIRTUAL TABLE experiences_fts_terms USING fts5vocab(experiences_fts, 'row')")


def m003_events(db: sqlite3.Connection) -> None:
    """AEP events, deduplicated per tenant (never globally), and one row per session that the
    ingest keeps current: the sessions list and the trees read it without scanning events.
    Instants are integer microseconds since the epoch (UTC), so they sort as instants."""
    db.execute(
        """
        CREATE TABLE events (
            pk INTEGER PRIMARY KEY,
            tenant TEXT NOT NULL,
            id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            trace_id TEXT NOT NULL,
            parent_session_id TEXT,
            type TEXT NOT NULL,
            at INTEGER NOT NULL,
            data TEXT NOT NULL,
            UNIQUE (tenant, id)
        )
        """
    )
    db.execute("CREATE INDEX events_session_at ON events (tenant, session_id, at, pk)")
    db.execute(
        """
        CREATE TABLE sessions (
            tenant TEXT NOT NULL,
            id TEXT NOT NULL,
            trace_id TEXT NOT NULL,
            parent_session_id TEXT,
            source TEXT NOT NULL,
            started_at INTEGER NOT NULL,
            ended_at INTEGER NOT NULL,
            events INTEGER NOT NULL,
            PRIMARY KEY (tenant, id)
        ) WITHOUT ROWID
        """
    )
    db.execute("CREATE INDEX sessions_started ON sessions (tenant, started_at, id)")
    db.execute("CREATE INDEX sessions_parent ON sessions (tenant, parent_session_id, id)")


def m004_keys(db: sqlite3.Connection) -> None:
    """API keys: the SHA-256 of each token, never the token; revoked keys stay (revoked_at)."""
    db.execute(
        """
        CREATE TABLE api_keys (
            id TEXT PRIMARY KEY,
            tenant TEXT NOT NULL,
            project TEXT,
            name TEXT,
            scopes TEXT NOT NULL,
            rate REAL,
            burst INTEGER,
            legacy_signatures INTEGER NOT NULL,
            require_signatures INTEGER NOT NULL,
            token_hash TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            revoked_at INTEGER
        ) WITHOUT ROWID
        """
    )
    db.execute("CREATE INDEX api_keys_tenant ON api_keys (tenant, created_at, id)")


def m005_event_reads(db: sqlite3.Connection) -> None:
    """What the reads of events need without scanning: a trace's sessions (workflows), a
    tenant's events by instant (exports of a time range), and the count of each event type
    per tenant (metrics), which the ingest keeps current in the same transaction."""
    db.execute("CREATE INDEX sessions_trace ON sessions (tenant, trace_id, started_at, id)")
    db.execute("CREATE INDEX events_tenant_at ON events (tenant, at, pk)")
    db.execute(
        """
        CREATE TABLE event_counts (
            tenant TEXT NOT NULL,
            type TEXT NOT NULL,
            events INTEGER NOT NULL,
            PRIMARY KEY (tenant, type)
        ) WITHOUT ROWID
        """
    )
    db.execute("INSERT INTO event_counts SELECT tenant, type, count(*) FROM events GROUP BY tenant, type")


def m006_vectors(db: sqlite3.Connection) -> None:
    """One vector per (tenant, record, model): the record's ``revision`` it was made from, its
    ``dimension`` and the float32 values (little-endian) as a blob. ``record`` is the record's
    ``pk`` (the key of the ANN index); ``seq`` orders writes: every batch takes the next number,
    so an index that has seen up to ``seq`` N loads only the rows above N to catch up."""
    db.execute(
        """
        CREATE TABLE vectors (
            tenant TEXT NOT NULL,
            id TEXT NOT NULL,
            model TEXT NOT NULL,
            record INTEGER NOT NULL,
            revision INTEGER NOT NULL,
            dimension INTEGER NOT NULL,
            vector BLOB NOT NULL,
            seq INTEGER NOT NULL,
            PRIMARY KEY (tenant, id, model)
        ) WITHOUT ROWID
        """
    )
    db.execute("CREATE INDEX vectors_seq ON vectors (tenant, model, seq)")


def m007_vector_marks(db: sqlite3.Connection) -> None:
    """``written`` orders record writes: each write transaction stamps the rows it inserts or
    updates with one more than the largest stamp so far (rows from before this migration have 0).
    ``vector_marks`` keeps, per model, a stamp up to which every record had a vector of that model
    at its current revision: finding the records that still need one reads only the rows stamped
    after it, not the whole table (see ``vector_table.missing``)."""
    db.execute("ALTER TABLE experiences ADD COLUMN written INTEGER NOT NULL DEFAULT 0")
    db.execute("CREATE INDEX experiences_written ON experiences (written)")
    db.execute("CREATE TABLE vector_marks (model TEXT PRIMARY KEY, written INTEGER NOT NULL) WITHOUT ROWID")


def m008_otlp_spans(db: sqlite3.Connection) -> None:
    """The OTLP span buffer (``store.spans``): spans that wait for their ancestors, per tenant and
    trace, with the time they arrived (Unix seconds) so the oldest are resolved first."""
    db.execute(
        """
        CREATE TABLE otlp_spans (
            tenant TEXT NOT NULL,
            trace_id TEXT NOT NULL,
            span_id TEXT NOT NULL,
            received REAL NOT NULL,
            data TEXT NOT NULL,
            PRIMARY KEY (tenant, trace_id, span_id)
        ) WITHOUT ROWID
        """
    )


def m009_key_event_rates(db: sqlite3.Connection) -> None:
    """A key's event rate (``Key.event_rate``, events per second) and ``event_burst`` beside its
    request rate: both NULL, no limit, for the keys made before."""
    db.execute("ALTER TABLE api_keys ADD COLUMN event_rate REAL")
    db.execute("ALTER TABLE api_keys ADD COLUMN event_burst INTEGER")


def m010_high_water(db: sqlite3.Connection) -> None:
    """What deleting rows must not take back: ``high_water`` keeps the largest ``written`` stamp a
    deleted record held (name ``'written'``), ``vector_seqs`` the largest ``seq`` a deleted vector
    of each (tenant, model) held. The next stamp and the next ``seq`` are one more than the largest
    of the rows and of these, so neither ever goes down (see ``vector_table``): a record written
    after its newest neighbour was deleted is still above every model's mark, and a vector written
    after every other of its (tenant, model) was deleted is still above every loaded index's
    watermark. The marks are reset: a record that an earlier delete let take a stamp at or below a
    mark has no vector and is found only by a full pass, which the next one is."""
    db.execute("CREATE TABLE high_water (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID")
    db.execute(
        "CREATE TABLE vector_seqs (tenant TEXT NOT NULL, model TEXT NOT NULL, seq INTEGER NOT NULL, "
        "PRIMARY KEY (tenant, model)) WITHOUT ROWID"
    )
    db.execute("DELETE FROM vector_marks")


MIGRATIONS: Sequence[Migration] = (
    m001_experiences,
    m002_search,
    m003_events,
    m004_keys,
    m005_event_reads,
    m006_vectors,
    m007_vector_marks,
    m008_otlp_spans,
    m009_key_event_rates,
    m010_high_water,
)
SCHEMA_VERSION = len(MIGRATIONS)


def check_file(path: Path) -> None:
    """Refuse a path that cannot hold a store (a directory), from its metadata alone.

    The file itself is never opened here: closing any descriptor of a file releases every POSIX lock
    this process holds on it, the locks of a store this process already has open included; another
    process would then take the WAL for abandoned, checkpoint and delete it under that store (lost
    writes, a malformed file). Its content is checked through SQLite, which shares one lock state
    among the process's connections: ``check_content``."""
    try:
        if path.is_dir():
            raise StoreError(f"{path} is a directory, not an afteraction database file")
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc}") from exc


def check_content(db: sqlite3.Connection, where: str) -> None:
    """Refuse, before anything is written, a file that is not an SQLite database or is truncated or damaged
    (``db`` a fresh connection to it)."""
    try:
        db.execute("PRAGMA page_count").fetchone()
    except sqlite3.DatabaseError as exc:
        if "not a database" in str(exc):
            raise StoreError(
                f"{where} is not an SQLite database (no SQLite header), so not an afteraction store"
            ) from exc
        if "malformed" in str(exc):
            raise StoreError(
                f"{where} is a truncated or damaged SQLite database ({exc}); restore it from a backup"
            ) from exc
        raise


def inspect(db: sqlite3.Connection, where: str) -> int:
    """The afteraction schema version of this database (0 when blank); StoreError when the
    database belongs to something else or to a newer afteraction."""
    app_id = db.execute("PRAGMA application_id").fetchone()[0]
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if app_id == APPLICATION_ID:
        applied = {name for (name,) in db.execute(f"SELECT name FROM {MIGRATIONS_TABLE}")}
        unknown = sorted(applied - {m.__name__ for m in MIGRATIONS})
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{where} has afteraction schema version {version}, newer than this afteraction "
                f"understands (version {SCHEMA_VERSION}); upgrade afteraction to open it"
            )
        if unknown:  # the same version, but written by another build (a branch) with migrations this one lacks
            raise StoreError(
                f"{where} holds migrations this afteraction does not know ({', '.join(unknown)}), from another "
                "build of it; open it with that build, or upgrade afteraction to one that has them"
            )
        return int(version)
    if app_id != 0:
        raise StoreError(
            f"{where} is an SQLite database of another application (application_id {app_id:#x}), "
            "not an afteraction store; choose another path"
        )
    tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")]
    if tables:
        listed = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
        raise StoreError(
            f"{where} is an SQLite database of another application (it has {listed}), "
            "not an afteraction store; choose another path"
        )
    return 0


def migrate(db: sqlite3.Connection, where: str, migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """Apply the migrations not yet applied, in one transaction; the resulting version."""
    db.execute("BEGIN IMMEDIATE")
    try:
        version = inspect(db, where)  # again, under the write lock: another process may have migrated
        if version >= len(migrations):
            db.execute("ROLLBACK")
            return version
        db.execute(f"CREATE TABLE IF NOT EXISTS {MIGRATIONS_TABLE} (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        applied = {name for (name,) in db.execute(f"SELECT name FROM {MIGRATIONS_TABLE}")}
        for migration in migrations:
            if migration.__name__ not in applied:
                migration(db)
                at = datetime.now(timezone.utc).isoformat()
                db.execute(f"INSERT INTO {MIGRATIONS_TABLE} (name, applied_at) VALUES (?, ?)", (migration.__name__, at))
        db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        db.execute(f"PRAGMA user_version = {len(migrations)}")
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    return len(migrations)
