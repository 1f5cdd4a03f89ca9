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
