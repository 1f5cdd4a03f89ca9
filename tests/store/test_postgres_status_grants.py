"""``db status`` and ``serve`` read a PostgreSQL schema's migrations before anything else: a role without SELECT on
``afteraction_migrations`` is told the GRANT to run, as opening the store tells it, not only "permission denied"."""

from __future__ import annotations

import psycopg
import pytest
from click.testing import CliRunner

from afteraction.cli import main
from afteraction.errors import StoreError
from afteraction.store import admin
from afteraction.store.postgres import PostgresStore
from afteraction.store.postgres_privileges import PRIVILEGES
from afteraction.store.postgres_schema import MIGRATIONS_TABLE
from tests.pg import Cluster

pytestmark = pytest.mark.postgres

ROLE = "afteraction_no_migrations"
GRANT = f"GRANT SELECT ON {MIGRATIONS_TABLE} TO <this role>"


def test_a_role_that_may_not_read_the_migrations_is_told_the_grant(pg_cluster: Cluster, pg_url: str) -> None:
    PostgresStore(pg_url).close()  # migrated by the owner
    granted = {table: p for table, p in PRIVILEGES.items() if table != MIGRATIONS_TABLE}
    url = pg_cluster.role(pg_url, ROLE, granted)
    try:
        with pytest.raises(StoreError, match=f"may not read {MIGRATIONS_TABLE}.*; as its owner run: {GRANT}"):
            admin.status(url)
        done = CliRunner().invoke(main, ["serve", "--dev", "--db", url])
        assert done.exit_code == 1
        assert GRANT in done.output, done.output
    finally:
        pg_cluster.drop(pg_url)
        with psycopg.connect(pg_cluster.admin_url, autocommit=True) as db:
            db.execute(f"DROP ROLE IF EXISTS {ROLE}")
