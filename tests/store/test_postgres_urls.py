"""How PostgreSQL URLs are read: the scheme in any case and SQLAlchemy's driver suffixes
(``store.postgres_url``), the pool options taken out of the query without touching the rest
(``postgres.pool_options``), and the password kept out of every message about a URL libpq
refuses (``postgres_errors.hide_password``), from the library and from the CLI."""

from __future__ import annotations

import re
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner
from psycopg.conninfo import conninfo_to_dict

from afteraction.cli import main
from afteraction.errors import ConfigError, StoreError
from afteraction.store import locate, open_store
from afteraction.store.postgres import PostgresStore, pool_options, redact
from afteraction.store.postgres_errors import explain
from tests.pg import PASSWORD, PASSWORD_ROLE, Cluster

#: Nothing listens on port 1: an open fails without the network, after libpq has read the URL.
NOWHERE = "127.0.0.1:1"
SCOPE_OPTIONS = ["--scope", "tenant=acme", "--scope", "app=support", "--scope", "project=refunds"]


@pytest.mark.parametrize(
    ("url", "target"),
    [
        ("postgresql://u@h/db", "postgresql://u@h/db"),
        ("postgres://u@h/db", "postgres://u@h/db"),
        ("postgresql+psycopg://u@h/db", "postgresql://u@h/db"),
        ("postgresql+psycopg_async://u:S3cret@h:5432/db", "postgresql://u:S3cret@h:5432/db"),
        ("postgresql+psycopg2://u@h/db", "postgresql://u@h/db"),
        ("POSTGRESQL://u@h/db", "postgresql://u@h/db"),
        ("PostgreSQL+Psycopg_Async://u@h/DB", "postgresql://u@h/DB"),
        ("Postgres://u@h/db?application_name=A+B", "postgres://u@h/db?application_name=A+B"),
    ],
)
def test_every_postgres_scheme_and_driver_suffix_names_postgres(url: str, target: str) -> None:
    from afteraction.store import postgres_url  # new with this fix: imported here so the rest runs on older code

    assert locate(url) == ("postgresql", target)
    assert postgres_url(url) == target


def test_an_async_driver_url_is_never_an_sqlite_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    url = f"postgresql+psycopg_async://app:S3cret-pw@{NOWHERE}/afteraction"
    with pytest.raises(StoreError, match="cannot open the PostgreSQL store") as raised:
        open_store(url)
    assert "S3cret-pw" not in str(raised.value)
    assert list(tmp_path.iterdir()) == []  # no local file named after the URL


def test_what_is_not_postgres_stays_as_it_was() -> None:
    from afteraction.store import postgres_url

    assert postgres_url("sqlite:///x.db") is None and postgres_url("postgresqlx://h/db") is None
    assert postgres_url("postgresql+://h/db") is None and postgres_url("my_dir/postgresql://x") is None
    assert locate("my_dir:notes.db") == ("sqlite", "my_dir:notes.db")
    with pytest.raises(ConfigError, match="is not one afteraction can open"):
        locate("postgresql+no.dots://h/db")


@pytest.mark.parametrize("url", ["http://localhost:8787", "https://bob:pw-123@memory.example.com"])
def test_a_service_url_says_what_opens_it_and_what_a_store_needs(url: str) -> None:
    with pytest.raises(ConfigError, match=r"afteraction service.*RemoteMemory.*needs a database URL") as raised:
        open_store(url)
    assert "pw-123" not in str(raised.value) and "not available yet" not in str(raised.value)


# the pool options


@pytest.mark.parametrize(
    ("url", "kept"),
    [
        ("postgresql://u@h/db?application_name=a+b&pool_max_size=3", "postgresql://u@h/db?application_name=a+b"),
        ("postgresql://u@h/db?pool_max_size=3&password=p+q", "postgresql://u@h/db?password=p+q"),
        (
            "postgresql://u@h/db?options=-c%20x%3D1&pool_min_size=2&sslmode=require&pool_timeout=2.5",
            "postgresql://u@h/db?options=-c%20x%3D1&sslmode=require",
        ),
        ("postgresql://u:p%2Bq@h/db?a=1;b&&c=%7e&pool%5Fmax%5Fsize=3", "postgresql://u:p%2Bq@h/db?a=1;b&&c=%7e"),
        ("postgresql://u@h/db?pool_max_size=3", "postgresql://u@h/db"),
    ],
)
def test_pool_options_leave_every_other_byte_of_the_url_as_it_was(url: str, kept: str) -> None:
    rest, options = pool_options(url)
    assert rest == kept and options
    assert pool_options(rest) == (rest, {})


# the password in messages

MALFORMED = [
    # a % in the password that starts no %XX escape: libpq quotes the token
    (f"postgresql://app:50%off-Secret@{NOWHERE}/afteraction", "50%off-Secret"),
    (f"postgresql://app@{NOWHERE}/afteraction?password=70%zz-Secret", "70%zz-Secret"),
    # a % escape libpq forbids (%00): it quotes the token too
    (f"postgresql://app:nul%00-Secret@{NOWHERE}/afteraction", "nul%00-Secret"),
]


@pytest.mark.parametrize(("url", "password"), MALFORMED)
def test_opening_a_malformed_url_never_shows_the_password(url: str, password: str) -> None:
    with pytest.raises(StoreError, match=r"cannot open the PostgreSQL store.*percent-encoded.*%25") as raised:
        PostgresStore(url)
    assert password not in str(raised.value) and password.split("%")[0] not in str(raised.value)


def test_an_upper_case_scheme_opens_as_postgresql_and_never_shows_the_password() -> None:
    url = f"POSTGRESQL://app:Hunter2-Secret@{NOWHERE}/afteraction"
    with pytest.raises(StoreError, match="Connection refused") as raised:
        open_store(url)
    assert "Hunter2-Secret" not in str(raised.value)
    with pytest.raises(StoreError, match="Connection refused") as raised:
        PostgresStore(url)
    assert "Hunter2-Secret" not in str(raised.value)


def test_libpq_text_quoting_a_url_is_redacted_with_or_without_the_url() -> None:
    url = "POSTGRESQL://app:Hunter2-Secret@127.0.0.1:1/afteraction"
    try:
        psycopg.connect(url)  # libpq reads a scheme it does not know as key=value text, and quotes it whole
    except psycopg.Error as exc:
        error = exc
    assert "Hunter2-Secret" in str(error)
    for shown in (explain(error), explain(error, url)):
        assert "Hunter2-Secret" not in shown and "app:***@127.0.0.1:1" in shown


def test_the_password_is_hidden_as_written_and_percent_decoded() -> None:
    from afteraction.store.postgres_errors import hide_password

    url = "postgresql://app:p%40ss%2Fw0rd@h/db"
    text = "raw p%40ss%2Fw0rd, decoded p@ss/w0rd"
    assert hide_password(text, url) == "raw ***, decoded ***"
    assert redact("postgresql://app:a/b-Secret@h/db") == "postgresql://app:***@h/db"  # redact_url alone misses it
    assert hide_password("x", None) == "x"


@pytest.mark.parametrize(
    ("url", "password"), [*MALFORMED, ("POSTGRESQL://app:Hunter2-Secret@127.0.0.1:1/x", "Hunter2")]
)
@pytest.mark.parametrize("command", [["db", "status"], ["db", "upgrade"], ["lessons", *SCOPE_OPTIONS], ["export"]])
def test_the_cli_never_shows_the_password_of_a_url_it_cannot_open(url: str, password: str, command: list[str]) -> None:
    result = CliRunner().invoke(main, [*command, "--db", url])
    assert result.exit_code != 0 and "error:" in result.output
    assert password not in result.output and password.split("%")[0] not in result.output


# with a server


@pytest.mark.postgres
def test_a_plus_in_a_password_survives_a_pool_option(pg_cluster: Cluster, pg_url: str) -> None:
    name = str(conninfo_to_dict(pg_url)["dbname"])
    with psycopg.connect(pg_cluster.admin_url, autocommit=True) as db:
        db.execute(f"ALTER ROLE {PASSWORD_ROLE} PASSWORD 'p+q'")
        db.execute(f"GRANT CREATE ON DATABASE {name} TO {PASSWORD_ROLE}")
    try:
        with psycopg.connect(pg_cluster.url(name, "postgres"), autocommit=True) as db:
            db.execute(f"GRANT CREATE ON SCHEMA public TO {PASSWORD_ROLE}")
        url = f"postgresql://{PASSWORD_ROLE}@/{name}?host={pg_cluster.root}&password=p+q&application_name=a+b"
        store = PostgresStore(url + "&pool_max_size=3")
        try:
            with psycopg.connect(store.url) as db:
                assert db.execute("SHOW application_name").fetchone() == ("a+b",)
        finally:
            store.close()
    finally:
        with psycopg.connect(pg_cluster.admin_url, autocommit=True) as db:
            db.execute(f"ALTER ROLE {PASSWORD_ROLE} PASSWORD '{PASSWORD}'")


@pytest.mark.postgres
def test_an_upper_case_scheme_and_an_async_driver_open(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # where a URL misread as an SQLite path would create its file
    url = pg_url.replace("postgresql://", "POSTGRESQL+psycopg_async://", 1)
    store = open_store(url)
    assert isinstance(store, PostgresStore) and store.url == pg_url
    store.close()
    PostgresStore(url).close()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://postgres:postgres@127.0.0.1:1/postgres", "postgresql://postgres:***@127.0.0.1:1/postgres"),
        ("postgresql://app:p@127.0.0.1:1/app", "postgresql://app:***@127.0.0.1:1/app"),
    ],
)
def test_a_password_that_is_also_a_name_or_a_letter_leaves_the_message_readable(url: str, shown: str) -> None:
    """The password was masked as a plain substring: ``***ql://***:***@127.0.0.1:1/***`` and
    ``***ort 1 failed``, ``acce***ting`` (a password ``p``)."""
    assert redact(url) == shown
    with pytest.raises(StoreError) as raised:
        PostgresStore(url)
    message = str(raised.value)
    assert shown in message and "port 1 failed" in message and "***ort" not in message


@pytest.mark.parametrize("password", ['Tr0ub4dor"x9', "Tr0ub4dor'x9", "Tr0ub4dor x9", "Zq7se@cretXy", "Zq7se#cret/Xy"])
def test_a_password_with_a_quote_space_or_at_sign_is_never_shown(password: str) -> None:
    """libpq accepts these unencoded; the message quoted the URL whole (``store at postgresql://app:Tr0ub4dor"x9@…``)
    or a part of the password as a host (``failed to resolve host 'cretXy@127.0.0.1'``)."""
    url = f"postgresql://app:{password}@127.0.0.1:1/db"
    with pytest.raises(StoreError) as raised:
        PostgresStore(url, timeout=2)
    message = str(raised.value)
    pieces = [p for p in re.split(r"[\s\"'@/#]+", password) if len(p) >= 2]
    assert all(piece not in message for piece in pieces), message
    assert "cannot open the PostgreSQL store at postgresql://app:***@" in message
    result = CliRunner().invoke(main, ["db", "status", "--db", url])
    assert result.exit_code != 0 and all(piece not in result.output for piece in pieces), result.output


def test_a_space_in_a_password_is_hinted_as_a_space_not_as_a_percent_escape() -> None:
    with pytest.raises(StoreError) as raised:
        PostgresStore("postgresql://app:Tr0ub4dor x9@127.0.0.1:1/db", timeout=2)
    message = str(raised.value)
    assert "write a space in a name or password as %20" in message and "%25" not in message
    assert "Tr0ub4dor" not in message
