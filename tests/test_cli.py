from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

import afteraction as aa
from afteraction.cli import main
from afteraction.store.sqlite_schema import MIGRATIONS, MIGRATIONS_TABLE, migrate
from tests._golden import assert_golden

SCOPE = [
    "--scope",
    "tenant=demo",
    "--scope",
    "app=support",
    "--scope",
    "project=refunds",
    "--scope",
    "agent=refund-agent",
]
MINIMAL = {
    "id": "legacy-1",
    "task_id": "ticket-1",
    "task": "Package feed returns 401 after the access token expired",
    "lesson": "Rotate the feed token, then restore again.",
    "status": "Validated",
    "confidence": 0.8,
    "scope": {"tenant": "acme", "app": "ci", "project": "builds"},
}
ACME = ["--scope", "tenant=acme", "--scope", "app=ci", "--scope", "project=builds"]


def cli(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_demo_output_is_golden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AFTERACTION_DATABASE_URL", raising=False)
    code, out, _ = cli("demo")
    assert code == 0
    assert_golden("demo.txt", out)
    assert cli("demo")[1] == out  # the same every time: the demo's own file is recreated
    assert (tmp_path / ".afteraction" / "demo.db").exists()


def test_demo_stores_the_lesson_and_block_reads_it(tmp_path: Path) -> None:
    db = str(tmp_path / "demo.db")
    cli("demo", "--db", db)
    code, out, _ = cli("block", "refund for ticket 5 stuck in pending", *SCOPE, "--db", db)
    assert code == 0 and out.startswith("=== BEGIN REFERENCE") and out.endswith("=== END REFERENCE ===\n")
    code, out, _ = cli("block", "book a meeting room for Thursday", *SCOPE, "--db", db)
    assert code == 0 and out == ""


def test_block_names_its_lessons_and_outcome_reports_back_once(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(MINIMAL) + "\n", encoding="utf-8")
    cli("import", str(source), "--db", db)
    code, out, _ = cli("block", "package feed 401 token expired", *ACME, "--json", "--db", db)
    given = json.loads(out)
    assert code == 0 and given["lessons"] == ["legacy-1"] and given["block"].startswith("=== BEGIN REFERENCE")
    assert json.loads(cli("block", "book a meeting room", *ACME, "--json", "--db", db)[1]) == {
        "block": "",
        "lessons": [],
    }
    report = ["outcome", "legacy-1", "--success", "--key", "run:ci-7", "--task", "nightly restore cannot reach nuget"]
    code, out, _ = cli(*report, *ACME, "--db", db)
    assert code == 0 and out == "legacy-1  Validated  confidence 0.75  (supporting 2, contradicting 0)\n"
    again = json.loads(cli(*report, *ACME, "--json", "--db", db)[1])
    assert again["supporting"] == 2 and again["wordings"] == ["nightly restore cannot reach nuget"]
    code, _, err = cli("outcome", "legacy-1", "--failure", "--key", "", *ACME, "--db", db)
    assert code == 2 and "key: must not be blank" in err
    code, _, err = cli("outcome", "nope", "--failure", *ACME, "--db", db)
    assert code != 0 and "no lesson 'nope'" in err


def test_set_status_takes_a_lesson_out_of_blocks_and_lessons_says_why(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(MINIMAL) + "\n", encoding="utf-8")
    cli("import", str(source), "--db", db)
    code, out, _ = cli("set-status", "legacy-1", "stale", "--reason", "before the feed moved", *ACME, "--db", db)
    assert code == 0 and out == "legacy-1  Stale  confidence 0.80  (before the feed moved)\n"
    assert cli("block", "package feed 401 token expired", *ACME, "--db", db)[1] == ""
    [listed] = json.loads(cli("lessons", *ACME, "--json", "--db", db)[1])
    assert listed["reason"] == "status is Stale: before the feed moved"
    code, _, err = cli("set-status", "legacy-1", "reinforced", *ACME, "--db", db)
    assert code == 2 and "reinforced" in err
    decided = json.loads(cli("set-status", "legacy-1", "validated", *ACME, "--json", "--db", db)[1])
    assert decided["status"] == "validated" and "status_reason" not in decided


def test_import_minimal_line_keeps_id_and_search_json_shape(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(MINIMAL) + "\n", encoding="utf-8")
    assert (
        cli("import", str(source), "--db", db)[1]
        == "read 1, added 1, updated 0 (the file's copy newer), already present 0\n"
    )
    code, out, _ = cli("search", "package feed 401 token expired", "book a meeting room", *ACME, "-k", "3",
                       "--json", "--db", db)  # fmt: skip
    assert code == 0
    result = json.loads(out)
    assert [r["query"] for r in result] == ["package feed 401 token expired", "book a meeting room"]
    assert [h["id"] for h in result[0]["hits"]] == ["legacy-1"]
    assert set(result[0]["hits"][0]) == {"id", "task_id", "score"}
    assert result[0]["hits"][0]["task_id"] == "ticket-1"
    assert result[1]["hits"] == []


def test_import_scrubs_the_secrets_a_lesson_carries(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    source = tmp_path / "in.jsonl"
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    leaky = {**MINIMAL, "lesson": f"Rotate the feed token {token}, then restore again."}
    source.write_text(json.dumps(leaky) + "\n", encoding="utf-8")
    assert cli("import", str(source), "--db", db)[0] == 0
    exported = json.loads(cli("export", "--db", db)[1])
    assert token not in exported["lesson"] and exported["lesson"].startswith("Rotate the feed token [REDACTED")
    assert exported["id"] == "legacy-1"


def test_export_then_import_round_trips(tmp_path: Path) -> None:
    first, second = str(tmp_path / "a.db"), str(tmp_path / "b.db")
    cli("demo", "--db", first)
    code, exported, _ = cli("export", "--db", first)
    assert code == 0 and exported.count("\n") == 2
    dump = tmp_path / "dump.jsonl"
    dump.write_text(exported, encoding="utf-8")
    assert cli("import", str(dump), "--db", second)[0] == 0
    assert cli("export", "--db", second)[1] == exported
    assert (
        cli("import", str(dump), "--db", second, "--json")[1].strip()
        == '{"read": 2, "added": 0, "updated": 0, "existing": 2}'
    )


def test_a_bad_line_imports_nothing_and_names_line_and_field(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    bad = {**MINIMAL, "id": "legacy-2", "confidence": 7}
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(MINIMAL) + "\n" + json.dumps(bad) + "\nnot json\n", encoding="utf-8")
    code, _, err = cli("import", str(source), "--db", db)
    assert code == 2
    assert "line 2: confidence: must be between 0 and 1" in err and "line 3: not JSON" in err
    assert cli("lessons", *ACME, "--json", "--db", db)[1].strip() == "[]"


def test_lessons_json_reports_eligibility(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    source = tmp_path / "in.jsonl"
    revoked = {**MINIMAL, "id": "legacy-2", "status": "revoked"}
    source.write_text(json.dumps(MINIMAL) + "\n" + json.dumps(revoked) + "\n", encoding="utf-8")
    cli("import", str(source), "--db", db)
    rows = json.loads(cli("lessons", *ACME, "--json", "--db", db)[1])
    assert {(r["id"], r["eligible"], r["reason"]) for r in rows} == {
        ("legacy-1", True, None),
        ("legacy-2", False, "status is Revoked"),
    }


def test_validate_events_file(conformance: Path, tmp_path: Path) -> None:
    stream = conformance / "aep-sdk-streams" / "openai-agents" / "events.jsonl"
    code, out, _ = cli("validate", str(stream))
    assert code == 0 and out.strip().endswith("22 events, 22 valid, 0 invalid")
    bad = tmp_path / "bad.jsonl"
    bad.write_text((conformance / "aep/fixtures/invalid/bad-time-format.json").read_text().replace("\n", "") + "\n")
    code, out, _ = cli("validate", str(bad), "--json")
    assert code == 1
    assert json.loads(out)["results"][0]["field"] == "time"


def test_lessons_says_when_it_lists_none_and_where_narrower_ones_are(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    cli("demo", "--db", db)  # its lessons are the refund agent's
    demo = ["--scope", "tenant=demo", "--scope", "app=support", "--scope", "project=refunds"]
    assert cli("lessons", *demo, "--db", db) == (
        0,
        "(no lessons in this scope; one recorded for a team, agent or user is listed when --scope names it)\n",
        "",
    )
    code, out, _ = cli("lessons", *demo, "--scope", "agent=refund-agent", "--db", db)
    assert code == 0 and out.count("(eligible)") == 2
    every = ["--scope", "team=t", "--scope", "agent=a", "--scope", "user=u"]
    assert cli("lessons", *demo, *every, "--db", db)[1] == "(no lessons in this scope)\n"


@pytest.mark.parametrize(
    "args",
    [
        ["search", "refund", *ACME],
        ["block", "refund", *ACME],
        ["lessons", *ACME],
        ["export"],
        ["outcome", "exp_1", "--success", *ACME],
        ["reindex"],
        ["keys", "list"],
        ["keys", "revoke", "key_1"],
        ["db", "vectors"],
        ["db", "drop-vectors", "some-model", "--yes"],
    ],
    ids=lambda args: " ".join(args[:2]),
)
def test_a_command_that_reads_a_store_that_is_not_there_says_so_and_creates_nothing(
    args: list[str], tmp_path: Path
) -> None:
    typo = tmp_path / "stores" / "memroy.db"
    code, out, err = cli(*args, "--db", str(typo))
    assert code == 2 and out == ""
    assert f"--db: there is no store at {str(typo)!r}" in err
    assert not typo.parent.exists()  # neither the file nor its directory


def test_import_creates_the_store_it_names(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(MINIMAL) + "\n", encoding="utf-8")
    new = tmp_path / "new" / "memory.db"
    assert cli("import", str(source), "--db", str(new)) == (
        0,
        "read 1, added 1, updated 0 (the file's copy newer), already present 0\n",
        "",
    )
    assert cli("lessons", *ACME, "--db", str(new), "--json")[0] == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["search", "x", "--scope", "tenant=acme"], "--scope.app: is required"),
        (["search", "x", "--scope", "tenant"], "--scope: expects KEY=VALUE"),
        (["lessons", *ACME, "--status", "nope"], "status: must be one of"),
    ],
)
def test_bad_options_name_the_problem(args: list[str], message: str, tmp_path: Path) -> None:
    aa.Memory.open(tmp_path / "m.db", embedder=None).close()
    code, _, err = cli(*args, "--db", str(tmp_path / "m.db"))
    assert code == 2 and message in err


def test_a_file_that_is_not_ours_is_refused_untouched(tmp_path: Path) -> None:
    notes = tmp_path / "notes.db"
    notes.write_text("shopping list\n")
    code, _, err = cli("lessons", *ACME, "--db", str(notes))
    assert code == 1 and "notes.db" in err
    assert notes.read_text() == "shopping list\n"


# db status / db upgrade


def test_db_status_of_a_missing_file_reads_only_then_upgrade_creates_the_schema(tmp_path: Path) -> None:
    db = str(tmp_path / "new.db")
    names = [m.__name__ for m in MIGRATIONS]
    code, out, _ = cli("db", "status", "--db", db)
    assert code == 1
    assert f"none yet (no file there yet); this afteraction expects version {len(names)}" in out
    assert all(f"pending  {name}" in out for name in names)
    assert (
        "applied  " not in out and "no store there: `afteraction db upgrade` would create a new one at this path" in out
    )
    assert not (tmp_path / "new.db").exists()  # status created nothing
    (tmp_path / "blank.db").touch()
    assert "none yet (a blank database);" in cli("db", "status", "--db", str(tmp_path / "blank.db"))[1]
    assert cli("db", "upgrade", "--db", db)[1] == (
        "".join(f"applied  {name}\n" for name in names) + f"{len(names)} migration(s) applied\n"
    )
    code, out, _ = cli("db", "status", "--db", db)
    assert code == 0 and f"schema:   version {len(names)};" in out and out.endswith("up to date\n")
    assert cli("db", "upgrade", "--db", db) == (0, "already up to date: nothing applied\n", "")


def test_db_status_and_upgrade_of_an_old_database_keep_its_rows(tmp_path: Path) -> None:
    names = [m.__name__ for m in MIGRATIONS]
    path = tmp_path / "old.db"
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        migrate(db, str(path), MIGRATIONS[:1])
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(MINIMAL) + "\n", encoding="utf-8")
    code, out, _ = cli("db", "status", "--db", str(path), "--json")
    assert code == 1
    status = json.loads(out)
    assert set(status) == {"database", "backend", "ours", "version", "expected", "up_to_date", "applied", "pending"}
    assert status["database"] == str(path) and status["backend"] == "sqlite" and status["ours"] is True
    assert (status["version"], status["expected"], status["up_to_date"]) == (1, len(names), False)
    assert [m["name"] for m in status["applied"]] == names[:1]
    assert datetime.fromisoformat(status["applied"][0]["applied_at"]).tzinfo is not None
    assert status["pending"] == names[1:]

    code, out, _ = cli("db", "upgrade", "--db", f"sqlite:{path}", "--json")
    assert (code, json.loads(out)) == (0, {"applied": names[1:]})
    assert json.loads(cli("db", "upgrade", "--db", str(path), "--json")[1]) == {"applied": []}
    code, out, _ = cli("db", "status", "--db", str(path), "--json")
    status = json.loads(out)
    assert code == 0 and status["up_to_date"] is True and status["pending"] == []
    assert [m["name"] for m in status["applied"]] == names
    cli("import", str(source), "--db", str(path))
    assert [r["id"] for r in json.loads(cli("lessons", *ACME, "--json", "--db", str(path))[1])] == ["legacy-1"]


def test_db_status_of_a_database_newer_than_the_code_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    cli("db", "upgrade", "--db", str(path))
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute("PRAGMA user_version = 99")
    for command in ("status", "upgrade"):
        code, out, err = cli("db", command, "--db", str(path))
        assert code == 2 and out == ""
        assert str(path) in err and "newer than this afteraction understands" in err


def test_db_commands_refuse_a_file_that_is_not_ours_untouched(tmp_path: Path) -> None:
    foreign = tmp_path / "shop.db"
    with closing(sqlite3.connect(foreign, isolation_level=None)) as db:
        db.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY)")
    before = foreign.read_bytes()
    notes = tmp_path / "notes.db"
    notes.write_text("shopping list\n")
    for path, message in ((foreign, "another application (it has customers)"), (notes, "not an SQLite database")):
        for command in ("status", "upgrade"):
            code, out, err = cli("db", command, "--db", str(path))
            assert code == 2 and out == "" and err.startswith(f"error: {path} ") and message in err
    assert foreign.read_bytes() == before and notes.read_text() == "shopping list\n"


def test_db_commands_on_memory_say_there_is_no_schema() -> None:
    code, out, _ = cli("db", "status", "--db", ":memory:")
    assert code == 0 and "keeps no schema" in out
    assert json.loads(cli("db", "status", "--db", ":memory:", "--json")[1]) == {
        "database": ":memory:",
        "backend": "memory",
        "ours": False,
        "version": 0,
        "expected": 0,
        "up_to_date": True,
        "applied": [],
        "pending": [],
    }
    assert cli("db", "upgrade", "--db", ":memory:") == (0, ":memory: keeps no schema: nothing to apply\n", "")


def test_db_index_tenants_has_nothing_to_build_in_sqlite(tmp_path: Path) -> None:
    db = str(tmp_path / "memory.db")
    assert cli("db", "index-tenants", "--db", db) == (
        0,
        "SQLite and :memory: keep one vector index per tenant already: nothing to build\n",
        "",
    )
    assert cli("db", "index-tenants", "--db", ":memory:", "--json") == (0, '{"indexed": null}\n', "")
    assert cli("db", "index-tenants", "--db", db, "--min-vectors", "0")[0] == 2  # not a count of vectors


def test_db_index_tenants_help_gives_the_stores_threshold() -> None:
    from afteraction.store.postgres_vectors import TENANT_INDEX_MIN

    assert f"[default: {TENANT_INDEX_MIN:,}]" in cli("db", "index-tenants", "--help")[1].replace("\n", " ")


def test_db_status_names_a_bad_url() -> None:
    code, _, err = cli("db", "status", "--db", "redis://localhost")
    assert code == 2 and "'redis://localhost' is not one afteraction can open" in err


@pytest.mark.postgres
def test_db_status_and_upgrade_on_postgres(pg_url: str) -> None:
    import psycopg

    from afteraction.store import postgres_schema

    code, out, _ = cli("db", "status", "--db", pg_url, "--json")
    status = json.loads(out)
    assert code == 1 and status["backend"] == "postgresql" and status["ours"] is False
    assert status["pending"] == [m.__name__ for m in postgres_schema.MIGRATIONS] and status["applied"] == []
    with psycopg.connect(pg_url, autocommit=True) as db:  # status created nothing
        assert db.execute("SELECT to_regclass(%s)", (postgres_schema.MIGRATIONS_TABLE,)).fetchone() == (None,)
        postgres_schema.migrate(db, "test", postgres_schema.MIGRATIONS[:1])

    code, out, _ = cli("db", "status", "--db", pg_url)
    expected = postgres_schema.SCHEMA_VERSION
    assert code == 1 and f"schema:   version 1; this afteraction expects version {expected}" in out
    assert "applied  m001_experiences  " in out and "pending  m002_row_level_security" in out
    later = [m.__name__ for m in postgres_schema.MIGRATIONS[1:]]
    upgraded = "".join(f"applied  {name}\n" for name in later) + f"{len(later)} migration(s) applied\n"
    assert cli("db", "upgrade", "--db", pg_url) == (0, upgraded, "")
    assert cli("db", "upgrade", "--db", pg_url.replace("://", "+psycopg://", 1), "--json")[1] == '{"applied": []}\n'
    code, out, _ = cli("db", "status", "--db", pg_url, "--json")
    status = json.loads(out)
    assert code == 0 and status["up_to_date"] is True and status["version"] == status["expected"] == expected
    assert [m["name"] for m in status["applied"]] == [m.__name__ for m in postgres_schema.MIGRATIONS]

    with psycopg.connect(pg_url, autocommit=True) as db:
        db.execute(f"INSERT INTO {postgres_schema.MIGRATIONS_TABLE} (name) VALUES ('m999_from_the_future')")
    code, _, err = cli("db", "status", "--db", pg_url)
    assert code == 2 and "newer than this afteraction understands" in err


@pytest.mark.postgres
def test_db_status_on_postgres_refuses_a_table_it_did_not_create(pg_url: str) -> None:
    import psycopg

    from afteraction.store import postgres_schema

    with psycopg.connect(pg_url, autocommit=True) as db:
        db.execute(f"CREATE TABLE {postgres_schema.TABLE} (x int)")
    for command in ("status", "upgrade"):
        code, _, err = cli("db", command, "--db", pg_url)
        assert code == 2 and "did not create" in err


def test_import_refuses_a_misspelt_field_and_imports_nothing(tmp_path: Path) -> None:
    """Found by an operator: ``expire_at`` for ``expires_at`` imported a lesson that never expires."""
    db, source = str(tmp_path / "m.db"), tmp_path / "in.jsonl"
    good = {**MINIMAL, "id": "good"}
    for typo, field in [
        ({"expire_at": "2020-01-01T00:00:00Z"}, "expire_at"),
        ({"scenario": {"task": "t", "enviroment": {"os": "linux"}}}, "scenario.enviroment"),
    ]:
        source.write_text(json.dumps(good) + "\n" + json.dumps({**MINIMAL, **typo}) + "\n", encoding="utf-8")
        code, _, err = cli("import", str(source), "--db", db)
        assert code != 0 and f"line 2: {field}: is not a field of" in err
        assert cli("export", "--db", db)[1] == ""
    source.write_text(json.dumps({**MINIMAL, "summary": None}) + "\n", encoding="utf-8")  # null: absent
    assert cli("import", str(source), "--db", db)[0] == 0


def test_export_into_a_missing_folder_names_it_without_a_traceback(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    cli("demo", "--db", db)
    target = tmp_path / "no_such_dir" / "lessons.jsonl"
    code, out, err = cli("export", str(target), "--db", db)
    assert code != 0 and out == "" and f"cannot write {target}" in err and "Traceback" not in err
    assert not target.parent.exists()


def test_a_store_with_another_builds_migration_says_so(tmp_path: Path) -> None:
    path = tmp_path / "branch.db"
    cli("db", "upgrade", "--db", str(path))
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute(f"INSERT INTO {MIGRATIONS_TABLE} (name, applied_at) VALUES ('m999_from_a_branch', 'now')")
    code, _, err = cli("db", "status", "--db", str(path))
    assert code == 2 and "m999_from_a_branch" in err and "newer than" not in err
