"""The PostgreSQL migrations of the service's tables: events (m003), API keys (m004, and their
event rates: m010) and the OTLP span buffer (m008).

They live apart from ``postgres_schema`` (the experiences, terms and vectors tables, and the
migration runner) only to keep each file to one concept; ``postgres_schema.MIGRATIONS`` lists
them in order with the others.
"""

from __future__ import annotations

import psycopg

__all__ = [
    "EVENTS",
    "EVENT_COUNTS",
    "KEYS_TABLE",
    "OTLP_SPANS",
    "SESSIONS",
    "m003_events",
    "m004_keys",
    "m008_otlp_spans",
    "m010_key_event_rates",
]


KEYS_TABLE = "afteraction_api_keys"


def m004_keys(cur: psycopg.Cursor[tuple[object, ...]]) -> None:
    """API keys (the SHA-256 of each token, never the token), under row-level security: a
    transaction sees its tenant's keys, plus the one key whose id it names in
    ``afteraction.key_id`` (authenticating a request, whose tenant is not known before its key
    is). Keys are never deleted (no DELETE policy): revoking sets ``revoked_at``."""
    cur.execute(
        f"""
        CREATE TABLE {KEYS_TABLE} (
            id text PRIMARY KEY,
            tenant text NOT NULL,
            project text,
            name text,
            scopes text NOT NULL,
            rate double precision,
            burst integer,
            legacy_signatures boolean NOT NULL,
            require_signatures boolean NOT NULL,
            token_hash text NOT NULL,
            created_at timestamptz NOT NULL,
            revoked_at timestamptz
        )
        """
    )
    cur.execute(f"CREATE INDEX {KEYS_TABLE}_tenant ON {KEYS_TABLE} (tenant, created_at, id)")
    cur.execute(f"ALTER TABLE {KEYS_TABLE} ENABLE ROW LEVEL SECURITY")
    cur.execute(f"ALTER TABLE {KEYS_TABLE} FORCE ROW LEVEL SECURITY")
    tenant = "tenant = current_setting('afteraction.tenant', true)"
    cur.execute(
        f"""
        CREATE POLICY {KEYS_TABLE}_reads ON {KEYS_TABLE} FOR SELECT
        USING ({tenant} OR id = current_setting('afteraction.key_id', true)
               OR current_setting('afteraction.all_tenants', true) = 'on')
        """
    )
    cur.execute(f"CREATE POLICY {KEYS_TABLE}_inserts ON {KEYS_TABLE} FOR INSERT WITH CHECK ({tenant})")
    cur.execute(f"CREATE POLICY {KEYS_TABLE}_updates ON {KEYS_TABLE} FOR UPDATE USING ({tenant}) WITH CHECK ({tenant})")


def m010_key_event_rates(cur: psycopg.Cursor[tuple[object, ...]]) -> None:
    """A key's event rate (``Key.event_rate``, events per second) and ``event_burst`` beside its
    request rate: both NULL, no limit, for the keys made before. The policies of m004 cover them."""
    cur.execute(f"ALTER TABLE {KEYS_TABLE} ADD COLUMN event_rate double precision, ADD COLUMN event_burst integer")


EVENTS = "afteraction_events"
SESSIONS = "afteraction_sessions"
EVENT_COUNTS = "afteraction_event_counts"


def _tenant_policies(cur: psycopg.Cursor[tuple[object, ...]], table: str) -> None:
    """Row-level security on ``table`` keyed as on the experiences (m002): a transaction sees and
    writes only the rows of its ``afteraction.tenant``; ``afteraction.all_tenants`` reads all."""
    cur.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
    cur.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
    cur.execute(
        f"""
        CREATE POLICY {table}_tenant_reads ON {table} FOR SELECT
        USING (tenant = current_setting('afteraction.tenant', true)
               OR current_setting('afteraction.all_tenants', true) = 'on')
        """
    )
    for command in ("INSERT", "UPDATE", "DELETE"):
        check = "" if command == "DELETE" else " WITH CHECK (tenant = current_setting('afteraction.tenant', true))"
        using = "" if command == "INSERT" else " USING (tenant = current_setting('afteraction.tenant', true))"
        cur.execute(f"CREATE POLICY {table}_tenant_{command.lower()}s ON {table} FOR {command}{using}{check}")


def m003_events(cur: psycopg.Cursor[tuple[object, ...]]) -> None:
    """AEP events deduplicated per tenant (never globally), one row per session kept current by
    the ingest, and the count of each event type per tenant; instants are integer microseconds
    since the epoch (UTC), as in SQLite, so both backends order and page alike."""
    cur.execute(
        f"""
        CREATE TABLE {EVENTS} (
            pk bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            tenant text NOT NULL,
            id text NOT NULL,
            session_id text NOT NULL,
            trace_id text NOT NULL,
            parent_session_id text,
            type text NOT NULL,
            at bigint NOT NULL,
            data text NOT NULL,
            UNIQUE (tenant, id)
        )
        """
    )
    cur.execute(f"CREATE INDEX {EVENTS}_session_at ON {EVENTS} (tenant, session_id, at, pk)")
    cur.execute(f"CREATE INDEX {EVENTS}_tenant_at ON {EVENTS} (tenant, at, pk)")
    cur.execute(
        f"""
        CREATE TABLE {SESSIONS} (
            tenant text NOT NULL,
            id text NOT NULL,
            trace_id text NOT NULL,
            parent_session_id text,
            source text NOT NULL,
            started_at bigint NOT NULL,
            ended_at bigint NOT NULL,
            events bigint NOT NULL,
            PRIMARY KEY (tenant, id)
        )
        """
    )
    cur.execute(f"CREATE INDEX {SESSIONS}_started ON {SESSIONS} (tenant, started_at, id)")
    cur.execute(f"CREATE INDEX {SESSIONS}_parent ON {SESSIONS} (tenant, parent_session_id, started_at, id)")
    cur.execute(f"CREATE INDEX {SESSIONS}_trace ON {SESSIONS} (tenant, trace_id, started_at, id)")
    cur.execute(
        f"CREATE TABLE {EVENT_COUNTS} (tenant text NOT NULL, type text NOT NULL, events bigint NOT NULL, "
        "PRIMARY KEY (tenant, type))"
    )
    for table in (EVENTS, SESSIONS, EVENT_COUNTS):
        _tenant_policies(cur, table)


OTLP_SPANS = "afteraction_otlp_spans"


def m008_otlp_spans(cur: psycopg.Cursor[tuple[object, ...]]) -> None:
    """The OTLP span buffer (``store.spans``): spans that wait for their ancestors, per tenant and
    trace, with the time they arrived (Unix seconds); row-level security as on the events."""
    cur.execute(
        f"""
        CREATE TABLE {OTLP_SPANS} (
            tenant text NOT NULL,
            trace_id text NOT NULL,
            span_id text NOT NULL,
            received double precision NOT NULL,
            data text NOT NULL,
            PRIMARY KEY (tenant, trace_id, span_id)
        )
        """
    )
    _tenant_policies(cur, OTLP_SPANS)
