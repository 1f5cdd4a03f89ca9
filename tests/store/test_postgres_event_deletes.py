"""Deleting sessions in PostgreSQL as the application role (not the tables' owner): a service role granted before
deletion existed still opens, and is told the GRANT when it deletes; with it, row-level security keeps a crafted DELETE
as one tenant off another's events, sessions and counts."""

from __future__ import annotations

from datetime import datetime, timezone

import psycopg
import pytest

from afteraction.errors import StoreError
from afteraction.store.postgres import PostgresStore
from afteraction.store.postgres_events import PostgresEvents
from afteraction.store.postgres_privileges import EVENT_DELETE_PRIVILEGES, PRIVILEGES
from afteraction.store.postgres_schema import EVENT_COUNTS, EVENTS, SESSIONS
from tests.pg import Cluster
from tests.store.test_events import event

pytestmark = pytest.mark.postgres

ROLE = "afteraction_pruner"
TABLES = (EVENTS, SESSIONS, EVENT_COUNTS)


def test_the_application_role_deletes_its_tenants_sessions_and_nothing_of_another(
    pg_cluster: Cluster, pg_url: str
) -> None:
    owner = PostgresEvents(PostgresStore(pg_url))
    for tenant in ("acme", "globex"):
        owner.add_many(tenant, [event("e1", session="s1"), event("e2", session="s2", type="tool.called")])
    owner.close()
    database = psycopg.conninfo.conninfo_to_dict(pg_url)["dbname"]
    app_url = pg_cluster.role(pg_url, ROLE, PRIVILEGES)  # what docs/postgres.md told the owner to grant before
    app = PostgresEvents(PostgresStore(app_url))  # it opens: DELETE is not asked for at open
    try:
        with pytest.raises(StoreError, match=f"deleting sessions.*GRANT DELETE ON {EVENTS} TO <this role>"):
            app.delete_sessions("acme", ["s1"])
        with pytest.raises(StoreError, match=f"GRANT DELETE ON {SESSIONS} TO <this role>"):
            app.prune(None, datetime(2027, 1, 1, tzinfo=timezone.utc))
        assert app.session("acme", "s1") is not None and app.stats("acme").events == 2
    finally:
        app.close()
    with psycopg.connect(pg_url, autocommit=True) as db:
        for table, privileges in EVENT_DELETE_PRIVILEGES.items():
            db.execute(f"GRANT {', '.join(privileges)} ON {table} TO {ROLE}")
    app = PostgresEvents(PostgresStore(app_url))
    try:
        assert app.delete_sessions("acme", ["s1"]) == 1
        assert app.stats("acme").by_type == {"tool.called": 1}
        with psycopg.connect(app_url, autocommit=True) as db, db.transaction():
            db.execute("SELECT set_config('afteraction.tenant', 'acme', true)")
            for table in TABLES:
                assert db.execute(f"DELETE FROM {table} WHERE tenant = 'globex'").rowcount == 0, table
                assert db.execute(f"DELETE FROM {table} WHERE tenant <> 'acme'").rowcount == 0, table
        with psycopg.connect(app_url, autocommit=True) as db:  # every tenant's reads do not open deletes
            db.execute("SELECT set_config('afteraction.all_tenants', 'on', false)")
            for table in TABLES:
                assert db.execute(f"DELETE FROM {table}").rowcount == 0, table
        assert app.prune(None, datetime(2027, 1, 1, tzinfo=timezone.utc)) == 3  # each tenant's, as that tenant
        assert app.stats("acme").events == app.stats("globex").events == 0
    finally:
        app.close()
    with psycopg.connect(pg_cluster.admin_url, autocommit=True) as db:
        db.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        db.execute(f"DROP ROLE IF EXISTS {ROLE}")
