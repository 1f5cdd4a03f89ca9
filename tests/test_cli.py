from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from afteraction.cli import main
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


def test_import_minimal_line_keeps_id_and_search_json_shape(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(MINIMAL) + "\n", encoding="utf-8")
    assert cli("import", str(source), "--db", db)[1] == "read 1, added 1, already present 0\n"
    code, out, _ = cli("search", "package feed 401 token expired", "book a meeting room", *ACME, "-k", "3",
                       "--json", "--db", db)  # fmt: skip
    assert code == 0
    result = json.loads(out)
    assert [r["query"] for r in result] == ["package feed 401 token expired", "book a meeting room"]
    assert [h["id"] for h in result[0]["hits"]] == ["legacy-1"]
    assert set(result[0]["hits"][0]) == {"id", "task_id", "score"}
    assert result[0]["hits"][0]["task_id"] == "ticket-1"
    assert result[1]["hits"] == []


def test_export_then_import_round_trips(tmp_path: Path) -> None:
    first, second = str(tmp_path / "a.db"), str(tmp_path / "b.db")
    cli("demo", "--db", first)
    code, exported, _ = cli("export", "--db", first)
    assert code == 0 and exported.count("\n") == 2
    dump = tmp_path / "dump.jsonl"
    dump.write_text(exported, encoding="utf-8")
    assert cli("import", str(dump), "--db", second)[0] == 0
    assert cli("export", "--db", second)[1] == exported
    assert cli("import", str(dump), "--db", second, "--json")[1].strip() == '{"read": 2, "added": 0, "existing": 2}'


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


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["search", "x", "--scope", "tenant=acme"], "--scope.app: is required"),
        (["search", "x", "--scope", "tenant"], "--scope: expects KEY=VALUE"),
        (["lessons", *ACME, "--status", "nope"], "status: must be one of"),
    ],
)
def test_bad_options_name_the_problem(args: list[str], message: str, tmp_path: Path) -> None:
    code, _, err = cli(*args, "--db", str(tmp_path / "m.db"))
    assert code == 2 and message in err


def test_a_file_that_is_not_ours_is_refused_untouched(tmp_path: Path) -> None:
    notes = tmp_path / "notes.db"
    notes.write_text("shopping list\n")
    code, _, err = cli("lessons", *ACME, "--db", str(notes))
    assert code == 1 and "notes.db" in err
    assert notes.read_text() == "shopping list\n"
