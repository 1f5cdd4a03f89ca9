"""Deleting records in PostgreSQL as the application role (not the tables' owner): a role without DELETE is told the
grant (it is not asked for at open); with it, the record's stems and vectors go with it, and row-level security keeps
a crafted DELETE as one tenant off another's rows."""

from __future__ import annotations

import psycopg
import pytest

from afteraction.errors import StoreError
from afteraction.store.base import StoredVector
from afteraction.store.postgres import PostgresStore
from afteraction.store.postgres_privileges import FORGET_PRIVILEGES, LIBRARY_PRIVILEGES
from afteraction.store.postgres_schema import TABLE, TERMS, VECTORS
from tests.conformance.builders import NOW, SCOPE, experience, scoped
from tests.pg import Cluster

pytestmark = pytest.mark.postgres

GLOBEX = scoped(SCOPE, tenant="globex")
ROLE = "afteraction_forgetter"


def test_the_application_role_deletes_its_tenants_records_and_nothing_of_another(
    pg_cluster: Cluster, pg_url: str
) -> None:
    owner = PostgresStore(pg_url)
    owner.put_many([experience("a-1", lesson="Rotate the zanzibar token."), experience("a-2")])
    owner.put_many([experience("a-1", scope=GLOBEX), experience("g-2", scope=GLOBEX)])
    owner.put_vectors([StoredVector(t, "a-1", 1, "m@1", [1.0, 0.0]) for t in ("acme", "globex")])
    owner.close()
    database = psycopg.conninfo.conninfo_to_dict(pg_url)["dbname"]
    app_url = pg_cluster.role(pg_url, ROLE, LIBRARY_PRIVILEGES)  # what docs/postgres.md tells the owner to grant
    # a role granted before forgetting existed opens, and is told the grant when it forgets
    app = PostgresStore(app_url)
    try:
        with pytest.raises(StoreError, match=f"forgetting a lesson.*GRANT DELETE ON {TABLE} TO <this role>"):
            app.delete(SCOPE, ["a-1"])
        assert app.get(SCOPE, "a-1") is not None
    finally:
        app.close()
    with psycopg.connect(pg_url, autocommit=True) as db:
        for table, privileges in FORGET_PRIVILEGES.items():
            db.execute(f"GRANT {', '.join(privileges)} ON {table} TO {ROLE}")
    app = PostgresStore(app_url)
    try:
        assert app.delete(SCOPE, ["a-1"]) == 1
        assert app.search_text(SCOPE, ["zanzibar"], now=NOW) == []
        assert app.search_vector(SCOPE, "m@1", [1.0, 0.0], now=NOW) == []
        assert [c.experience.id for c in app.search_vector(GLOBEX, "m@1", [1.0, 0.0], now=NOW)] == ["a-1"]
        with psycopg.connect(app_url, autocommit=True) as db, db.transaction():
            db.execute("SELECT set_config('afteraction.tenant', 'acme', true)")
            assert db.execute(f"DELETE FROM {TABLE} WHERE tenant = 'globex'").rowcount == 0
            assert db.execute(f"DELETE FROM {TABLE} WHERE id = 'a-1' OR id = 'g-2'").rowcount == 0
            with pytest.raises(psycopg.errors.InsufficientPrivilege), db.transaction():
                db.execute(f"DELETE FROM {VECTORS}")  # no grant: they go only with their record (ON DELETE CASCADE)
            assert db.execute(f"DELETE FROM {TERMS} WHERE tenant = 'globex'").rowcount == 0
        with psycopg.connect(app_url, autocommit=True) as db:  # no tenant set: nothing
            assert db.execute(f"DELETE FROM {TABLE}").rowcount == 0
    finally:
        app.close()
    with psycopg.connect(pg_url, autocommit=True) as db:  # the owner, outside the policies' reach
        db.execute("SELECT set_config('afteraction.all_tenants', 'on', false)")
        left = db.execute(f"SELECT tenant, id FROM {TABLE} ORDER BY tenant, id").fetchall()
        assert left == [("acme", "a-2"), ("globex", "a-1"), ("globex", "g-2")]
        db.execute("SELECT set_config('afteraction.all_tenants', 'off', false)")
        db.execute("SELECT set_config('afteraction.tenant', 'acme', false)")
        assert db.execute(f"SELECT count(*) FROM {VECTORS}").fetchone() == (0,)
        assert db.execute(f"SELECT count(*) FROM {TERMS} WHERE term = 'zanzibar'").fetchone() == (0,)
        db.execute("SELECT set_config('afteraction.tenant', 'globex', false)")
        assert db.execute(f"SELECT count(*) FROM {VECTORS}").fetchone() == (1,)
    with psycopg.connect(pg_cluster.admin_url, autocommit=True) as db:
        db.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        db.execute(f"DROP ROLE IF EXISTS {ROLE}")
