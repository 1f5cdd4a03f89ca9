"""What opening a PostgreSQL store says about bad input: each a StoreError (or ConfigError)
naming what is wrong and what to do, raised at open, never later."""

from __future__ import annotations

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

from afteraction.errors import ConfigError, StoreError
from afteraction.store.keys import open_keys
from afteraction.store.postgres import PostgresStore, pool_options
from afteraction.store.postgres_events import PostgresEvents
from afteraction.store.postgres_privileges import FUNCTIONS
from afteraction.store.postgres_schema import (
    EVENT_COUNTS,
    EVENTS,
    KEYS_TABLE,
    MIGRATIONS_TABLE,
    OTLP_SPANS,
    SESSIONS,
    TABLE,
    TERMS,
    VECTOR_MODELS,
    VECTORS,
)
from tests.pg import PASSWORD, PASSWORD_ROLE, Cluster

pytestmark = pytest.mark.postgres


def _name(url: str) -> str:
    return str(conninfo_to_dict(url)["dbname"])


def test_a_wrong_password_says_to_check_the_credentials(pg_cluster: Cluster, pg_url: str) -> None:
    url = f"postgresql://{PASSWORD_ROLE}:wrong@/{_name(pg_url)}?host={pg_cluster.root}"
    with pytest.raises(StoreError, match=r"password authentication failed.*check the user name and password") as e:
        PostgresStore(url)
    assert "wrong" not in str(e.value) and "***" in str(e.value)
    with pytest.raises(StoreError, match=r"no password supplied.*put it in the URL"):
        PostgresStore(f"postgresql://{PASSWORD_ROLE}@/{_name(pg_url)}?host={pg_cluster.root}")


def test_the_right_password_opens(pg_cluster: Cluster, pg_url: str) -> None:
    with psycopg.connect(pg_cluster.admin_url, autocommit=True) as db:
        db.execute(f"GRANT CREATE ON DATABASE {_name(pg_url)} TO {PASSWORD_ROLE}")
    with psycopg.connect(pg_cluster.url(_name(pg_url), "postgres"), autocommit=True) as db:
        db.execute(f"GRANT CREATE ON SCHEMA public TO {PASSWORD_ROLE}")
    PostgresStore(f"postgresql://{PASSWORD_ROLE}:{PASSWORD}@/{_name(pg_url)}?host={pg_cluster.root}").close()


def test_a_host_that_refuses_says_to_check_host_and_port() -> None:
    with pytest.raises(StoreError, match=r"Connection refused.*check the host and port in the URL"):
        PostgresStore("postgresql://app@127.0.0.1:1/db")


def test_a_missing_database_or_role_is_named(pg_cluster: Cluster) -> None:
    with pytest.raises(StoreError, match=r'database "no_such_db" does not exist.*CREATE DATABASE'):
        PostgresStore(pg_cluster.url("no_such_db"))
    with pytest.raises(StoreError, match='role "nobody" does not exist'):
        PostgresStore(pg_cluster.url("postgres", "nobody"))


def test_pool_options_in_the_url_are_taken_and_checked(pg_url: str) -> None:
    url, options = pool_options(f"{pg_url}&pool_max_size=3&pool_timeout=2.5")
    assert url == pg_url and options == {"max_size": 3.0, "timeout": 2.5}
    store = PostgresStore(f"{pg_url}&pool_min_size=2&pool_max_size=3")
    try:
        assert store._pool is not None and (store._pool.min_size, store._pool.max_size) == (2, 3)
    finally:
        store.close()
    with pytest.raises(ConfigError, match="pool_max_size='many': must be a positive integer"):
        PostgresStore(f"{pg_url}&pool_max_size=many")


def test_a_server_without_pgvector_says_to_install_it(pg_cluster: Cluster) -> None:
    url = pg_cluster.database(vector=False)
    with psycopg.connect(pg_cluster.admin_url, autocommit=True) as db:  # hide the server's extensions (PG 18)
        db.execute(f"ALTER DATABASE {_name(url)} SET extension_control_path = '/nonexistent'")
    try:
        with pytest.raises(StoreError, match=r"does not have the pgvector extension.*install pgvector"):
            PostgresStore(url)
    finally:
        pg_cluster.drop(url)


def test_a_database_without_the_vector_extension_says_who_must_create_it(pg_cluster: Cluster) -> None:
    url = pg_cluster.database(vector=False)
    try:
        with pytest.raises(StoreError, match=r"not created in this database.*CREATE EXTENSION vector; .* superuser"):
            PostgresStore(url)
        with psycopg.connect(pg_cluster.url(_name(url), "postgres"), autocommit=True) as db:
            db.execute("CREATE EXTENSION vector")
        PostgresStore(url).close()
    finally:
        pg_cluster.drop(url)


def test_a_role_missing_privileges_is_told_the_grants(pg_cluster: Cluster, pg_url: str) -> None:
    PostgresStore(pg_url).close()  # migrated by the owner
    with psycopg.connect(pg_cluster.admin_url, autocommit=True) as db:
        db.execute("DROP ROLE IF EXISTS afteraction_low")
        db.execute("CREATE ROLE afteraction_low LOGIN")
    low = pg_cluster.url(_name(pg_url), "afteraction_low")
    with pytest.raises(StoreError, match=f"may not read {MIGRATIONS_TABLE}.*GRANT SELECT ON {MIGRATIONS_TABLE}"):
        PostgresStore(low)
    with psycopg.connect(pg_url, autocommit=True) as db:
        db.execute(f"GRANT SELECT ON {MIGRATIONS_TABLE} TO afteraction_low")
        db.execute(f"GRANT SELECT ON {TABLE} TO afteraction_low")
    grants = f"GRANT INSERT, UPDATE ON {TABLE} TO <this role>; GRANT SELECT, INSERT, DELETE ON {TERMS} TO"
    with pytest.raises(StoreError, match=f"lacks privileges.*{grants}"):
        PostgresStore(low)
    with psycopg.connect(pg_url, autocommit=True) as db:
        db.execute(f"GRANT INSERT, UPDATE ON {TABLE} TO afteraction_low")  # no DELETE: asked for by forget alone
        db.execute(f"GRANT SELECT, INSERT, DELETE ON {TERMS} TO afteraction_low")
    grants = f"GRANT SELECT, INSERT, UPDATE ON {VECTORS} TO <this role>; GRANT SELECT, INSERT ON {VECTOR_MODELS} TO"
    with pytest.raises(StoreError, match=f"lacks privileges.*{grants}"):
        PostgresStore(low)
    with psycopg.connect(pg_url, autocommit=True) as db:
        db.execute(f"GRANT SELECT, INSERT, UPDATE ON {VECTORS} TO afteraction_low")
        db.execute(f"GRANT SELECT, INSERT ON {VECTOR_MODELS} TO afteraction_low")
    with psycopg.connect(pg_url, autocommit=True) as db:
        db.execute(f"REVOKE EXECUTE ON FUNCTION {FUNCTIONS[0]} FROM PUBLIC")  # as a hardened database would
    with pytest.raises(StoreError, match=r"lacks privileges.*GRANT EXECUTE ON FUNCTION afteraction_put\(text, "):
        PostgresStore(low)
    with psycopg.connect(pg_url, autocommit=True) as db:
        db.execute(f"GRANT EXECUTE ON FUNCTION {FUNCTIONS[0]} TO afteraction_low")
    store = PostgresStore(low)  # all an agent host needs: the service's tables are the service's to ask for
    try:
        service = f"GRANT SELECT, INSERT ON {EVENTS} TO <this role>; GRANT SELECT, INSERT, UPDATE ON {SESSIONS} TO"
        for opening in (PostgresEvents, open_keys):
            with pytest.raises(StoreError, match=f"lacks privileges the afteraction service needs.*{service}"):
                opening(store)
        with psycopg.connect(pg_url, autocommit=True) as db:
            db.execute(f"GRANT SELECT, INSERT ON {EVENTS} TO afteraction_low")
            db.execute(f"GRANT SELECT, INSERT, UPDATE ON {SESSIONS}, {EVENT_COUNTS}, {KEYS_TABLE} TO afteraction_low")
        with pytest.raises(StoreError, match=f"lacks privileges.*GRANT SELECT, INSERT, DELETE ON {OTLP_SPANS} TO"):
            PostgresEvents(store)  # the OTLP span buffer
        with psycopg.connect(pg_url, autocommit=True) as db:
            db.execute(f"GRANT SELECT, INSERT, DELETE ON {OTLP_SPANS} TO afteraction_low")
        open_keys(store)
        PostgresEvents(store)
    finally:
        store.close()


def test_pool_options_leave_the_other_options_encoded_as_libpq_reads_them() -> None:
    url, options = pool_options(
        "postgresql://app@/db?host=/run/pg&options=-c%20statement_timeout%3D5000&application_name=billing%20agent"
        "&pool_max_size=3"
    )
    assert url == (
        "postgresql://app@/db?host=/run/pg&options=-c%20statement_timeout%3D5000&application_name=billing%20agent"
    )
    assert options == {"max_size": 3.0}


def test_a_role_that_may_use_no_schema_is_told_the_grant_not_that_the_database_is_blank(
    pg_cluster: Cluster, pg_url: str
) -> None:
    PostgresStore(pg_url).close()  # migrated by the owner
    with psycopg.connect(pg_cluster.admin_url, autocommit=True) as db:
        db.execute("DROP ROLE IF EXISTS afteraction_noschema")
        db.execute("CREATE ROLE afteraction_noschema LOGIN")
    with psycopg.connect(pg_cluster.url(_name(pg_url), "postgres"), autocommit=True) as db:
        db.execute("REVOKE ALL ON SCHEMA public FROM PUBLIC")  # a common hardening step
    url = pg_cluster.url(_name(pg_url), "afteraction_noschema")
    grant = "GRANT USAGE ON SCHEMA public TO afteraction_noschema"
    with pytest.raises(StoreError, match=grant):
        PostgresStore(url)
    from afteraction.store.admin import status

    with pytest.raises(StoreError, match=grant):
        status(url)
