"""The ``demo`` command, and the check that it recreates only a file it made itself."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import click

from afteraction.cli.common import _errors, main
from afteraction.core.ids import experience_id
from afteraction.errors import ConfigError
from afteraction.store import locate
from afteraction.store.sqlite_schema import APPLICATION_ID, MIGRATIONS_TABLE

DEMO_DATABASE = ".afteraction/demo.db"

#: The demo's runs: each stores one lesson, of an id derived from its run id and the demo's scope.
DEMO_RUNS = ("demo-run-1", "demo-run-2")

#: The tables that hold what the demo writes: its lessons and what derives from them (text-search rows, vectors, the
#: marks a deleted lesson leaves), and the schema's own record. Every other table (API keys, events, sessions, spans,
#: and any a later version adds) must be empty for a file to be the demo's.
_DEMO_TABLES = frozenset({"experiences", "vectors", "vector_marks", "vector_seqs", "high_water", MIGRATIONS_TABLE})


@main.command()
@click.option(  # not AFTERACTION_DATABASE_URL: the demo recreates its file, so it never takes the user's store
    "--db", "db", default=DEMO_DATABASE, show_default=True, help="The demo's own SQLite file, or ':memory:'."
)
@_errors
def demo(db: str) -> None:
    """Run the learning loop offline: a failed-then-fixed run teaches the next one.

    The demo database is recreated on each run so that the output is the same every time. An
    existing file is deleted only when it holds nothing but the demo's own lessons; a file
    that holds anything else (other lessons, API keys, events, sessions, spans) or cannot be
    read is refused (exit 2) and left as it is."""
    from afteraction.demo import SCOPE, demo_memory, run_demo

    backend, target = locate(db)
    if backend == "postgresql":
        raise ConfigError("--db: the demo takes an SQLite file of its own or ':memory:', not a PostgreSQL database")
    path = Path(target).expanduser()
    if backend == "sqlite" and (path.exists() or path.is_symlink()):
        ids = {experience_id(run, SCOPE) for run in DEMO_RUNS}
        found = _not_the_demos(path, SCOPE.tenant, ids)
        if found is not None:
            raise ConfigError(
                f"--db: {db!r} {found}, so it is not a file the demo made; nothing was deleted. "
                "The demo recreates its database on each run: give it a path of its own (--db demo.db)"
            )
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        shutil.rmtree(f"{path}-vectors", ignore_errors=True)  # its index files (a fresh store would not trust them)
    with demo_memory(db) as memory:
        run_demo(memory, click.echo, db=None if backend == "memory" else db)


def _not_the_demos(path: Path, tenant: str, ids: set[str]) -> str | None:
    """None when the SQLite file at ``path`` holds nothing but what the demo writes (or nothing at
    all); otherwise what else it holds, or why it cannot be read. Read-only: nothing is migrated."""
    wal = Path(f"{path}-wal")
    try:
        if not path.is_file():
            return "is not a regular file"
        if path.stat().st_size == 0 and (not wal.exists() or wal.stat().st_size == 0):
            return None  # an empty file: no store, nothing to lose
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)) as con:
            con.execute("BEGIN")  # one snapshot
            if con.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
                return "is not an afteraction store"
            tables = [name for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            # every table but the demo's, SQLite's own and the text-search rows of `experiences` must be empty
            others = [t for t in tables if t not in _DEMO_TABLES and not t.startswith(("sqlite_", "experiences_fts"))]
            busy = sorted(t for t in others if con.execute(f'SELECT 1 FROM "{t}"').fetchone())
            if busy:
                return f"holds what the demo never writes (rows in {', '.join(busy)})"
            stored = {(str(t), str(i)) for t, i in con.execute("SELECT tenant, id FROM experiences")}
            if "vectors" in tables:  # a store of an earlier version may have none
                stored |= {(str(t), str(i)) for t, i in con.execute("SELECT tenant, id FROM vectors")}
    except (sqlite3.Error, OSError) as exc:
        return f"cannot be read ({exc})"
    if stored - {(tenant, id) for id in ids}:
        return "holds lessons that are not the demo's"
    return None
