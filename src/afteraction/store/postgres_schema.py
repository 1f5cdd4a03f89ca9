"""The PostgreSQL schema: an ordered list of named, forward-only migrations, and the checks at open.

Each migration is a function that takes a cursor inside the one migrating transaction; its name
is recorded in ``afteraction_migrations`` when it has run. Opening a store applies the missing
ones under an advisory lock, so hosts starting at once migrate once. Never edit a migration
that has shipped: append a new one.

Search reads the Snowball stems that Python writes beside the text (``task_terms`` ...), as the
SQLite store does, through the ``simple`` text search configuration (lower-casing, no stemming,
no stop words): the ``english`` one would stem the stems a second time and drop the stems that
are stop words, and the two backends would no longer find the same rows.

Row-level security: every row is visible and writable only when its tenant is the transaction's
``afteraction.tenant`` setting, which the store sets from the caller's scope (``set_config(...,
true)``: it ends with the transaction). ``FORCE`` applies it to the table's owner too. The one
exception is ``afteraction.all_tenants = 'on'``, which only ``iter_all()`` without a tenant sets,
for the host's export: it reads every tenant and cannot write.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import psycopg

from afteraction.errors import StoreError
from afteraction.store.postgres_search_schema import m011_search_text_function
from afteraction.store.postgres_service_schema import (
    EVENT_COUNTS,
    EVENTS,
    KEYS_TABLE,
    OTLP_SPANS,
    SESSIONS,
    m003_events,
    m004_keys,
    m008_otlp_spans,
    m010_key_event_rates,
)
from afteraction.store.postgres_write_schema import PUT, m007_put_function

__all__ = [
    "EVENTS",
    "EVENT_COUNTS",
    "KEYS_TABLE",
    "MIGRATIONS",
    "MIGRATIONS_TABLE",
    "OTLP_SPANS",
    "PUT",
    "SCHEMA_VERSION",
    "SESSIONS",
    "TABLE",
    "TERMS",
    "VECTORS",
    "VECTOR_MODELS",
    "migrate",
    "require_vector",
    "version",
]

TABLE = "afteraction_experiences"
TERMS = "afteraction_terms"  # (tenant, stem, record): see m005
MIGRATIONS_TABLE = "afteraction_migrations"
_LOCK = 0x41664163  # "AfAc": the advisory lock held while migrating

Migration = Callable[[psycopg.Cursor[tuple[object, ...]]], None]


def m001_experiences(cur: psycopg.Cursor[tuple[object, ...]]) -> None:
    cur.execute(
        f"""
        CREATE TABLE {TABLE} (
            pk bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            tenant text NOT NULL,
            id text NOT NULL,
            app text NOT NULL,
            project text NOT NULL,
            team text,
            agent text,
            "user" text,
            task_id text NOT NULL,
            task text NOT NULL,
            summary text NOT NULL,
            lesson text NOT NULL,
            status text NOT NULL,
            confidence double precision NOT NULL,
            created_at timestamptz NOT NULL,
            updated_at timestamptz,
            expires_at timestamptz,
            revision integer NOT NULL,
            data text NOT NULL,
            task_terms text NOT NULL,
            summary_terms text NOT NULL,
            lesson_terms text NOT NULL,
            search tsvector GENERATED ALWAYS AS (
                setweight(to_tsvector('simple'::regconfig, task_terms), 'A')
                || setweight(to_tsvector('simple'::regconfig, summary_terms), 'B')
                || setweight(to_tsvector('simple'::regconfig, lesson_terms), 'C')
            ) STORED,
            UNIQUE (tenant, id)
        )
        """
    )
    # Listing and counting by scope, newest first.
    cur.execute(f"CREATE INDEX {TABLE}_scope_created ON {TABLE} (tenant, app, project, created_at, id)")
    cur.execute(f"CREATE INDEX {TABLE}_search ON {TABLE} USING gin (search)")


def m002_row_level_security(cur: psycopg.Cursor[tuple[object, ...]]) -> None:
    cur.execute(f"ALTER TABLE {TABLE} ENABLE ROW LEVEL SECURITY")
    cur.execute(f"ALTER TABLE {TABLE} FORCE ROW LEVEL SECURITY")
    cur.execute(
        f"""
        CREATE POLICY {TABLE}_tenant_reads ON {TABLE} FOR SELECT
        USING (tenant = current_setting('afteraction.tenant', true)
               OR current_setting('afteraction.all_tenants', true) = 'on')
        """
    )
    for command in ("INSERT", "UPDATE", "DELETE"):
        check = "" if command == "DELETE" else " WITH CHECK (tenant = current_setting('afteraction.tenant', true))"
        using = "" if command == "INSERT" else " USING (tenant = current_setting('afteraction.tenant', true))"
        cur.execute(f"CREATE POLICY {TABLE}_tenant_{command.lower()}s ON {TABLE} FOR {command}{using}{check}")


def _policies(cur: psycopg.Cursor[tuple[object, ...]], table: str) -> None:
    """Row-level security on ``table`` by its ``tenant`` column. Each policy reads the settings
    in a sub-select, which PostgreSQL evaluates once per statement (an initplan) instead of
    calling ``current_setting`` for every row."""
    tenant = "(SELECT current_setting('afteraction.tenant', true))"
    every = "(SELECT current_setting('afteraction.all_tenants', true)) = 'on'"
    cur.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
    cur.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
    cur.execute(f"CREATE POLICY {table}_tenant_reads ON {table} FOR SELECT USING (tenant = {tenant} OR {every})")
    cur.execute(f"CREATE POLICY {table}_tenant_inserts ON {table} FOR INSERT WITH CHECK (tenant = {tenant})")
    cur.execute(
        f"CREATE POLICY {table}_tenant_updates ON {table} FOR UPDATE USING (tenant = {tenant}) "
        f"WITH CHECK (tenant = {tenant})"
    )
    cur.execute(f"CREATE POLICY {table}_tenant_deletes ON {table} FOR DELETE USING (tenant = {tenant})")


def m005_search_under_row_level_security(cur: psycopg.Cursor[tuple[object, ...]]) -> None:
    """Search that can use an index while row-level security applies, and cheaper policies.

    Under row-level security PostgreSQL uses a condition of the query as an index condition
    only when its operator is leakproof, and the tsvector match ``@@`` is not: the GIN index
    on ``search`` serves only roles that bypass the policies. ``TERMS`` lists each record's
    stems, one row per (tenant, stem, record), kept by a trigger; a btree on it serves the
    search with leakproof equalities, and counts how many records hold a stem. The GIN index
    goes: it served only roles that skip the policies, and cost every insert."""
    for command in ("read", "insert", "update", "delete"):
        cur.execute(f"DROP POLICY {TABLE}_tenant_{command}s ON {TABLE}")
    _policies(cur, TABLE)
    cur.execute(f"DROP INDEX {TABLE}_search")  # served no role the policies apply to; cost every insert
    cur.execute(
        f"CREATE TABLE {TERMS} (tenant text NOT NULL, term text NOT NULL, pk bigint NOT NULL, "
        "PRIMARY KEY (tenant, term, pk))"
    )
    _policies(cur, TERMS)
    cur.execute(
        f"""
        CREATE FUNCTION {TERMS}_index() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP IN ('UPDATE', 'DELETE') THEN
                IF TG_OP = 'UPDATE' AND NEW.tenant = OLD.tenant AND NEW.search = OLD.search THEN
                    RETURN NULL;
                END IF;
                DELETE FROM {TERMS}
                WHERE tenant = OLD.tenant AND term = ANY (tsvector_to_array(OLD.search)) AND pk = OLD.pk;
            END IF;
            IF TG_OP IN ('INSERT', 'UPDATE') THEN
                INSERT INTO {TERMS} (tenant, term, pk)
                SELECT NEW.tenant, term, NEW.pk FROM unnest(tsvector_to_array(NEW.search)) AS term;
            END IF;
            RETURN NULL;
        END $$
        """
    )
    cur.execute(
        f"CREATE TRIGGER {TERMS}_index AFTER INSERT OR UPDATE OR DELETE ON {TABLE} "
        f"FOR EACH ROW EXECUTE FUNCTION {TERMS}_index()"
    )
    # The records stored before: the owner lifts the policies for the length of this transaction.
    for table in (TABLE, TERMS):
        cur.execute(f"ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY")
    cur.execute(
        f"INSERT INTO {TERMS} (tenant, term, pk) SELECT tenant, unnest(tsvector_to_array(search)), pk FROM {TABLE}"
    )
    for table in (TABLE, TERMS):
        cur.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")


VECTORS = "afteraction_vectors"
VECTOR_MODELS = "afteraction_vector_models"


def m006_vectors(cur: psycopg.Cursor[tuple[object, ...]]) -> None:
    """Vectors beside the records: one row per (record, model), holding the revision of the
    record it was made from (a search uses it only while the record is still at that revision).
    The column has no fixed dimension, so that models of any size share the table; each model's
    HNSW index is a partial expression index at that model's dimension, created when the model
    is first stored (``postgres_vectors``). ``VECTOR_MODELS`` records each model's dimension
    (model names only, no tenant's data: no row-level security on it)."""
    cur.execute(
        f"""
        CREATE TABLE {VECTORS} (
            pk bigint NOT NULL REFERENCES {TABLE} (pk) ON DELETE CASCADE,
            model text NOT NULL,
            tenant text NOT NULL,
            revision integer NOT NULL,
            embedding vector NOT NULL,
            PRIMARY KEY (pk, model)
        )
        """
    )
    _policies(cur, VECTORS)
    cur.execute(
        f"CREATE TABLE {VECTOR_MODELS} (model text PRIMARY KEY, dimensions integer NOT NULL CHECK (dimensions > 0))"
    )


def m009_service_policies_read_the_tenant_once(cur: psycopg.Cursor[tuple[object, ...]]) -> None:
    """The service's tables (m003: events, sessions, event counts) get the policies of m005:
    m003's call ``current_setting`` for every row they look at, which costs a session's tree,
    a page of events or sessions a function call per row read; in a sub-select it is read once
    per statement. The policies keep their names and what they allow."""
    for table in (EVENTS, SESSIONS, EVENT_COUNTS):
        for command in ("read", "insert", "update", "delete"):
            cur.execute(f"DROP POLICY {table}_tenant_{command}s ON {table}")
        _policies(cur, table)


MIGRATIONS: Sequence[Migration] = (
    m001_experiences,
    m002_row_level_security,
    m003_events,
    m004_keys,
    m005_search_under_row_level_security,
    m006_vectors,
    m007_put_function,
    m008_otlp_spans,
    m009_service_policies_read_the_tenant_once,
    m010_key_event_rates,
    m011_search_text_function,
)
SCHEMA_VERSION = len(MIGRATIONS)


def version(cur: psycopg.Cursor[tuple[object, ...]], where: str) -> int:
    """The afteraction schema version of this database (0 when blank); StoreError when the
    database holds a table of ours without a migrations record, or is newer than this code, or when the role may
    use no schema of its search path (then every table would look missing: a migrated database, blank)."""
    cur.execute("SELECT current_schema(), current_user")
    schema, role = cur.fetchone() or (None, None)
    if schema is None:
        raise StoreError(
            f"{where}: the role {role} may use no schema of its search path (as after REVOKE USAGE ON SCHEMA public "
            f"FROM PUBLIC): run GRANT USAGE ON SCHEMA public TO {role}, or set its search_path to one it may use"
        )
    cur.execute("SELECT to_regclass(%s) IS NOT NULL, to_regclass(%s) IS NOT NULL", (MIGRATIONS_TABLE, TABLE))
    found = cur.fetchone()
    assert found is not None
    has_migrations, has_table = found
    if not has_migrations:
        if has_table:
            raise StoreError(
                f"{where} has a table {TABLE} that afteraction did not create (no {MIGRATIONS_TABLE}); "
                "use another database or schema"
            )
        return 0
    cur.execute(f"SELECT name FROM {MIGRATIONS_TABLE}")
    applied = {str(name) for (name,) in cur.fetchall()}
    unknown = sorted(applied - {m.__name__ for m in MIGRATIONS})
    if unknown:
        raise StoreError(
            f"{where} has afteraction schema version {len(applied)} (migration {unknown[0]!r}), newer than this "
            f"afteraction understands (version {SCHEMA_VERSION}); upgrade afteraction to open it"
        )
    return len(applied)


def migrate(
    db: psycopg.Connection[tuple[object, ...]], where: str, migrations: Sequence[Migration] = MIGRATIONS
) -> int:
    """Apply the migrations not yet applied, in one transaction under an advisory lock; the
    resulting version. ``db`` is in autocommit mode. The ``vector`` extension must be there
    first (``require_vector``)."""
    with db.transaction(), db.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
        require_vector(cur, where)
        try:
            current = version(cur, where)
        except psycopg.errors.InsufficientPrivilege as exc:
            raise StoreError(
                f"{where}: the role may not read {MIGRATIONS_TABLE} ({exc}); as its owner run: "
                f"GRANT SELECT ON {MIGRATIONS_TABLE} TO <this role>"
            ) from exc
        if current >= len(migrations):
            return current
        _apply(cur, where, migrations)
    return len(migrations)


def _apply(cur: psycopg.Cursor[tuple[object, ...]], where: str, migrations: Sequence[Migration]) -> None:
    try:
        cur.execute(
            f"CREATE TABLE IF NOT EXISTS {MIGRATIONS_TABLE} "
            "(name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        cur.execute(f"SELECT name FROM {MIGRATIONS_TABLE}")
        applied = {str(name) for (name,) in cur.fetchall()}
        for migration in migrations:
            if migration.__name__ not in applied:
                migration(cur)
                cur.execute(f"INSERT INTO {MIGRATIONS_TABLE} (name) VALUES (%s)", (migration.__name__,))
    except psycopg.errors.InsufficientPrivilege as exc:
        raise StoreError(
            f"{where}: the role cannot apply afteraction's migrations ({exc}); grant it CREATE on the schema "
            "(or run `afteraction db upgrade` once as the owner, see docs/postgres.md)"
        ) from exc


def require_vector(cur: psycopg.Cursor[tuple[object, ...]], where: str) -> None:
    """StoreError naming what to do unless the pgvector extension (``vector``) is in this
    database; created here when the server has it and the role may create it."""
    cur.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'")
    if cur.fetchone() is not None:
        return
    cur.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
    if cur.fetchone() is None:
        raise StoreError(
            f"{where}: this PostgreSQL server does not have the pgvector extension ('vector'); install pgvector "
            "on the server (the postgresql-<version>-pgvector package, or https://github.com/pgvector/pgvector), "
            "then run CREATE EXTENSION vector; in this database as a superuser"
        )
    try:
        with cur.connection.transaction():
            cur.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.errors.InsufficientPrivilege as exc:
        raise StoreError(
            f"{where}: the pgvector extension is installed on the server but not created in this database, "
            "and this role may not create it; run CREATE EXTENSION vector; in this database as a superuser"
        ) from exc
