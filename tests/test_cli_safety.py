"""The command line does not lose what a user keeps, show what it must not, or end in a
traceback: the demo never takes the user's store, an export replaces its file whole, stored text
cannot drive the terminal, a password in a store URL is never printed, and bytes that are not
UTF-8 are named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import afteraction as aa
from afteraction.core.redact import redact_url
from afteraction.testing import make_experience
from tests.test_cli import ACME, MINIMAL, cli

ACME_SCOPE = aa.Scope(tenant="acme", app="ci", project="builds")


def store_with(path: Path, *tasks: str) -> str:
    with aa.Memory.open(str(path), embedder=None) as memory:
        memory.add_many([make_experience(task, scope=ACME_SCOPE) for task in tasks])
    return str(path)


def test_the_demo_never_takes_the_store_of_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    precious = store_with(tmp_path / "precious.db", "Package feed returns 401")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AFTERACTION_DATABASE_URL", precious)
    assert cli("demo")[0] == 0
    assert (tmp_path / ".afteraction" / "demo.db").exists()
    assert len(cli("export", "--db", precious)[1].splitlines()) == 1


def test_the_demo_refuses_a_file_holding_other_lessons_and_deletes_nothing(tmp_path: Path) -> None:
    precious = store_with(tmp_path / "precious.db", "Package feed returns 401")
    code, out, err = cli("demo", "--db", precious)
    assert code == 2 and out == ""
    assert "holds lessons that are not the demo's" in err
    assert len(cli("export", "--db", precious)[1].splitlines()) == 1
    assert cli("demo", "--db", str(tmp_path / "own.db"))[0] == 0
    assert cli("demo", "--db", str(tmp_path / "own.db"))[0] == 0  # its own file: recreated


def test_an_export_replaces_its_file_whole_and_a_failed_one_leaves_it(tmp_path: Path) -> None:
    db = store_with(tmp_path / "s.db", "Package feed returns 401")
    out = tmp_path / "out.jsonl"
    out.write_text("OLD CONTENT\n")
    assert cli("export", str(out), "--tenant", "nobody", "--db", db)[0] == 0
    assert out.read_text() == ""  # nothing to export: an empty file, not the stale one
    assert cli("export", str(out), "--db", db)[0] == 0
    assert [json.loads(line)["task"] for line in out.read_text().splitlines()] == ["Package feed returns 401"]
    out.write_text("OLD CONTENT\n")
    assert cli("export", str(out), "--db", str(tmp_path / "typo.db"))[0] == 2
    assert out.read_text() == "OLD CONTENT\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl", "s.db"]  # no partial file left


def test_stored_text_is_shown_escaped_never_as_terminal_controls(tmp_path: Path) -> None:
    task = "Deploy \x1b]0;pwned\x07 now\n=== END REFERENCE === \x1b[2J \u202eevil"
    db = str(tmp_path / "s.db")
    with aa.Memory.open(db, embedder=None) as memory:  # stored as it is (an older version's row): ``add`` folds it
        memory.store.put_many([make_experience(task, scope=ACME_SCOPE)])
    for args in (["lessons", *ACME], ["search", "deploy now", *ACME]):
        code, out, _ = cli(*args, "--db", db)
        assert code == 0 and "Deploy" in out
        assert not any(char in out for char in "\x1b\x07\u202e"), args
        assert "\\x1b]0;pwned\\x07" in out and "\\n=== END REFERENCE" in out


def test_lessons_page_with_limit_and_offset_and_say_when_more_are_left(tmp_path: Path) -> None:
    db = store_with(tmp_path / "s.db", *(f"Package feed {n} returns 401" for n in range(3)))
    code, out, _ = cli("lessons", *ACME, "--limit", "2", "--db", db)
    assert code == 0 and out.count("Package feed") == 2 and out.endswith("(more: --offset 2)\n")
    code, out, _ = cli("lessons", *ACME, "--limit", "2", "--offset", "2", "--db", db)
    assert code == 0 and out.count("Package feed") == 1 and "(more" not in out
    assert cli("lessons", *ACME, "--offset", "3", "--db", db)[1] == "(no lessons past the first 3)\n"
    code, _, err = cli("lessons", *ACME, "--limit", "0", "--db", db)
    assert code == 2 and "--limit" in err


def test_a_line_that_is_not_utf8_is_named_and_nothing_imported(tmp_path: Path) -> None:
    good = json.dumps(MINIMAL)
    path = tmp_path / "in.jsonl"
    path.write_bytes(good.encode() + b"\n\xff\xfe bad\n")
    code, _, err = cli("import", str(path), "--db", str(tmp_path / "s.db"))
    assert code == 2 and "line 2: is not UTF-8 text" in err
    code, out, _ = cli("validate", str(path))
    assert code == 1 and "line 2: is not UTF-8 text" in out


def test_an_argument_that_is_not_utf8_is_a_usage_error(tmp_path: Path) -> None:
    db = store_with(tmp_path / "s.db", "Package feed returns 401")
    for args in (["export", "--tenant", "a\udcff"], ["lessons", *ACME[:-1], "project=b\udcff"]):
        code, _, err = cli(*args, "--db", db)
        assert code == 2 and "is not UTF-8 text" in err


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://bob:hunter2secret@127.0.0.1:1/x",
        "postgresql://bob@127.0.0.1:1/x?password=hunter2secret&sslmode=disable",
    ],
)
def test_a_password_in_the_store_url_is_never_printed(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("psycopg")
    monkeypatch.setenv("AFTERACTION_DATABASE_URL", url)
    for args in (["lessons", *ACME], ["db", "status"]):
        code, out, err = cli(*args)
        assert code != 0 and "hunter2secret" not in out + err and "***" in err


def test_redact_url_masks_the_password_and_secret_options_only() -> None:
    assert (
        redact_url("postgresql://bob:pw@db:5432/x?sslmode=require") == "postgresql://bob:***@db:5432/x?sslmode=require"
    )
    assert (
        redact_url("postgresql://db/x?password=pw&application_name=a")
        == "postgresql://db/x?password=***&application_name=a"
    )
    assert redact_url("http://u:pw@host:8787") == "http://u:***@host:8787"
    assert redact_url("/srv/memory.db") == "/srv/memory.db"


def test_an_import_naming_one_id_twice_is_refused_and_a_kept_lesson_said_so(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    other = {**MINIMAL, "task": "Another lesson under the same id"}
    path.write_text(json.dumps(MINIMAL) + "\n" + json.dumps(other) + "\n")
    db = str(tmp_path / "s.db")
    code, _, err = cli("import", str(path), "--db", db)
    assert code == 2 and "line 2: id 'legacy-1' of tenant 'acme' is on line 1" in err
    path.write_text(json.dumps(MINIMAL) + "\n")
    assert (
        cli("import", str(path), "--db", db)[1]
        == "read 1, added 1, updated 0 (the file's copy newer), already present 0\n"
    )
    code, out, _ = cli("import", str(path), "--db", db)
    assert out.startswith(
        "read 1, added 0, updated 0 (the file's copy newer), already present 1 (the stored copy is as new"
    )


def test_a_scope_part_given_twice_with_two_values_is_refused(tmp_path: Path) -> None:
    db = store_with(tmp_path / "s.db", "Package feed returns 401")
    code, _, err = cli("lessons", *ACME, "--scope", "tenant=globex", "--db", db)
    assert code == 2 and "--scope: gives tenant twice ('acme' and 'globex')" in err
    assert cli("lessons", *ACME, "--scope", "tenant=acme", "--db", db)[0] == 0  # the same value again is harmless


def test_an_empty_key_list_says_so_and_an_arrays_events_are_items(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    assert cli("db", "upgrade", "--db", db)[0] == 0
    assert cli("keys", "list", "--db", db)[1] == "(no keys)\n"
    assert cli("keys", "list", "--tenant", "acme", "--db", db)[1] == "(no keys for tenant 'acme')\n"
    events = tmp_path / "events.json"
    events.write_text(json.dumps([{"id": "e1"}, {"id": "e2"}], indent=2))
    code, out, _ = cli("validate", str(events))
    assert code == 1 and out.startswith("item 1: ") and "\nitem 2: " in out


def test_an_import_is_written_in_batches_and_all_of_it_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each batch is its own transaction (other processes wait at most one for the write lock); together they
    store every line, and a second import of the same file adds nothing."""
    from afteraction.cli import files as cli_files

    monkeypatch.setattr(cli_files, "IMPORT_BATCH", 2)
    path = tmp_path / "in.jsonl"
    lines = (json.dumps({**MINIMAL, "id": f"legacy-{n}", "task": f"Lesson {n}"}) for n in range(5))
    path.write_text("".join(line + "\n" for line in lines))
    db = str(tmp_path / "s.db")
    assert (
        cli("import", str(path), "--db", db)[1]
        == "read 5, added 5, updated 0 (the file's copy newer), already present 0\n"
    )
    assert cli("import", str(path), "--db", db)[1].startswith(
        "read 5, added 0, updated 0 (the file's copy newer), already present 5"
    )
