"""``afteraction reindex`` and the ``reindex`` function behind it: every record gets a vector of
the current model, a batch the embedder fails on is skipped and reported, the index is built."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from afteraction.cli import main
from afteraction.embed import Checked
from afteraction.embed.minilm import MODEL_ID
from afteraction.errors import ConfigError, ValidationError
from afteraction.model import Scope
from afteraction.reindex import reindex
from afteraction.store import MemoryStore, SQLiteStore
from afteraction.store.sqlite_vectors import IndexPolicy
from tests.conformance.builders import NOW, SCOPE, experience


class Letters:
    """A deterministic embedder over letter counts; refuses any text containing "poison"."""

    model_id = "letters@1"
    dimension = 26

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if any("poison" in text for text in texts):
            raise RuntimeError("cannot embed poison")
        return [[text.lower().count(chr(97 + i)) + 0.01 for i in range(26)] for text in texts]


def test_reindex_embeds_every_record_skips_a_failing_batch_and_builds_the_index(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "memory.db", vector_index=IndexPolicy(ann_from=20))
    store.put_many([experience(f"e{i:03d}", task=f"Refund ticket {i} is stuck") for i in range(40)])
    store.put(experience("e020x", task="poison pill"))  # falls in the third batch of 10
    seen: list[int] = []
    report = reindex(store, Checked(Letters()), batch=10, progress=seen.append)
    assert report.embedded == 31  # 41 records; the third batch of 10 (e020, e020x, e021-e028) failed
    assert [(f.first, f.last, f.records) for f in report.failed] == [(("acme", "e020"), ("acme", "e028"), 10)]
    assert "cannot embed poison" in report.failed[0].error
    assert sum(seen) == 41
    assert [(s.tenant, s.kind, s.vectors, s.built) for s in report.indexes] == [("acme", "ann", 31, True)]
    assert {e.id for e in store.missing_vectors("letters@1")} == {
        "e020",
        "e020x",
        *(f"e{i:03d}" for i in range(21, 29)),
    }
    found = store.search_vector(SCOPE, "letters@1", Letters().embed(["Refund ticket 3 is stuck"])[0], now=NOW)
    assert found
    store.close()


def test_reindex_refuses_a_bad_batch_size_and_a_store_without_vectors() -> None:
    with pytest.raises(ValidationError, match="batch"):
        reindex(MemoryStore(), Checked(Letters()), batch=0)
    with pytest.raises(ConfigError, match="keeps no vectors"):
        reindex(object(), Checked(Letters()))  # type: ignore[arg-type]


@pytest.mark.slow
def test_the_reindex_command_embeds_with_the_default_model(tmp_path: Path) -> None:
    db = str(tmp_path / "memory.db")
    store = SQLiteStore(db)
    store.put_many([experience("a"), experience("b", task="Deploys time out", scope=Scope("globex", "ci", "builds"))])
    reindex(store, Checked(Letters()))  # an earlier model's vectors
    store.close()
    runner = CliRunner()
    done = runner.invoke(main, ["reindex", "--db", db, "--batch", "1"], catch_exceptions=False)
    assert done.exit_code == 0, done.stderr
    assert f"embedded 2 with {MODEL_ID}" in done.stdout
    assert "index acme: exact, 1 vectors, up to date" in done.stdout
    hint = "2 vectors of another model are unused: letters@1 (`afteraction db drop-vectors letters@1` removes them)"
    assert hint in done.stdout
    again = runner.invoke(main, ["reindex", "--db", db, "--tenant", "acme", "--rebuild-index", "--json"])
    assert again.exit_code == 0, again.stderr
    report = json.loads(again.stdout)
    assert (report["embedded"], report["failed"]) == (0, [])
    assert [(s["tenant"], s["kind"], s["built"]) for s in report["indexes"]] == [("acme", "ann", True)]
    assert [(m["model"], m["vectors"]) for m in report["other_models"]] == [("letters@1", 1)]  # acme's alone
    assert (tmp_path / "memory.db-vectors").is_dir()
