"""The KeyStore contract, one suite over SQLite and PostgreSQL; and the key record, tokens and
server secret it rests on."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import psycopg
import pytest

from afteraction.errors import ConfigError, ConflictError, NotFoundError, ValidationError
from afteraction.store import open_store, postgres_schema, sqlite_schema
from afteraction.store.keys import (
    COLUMNS,
    DEFAULT_EVENT_BURST,
    Key,
    KeyStore,
    ServerSecret,
    hash_token,
    key_id_of,
    key_row,
    mint,
    open_keys,
    parse_rate,
    parse_scopes,
    token_matches,
)
from afteraction.store.postgres_schema import KEYS_TABLE
from afteraction.store.sqlite import micros

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
LATER = NOW + timedelta(hours=1)
SECRET = ServerSecret(b"s" * 40)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "keys.db")
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def keys(url: str) -> Iterator[KeyStore]:
    store = open_store(url)
    try:
        yield open_keys(store)
    finally:
        store.close()


def add(keys: KeyStore, tenant: str = "acme", scopes: str = "read", **options: object) -> tuple[Key, str]:
    key, token = mint(tenant, scopes, now=options.pop("now", NOW), **options)  # type: ignore[arg-type]
    keys.add(key, hash_token(token))
    return key, token


# the contract


def test_a_key_round_trips_with_every_field(keys: KeyStore) -> None:
    # both signature flags: mint refuses them now, but a key stored with both before (0.1.0) still loads
    minted, token = mint(
        "acme", "read,write,admin", now=NOW, project="refunds", name="ci", rate=2.5, burst=7, event_rate=250.5,
        event_burst=300, require_signatures=True,
    )  # fmt: skip
    key = replace(minted, legacy_signatures=True)
    keys.add(key, hash_token(token))
    found = keys.find(key.id)
    assert found is not None
    stored, stored_hash = found
    assert stored == key
    assert stored.scopes == {"read", "write", "admin"} and stored.rate == 2.5 and stored.burst == 7
    assert (stored.event_rate, stored.event_burst) == (250.5, 300)
    assert token_matches(token, stored_hash) and not token_matches(token + "x", stored_hash)
    assert token not in stored_hash and token not in repr(stored) and token not in str(stored.to_dict())


def test_find_sees_every_tenant_but_only_the_id_asked(keys: KeyStore) -> None:
    acme, _ = add(keys, "acme")
    globex, _ = add(keys, "globex")
    assert keys.find(acme.id) is not None and keys.find(globex.id) is not None
    assert keys.find("afa_0000000000000000") is None


def test_list_is_per_tenant_and_project_oldest_first(keys: KeyStore) -> None:
    first, _ = add(keys, "acme", now=NOW)
    second, _ = add(keys, "acme", project="refunds", now=LATER)
    other, _ = add(keys, "globex")
    assert [k.id for k in keys.list("acme")] == [first.id, second.id]
    assert [k.id for k in keys.list("acme", project="refunds")] == [second.id]
    assert [k.id for k in keys.list("globex")] == [other.id]
    assert keys.list("initech") == []
    assert {k.id for k in keys.list()} == {first.id, second.id, other.id}


def test_revoke_keeps_the_key_and_marks_it(keys: KeyStore) -> None:
    key, _ = add(keys)
    revoked = keys.revoke(key.id, at=LATER, tenant="acme")
    assert revoked.revoked_at == LATER and not revoked.active
    found = keys.find(key.id)
    assert found is not None and found[0].revoked_at == LATER
    again = keys.revoke(key.id, at=LATER + timedelta(hours=1))  # the operator, no tenant: a no-op
    assert again.revoked_at == LATER


def test_a_tenant_cannot_revoke_another_tenants_key(keys: KeyStore) -> None:
    key, _ = add(keys, "globex")
    with pytest.raises(NotFoundError, match="in tenant 'acme'"):
        keys.revoke(key.id, at=LATER, tenant="acme")
    found = keys.find(key.id)
    assert found is not None and found[0].active
    with pytest.raises(NotFoundError):
        keys.revoke("afa_0000000000000000", at=LATER)


def test_limits_are_listed_as_stored_and_none_means_none(keys: KeyStore) -> None:
    free, _ = add(keys, now=NOW)
    events_only, _ = add(keys, event_rate=0.5, now=LATER)
    listed = keys.list("acme")
    assert listed == [free, events_only]
    assert (listed[0].rate, listed[0].burst, listed[0].event_rate, listed[0].event_burst) == (None, None, None, None)
    assert (listed[1].rate, listed[1].event_rate, listed[1].event_burst) == (None, 0.5, DEFAULT_EVENT_BURST)


def test_keys_made_before_event_rates_upgrade_and_keep_working(url: str) -> None:
    """A keys table populated at the schema before the event rates (SQLite m009, PostgreSQL m010):
    upgrading keeps every key, its fields and its token, with no event rate; new keys take one."""
    made = [
        mint("acme", "read,write", now=NOW, name="ci", rate=2.5, burst=7, require_signatures=True),
        mint("acme", "admin", now=LATER, project="refunds"),
        mint("globex", "write", now=NOW, legacy_signatures=True),
    ]
    old = [column for column in COLUMNS if not column.startswith("event_")]
    rows = [dict(zip(COLUMNS, key_row(key, hash_token(token)), strict=True)) for key, token in made]
    insert = f"INSERT INTO {{table}} ({', '.join(old)}) VALUES ({{marks}})"
    if url.startswith("postgresql"):
        at = [m.__name__ for m in postgres_schema.MIGRATIONS].index("m010_key_event_rates")
        with psycopg.connect(url, autocommit=True) as db:
            postgres_schema.migrate(db, "test", postgres_schema.MIGRATIONS[:at])
            for row in rows:
                with db.transaction():  # as the store before wrote them: the tenant set, then the row
                    db.execute("SELECT set_config('afteraction.tenant', %s, true)", (row["tenant"],))
                    sql = insert.format(table=KEYS_TABLE, marks=", ".join(["%s"] * len(old)))
                    db.execute(sql, [row[column] for column in old])
    else:
        before = [m.__name__ for m in sqlite_schema.MIGRATIONS].index("m009_key_event_rates")
        with closing(sqlite3.connect(url, isolation_level=None)) as db:
            sqlite_schema.migrate(db, url, sqlite_schema.MIGRATIONS[:before])
            for row in rows:
                row["created_at"] = micros(row["created_at"])
                db.execute(insert.format(table="api_keys", marks=", ".join("?" * len(old))), [row[c] for c in old])
    store = open_store(url)
    try:
        keys = open_keys(store)
        for key, token in made:
            found = keys.find(key.id)
            assert found is not None and found[0] == key and token_matches(token, found[1])
            assert (found[0].event_rate, found[0].event_burst) == (None, None)
        assert [k.id for k in keys.list("acme")] == [made[0][0].id, made[1][0].id]
        limited, _ = add(keys, "globex", "write", event_rate=100, event_burst=150)
        found = keys.find(limited.id)
        assert found is not None and (found[0].event_rate, found[0].event_burst) == (100.0, 150)
    finally:
        store.close()


def test_the_same_id_twice_is_a_conflict(keys: KeyStore) -> None:
    key, token = add(keys)
    with pytest.raises(ConflictError):
        keys.add(key, hash_token(token))


# PostgreSQL: row-level security holds for a role that is not the table's owner's bypass


@pytest.mark.postgres
def test_postgres_rows_are_hidden_without_the_tenant_or_the_key_id(pg_url: str) -> None:
    store = open_store(pg_url)
    try:
        keys = open_keys(store)
        acme, _ = add(keys, "acme")
        add(keys, "globex")
    finally:
        store.close()
    with psycopg.connect(pg_url, autocommit=True) as db:
        assert db.execute(f"SELECT count(*) FROM {KEYS_TABLE}").fetchone() == (0,)
        with db.transaction():
            db.execute("SELECT set_config('afteraction.key_id', %s, true)", (acme.id,))
            assert db.execute(f"SELECT id FROM {KEYS_TABLE}").fetchall() == [(acme.id,)]
        with db.transaction():
            db.execute("SELECT set_config('afteraction.tenant', 'globex', true)")
            assert db.execute(f"UPDATE {KEYS_TABLE} SET revoked_at = now() WHERE id = %s", (acme.id,)).rowcount == 0
        with db.transaction():
            db.execute("SELECT set_config('afteraction.tenant', 'acme', true)")
            assert db.execute(f"DELETE FROM {KEYS_TABLE}").rowcount == 0  # keys are revoked, never deleted


# the record, tokens and secret


def test_tokens_are_random_with_a_visible_id() -> None:
    key, token = mint("acme", ["read"], now=NOW)
    other, other_token = mint("acme", ["read"], now=NOW)
    assert re.fullmatch(r"afa_[0-9a-f]{16}_[A-Za-z0-9_-]{43}", token)
    assert token.startswith(key.id + "_") and key.id != other.id and token != other_token
    assert key_id_of(token) == key.id
    for bad in ("", "afa_", key.id, token + "x", token.replace("afa_", "aep_"), "Bearer " + token):
        assert key_id_of(bad) is None


def test_a_key_refuses_bad_fields() -> None:
    cases: list[tuple[dict[str, object], str]] = [
        ({"scopes": []}, "scopes"),
        ({"scopes": ["read", "root"]}, "scopes"),
        ({"tenant": " "}, "tenant"),
        ({"project": "a\nb"}, "project"),
        ({"rate": 0}, "rate"),
        ({"rate": float("inf")}, "rate"),
        ({"rate": "5"}, "rate"),
        ({"burst": 3}, "burst"),
        ({"rate": 1, "burst": 0}, "burst"),
        ({"event_rate": 0}, "event_rate"),
        ({"event_rate": float("nan")}, "event_rate"),
        ({"event_rate": 2e6}, "event_rate"),
        ({"event_rate": True}, "event_rate"),
        ({"event_burst": 100}, "event_burst"),
        ({"event_rate": 1, "event_burst": 0}, "event_burst"),
        ({"event_rate": 1, "event_burst": 10**7}, "event_burst"),
        ({"event_rate": 1, "event_burst": 2.0}, "event_burst"),
        ({"legacy_signatures": "yes"}, "legacy_signatures"),
        ({"id": "afa_XYZ"}, "id"),
    ]
    for changes, field in cases:
        values: dict[str, object] = {"id": "afa_0123456789abcdef", "tenant": "acme", "scopes": ["read"]}
        values["created_at"] = NOW
        values.update(changes)
        with pytest.raises(ValidationError) as caught:
            Key(**values)  # type: ignore[arg-type]
        assert caught.value.field == field, changes


def test_a_rate_without_a_burst_gets_one_second_of_it() -> None:
    assert mint("acme", "read", now=NOW, rate=0.5)[0].burst == 1
    assert mint("acme", "read", now=NOW, rate=20)[0].burst == 20


def test_an_event_rate_without_a_burst_takes_the_largest_request_or_a_second_of_it() -> None:
    assert mint("acme", "write", now=NOW, event_rate=0.5)[0].event_burst == DEFAULT_EVENT_BURST
    assert mint("acme", "write", now=NOW, event_rate=50_000.5)[0].event_burst == 50_001
    key = mint("acme", "write", now=NOW, event_rate=3)[0]
    assert (key.rate, key.burst) == (None, None)  # the two limits are apart


def test_key_json_round_trips_and_holds_no_secret() -> None:
    key, token = mint("acme", "write,read", now=NOW, project="p", rate=3, burst=4)
    data = key.to_dict()
    assert data["scopes"] == ["read", "write"]
    assert Key.from_dict(data) == key
    assert token.split("_", 2)[2] not in str(data)
    with pytest.raises(ValidationError, match="token"):
        Key.from_dict({**data, "token": token})


def test_scopes_and_rates_parse_from_the_command_line_forms() -> None:
    assert parse_scopes("read, write") == {"read", "write"}
    assert parse_rate("10/s") == 10.0 and parse_rate("0.5") == 0.5 and parse_rate("2 / sec") == 2.0
    with pytest.raises(ValidationError, match="events per second") as caught:
        parse_rate("many", "--event-rate", "events")
    assert caught.value.field == "--event-rate"
    for bad in ("", "ten/s", "10/min", "-1/s"):
        with pytest.raises(ValidationError):
            parse_rate(bad)


def test_the_server_secret_comes_from_a_file_or_the_environment(tmp_path: Path) -> None:
    assert ServerSecret.load({}) is None
    value = "x" * 48
    from_env = ServerSecret.load({"AFTERACTION_SERVER_SECRET": value})
    (tmp_path / "secret").write_text(value + "\n")
    from_file = ServerSecret.load({}, str(tmp_path / "secret"))
    assert from_env is not None and from_file is not None
    assert from_env.signing_secret("afa_0123456789abcdef") == from_file.signing_secret("afa_0123456789abcdef")
    assert value not in repr(from_env)
    with pytest.raises(ConfigError, match="at least 32"):
        ServerSecret.load({"AFTERACTION_SERVER_SECRET": "short"})
    with pytest.raises(ConfigError, match="cannot read"):
        ServerSecret.load({"AFTERACTION_SERVER_SECRET_FILE": str(tmp_path / "missing")})


def test_signing_secrets_differ_per_key_and_per_server_secret() -> None:
    other = ServerSecret(b"t" * 40)
    a, b = "afa_0123456789abcdef", "afa_fedcba9876543210"
    assert SECRET.signing_secret(a) == SECRET.signing_secret(a)
    assert len({SECRET.signing_secret(a), SECRET.signing_secret(b), other.signing_secret(a)}) == 3
    assert SECRET.derive("cursor") != SECRET.derive("signing-secret/v1\0" + a)


def test_keys_need_a_database_file() -> None:
    with pytest.raises(ConfigError, match="outlives the process"):
        open_keys(open_store(":memory:"))
