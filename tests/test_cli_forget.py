"""``afteraction forget``: a lesson deleted for good, once; another scope's answer says nothing was."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_cli import ACME, MINIMAL, cli

GLOBEX = ["--scope", "tenant=globex", "--scope", "app=ci", "--scope", "project=builds"]


def test_forget_deletes_a_lesson_once(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(MINIMAL) + "\n", encoding="utf-8")
    cli("import", str(source), "--db", db)
    assert cli("forget", "legacy-1", *GLOBEX, "--db", db) == (
        0,
        "legacy-1  not found in this scope: nothing deleted\n",
        "",
    )
    assert cli("forget", "legacy-1", *ACME, "--db", db) == (0, "legacy-1  forgotten\n", "")
    assert cli("lessons", *ACME, "--json", "--db", db)[1] == "[]\n"
    assert cli("block", "package feed 401 token expired", *ACME, "--db", db)[1] == ""
    assert json.loads(cli("forget", "legacy-1", *ACME, "--json", "--db", db)[1]) == {"deleted": False}
    code, _, err = cli("forget", "legacy-1", "--db", db)
    assert code != 0 and "tenant" in err


def test_forget_user_erases_every_lesson_of_that_user_in_the_tenant(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    alice = {"tenant": "acme", "app": "ci", "project": "builds", "user": "alice"}
    lessons = [
        {**MINIMAL, "id": "alice-1", "scope": alice},
        {**MINIMAL, "id": "alice-2", "scope": {**alice, "app": "support", "project": "refunds"}},
        {**MINIMAL, "id": "shared-1"},
        {**MINIMAL, "id": "alice-1", "scope": {**alice, "tenant": "globex"}},
    ]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(lesson) + "\n" for lesson in lessons), encoding="utf-8")
    cli("import", str(source), "--db", db)
    code, out, _ = cli("forget-user", "alice", "--tenant", "acme", "--db", db)
    assert code == 0
    assert sorted(out.splitlines()[:2]) == ["alice-1  forgotten", "alice-2  forgotten"]
    assert out.splitlines()[2] == "2 lessons of 'alice' in tenant 'acme' forgotten"
    assert [row["id"] for row in json.loads(cli("lessons", *ACME, "--json", "--db", db)[1])] == ["shared-1"]
    again = cli("forget-user", "alice", "--tenant", "acme", "--json", "--db", db)
    assert json.loads(again[1]) == {"deleted": 0, "ids": []}
    assert cli("forget-user", "alice", "--tenant", "globex", "--json", "--db", db)[1] == (
        '{"deleted": 1, "ids": ["alice-1"]}\n'
    )
    code, _, err = cli("forget-user", " alice", "--tenant", "acme", "--db", db)
    assert code != 0 and "USER" in err
