"""``reindex`` and ``afteraction reindex`` over an SQLite store holding records it cannot read (their
JSON damaged): every readable record is embedded, each unreadable one is listed as failed and
counted, and the command exits 1 saying which."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import afteraction.embed
from afteraction.cli import main
from afteraction.embed import Checked
from afteraction.reindex import reindex
from afteraction.store import SQLiteStore
from tests.conformance.builders import experience
from tests.store.test_sqlite_unreadable import damage
from tests.test_reindex import Letters


def stored(path: Path) -> None:
    store = SQLiteStore(path)
    store.put_many([experience(f"e{i}", task=f"Refund ticket {i} is stuck") for i in range(10)])
    store.close()
    damage(path, "e3", "e9")  # one inside a batch, one the last record


def test_reindex_embeds_every_readable_record_and_lists_the_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    stored(path)
    store = SQLiteStore(path)
    seen: list[int] = []
    report = reindex(store, Checked(Letters()), batch=3, progress=seen.append)
    assert (report.embedded, report.changed, report.unreadable) == (8, 0, 2)
    assert [(f.first, f.last, f.records) for f in report.failed] == [
        (("acme", "e3"), ("acme", "e3"), 1),
        (("acme", "e9"), ("acme", "e9"), 1),
    ]
    assert all("cannot be read" in f.error for f in report.failed)
    assert sum(seen) == 10  # every record handled, the unreadable ones too
    assert report.to_dict()["unreadable"] == 2
    assert store.missing_vectors("letters@1") == []  # nothing readable is left without a vector
    assert store.count_missing_vectors("letters@1") == 2
    store.close()


def test_the_reindex_command_embeds_the_readable_records_and_names_the_unreadable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "memory.db"
    stored(path)
    monkeypatch.setattr(afteraction.embed, "default_embedder", lambda: Checked(Letters()))
    runner = CliRunner()
    done = runner.invoke(main, ["reindex", "--db", str(path), "--batch", "4"])
    assert done.exit_code == 1, done.output
    assert "embedded 8 with letters@1" in done.stdout
    assert "failed: 1 from acme/e3 to acme/e3: a record stored in" in done.stdout
    assert "failed: 1 from acme/e9 to acme/e9: a record stored in" in done.stdout
    again = runner.invoke(main, ["reindex", "--db", str(path), "--json"])
    assert again.exit_code == 1
    report = json.loads(again.stdout)
    assert (report["embedded"], report["unreadable"], len(report["failed"])) == (0, 2, 2)
