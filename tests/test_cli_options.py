"""An error names what the user typed (``-k``, ``--burst``, ``SESSION_ID``), not the library parameter it became; an
empty file is no store; ``serve`` says "serving" only for a database it can serve, and Ctrl-C stops it quietly."""

from __future__ import annotations

from pathlib import Path

import pytest

import afteraction as aa
import afteraction.server
from afteraction.store.events import open_events
from afteraction.testing import make_experience
from tests.test_cli import ACME, cli

SCOPE = aa.Scope(tenant="acme", app="ci", project="builds")


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("AFTERACTION_SERVER_SECRET", "s" * 48)
    path = str(tmp_path / "s.db")
    with aa.Memory.open(path, embedder=None) as memory:
        memory.add(make_experience("Package feed returns 401", scope=SCOPE))
    return path


KEY = ["keys", "create", "--tenant", "acme", "--scope", "read"]


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["search", "feed", *ACME, "-k", "0"], "-k"),
        (["lessons", *ACME, "--status", "bogus"], "--status"),
        (["block", "feed", *ACME, "--max-records", "0"], "--max-records"),
        (["block", "feed", *ACME, "--max-bytes", "1"], "--max-bytes"),
        (["outcome", "exp_1", "--success", "--key", " ", *ACME], "--key"),
        (["set-status", "exp_1", "stale", "--reason", "x" * 501, *ACME], "--reason"),
        (["forget-user", " ", "--tenant", "acme"], "USER"),
        (["forget-user", "alice", "--tenant", " "], "--tenant"),
        ([*KEY, "--rate", "1/s", "--burst", "0"], "--burst"),
        ([*KEY, "--event-rate", "1/s", "--event-burst", "0"], "--event-burst"),
        ([*KEY, "--rate", "0/s"], "--rate"),
        ([*KEY, "--event-rate", "0/s"], "--event-rate"),
        ([*KEY, "--project", " "], "--project"),
        (["keys", "list", "--tenant", ""], "--tenant"),
        (["export", "--tenant", ""], "--tenant"),
        (["db", "vectors", "--tenant", ""], "--tenant"),
        (["db", "drop-vectors", "", "--yes"], "MODEL"),
        (["events", "delete", "", "--tenant", "acme"], "SESSION_ID"),
    ],
)
def test_an_error_names_the_option_typed(db: str, args: list[str], named: str) -> None:
    code, out, err = cli(*args, "--db", db)
    assert (code, out) == (2, "") and err.startswith(f"error: {named}: "), err


@pytest.mark.parametrize(
    "args",
    [["lessons", *ACME], ["export"], ["keys", "list"], ["events", "prune", "--older-than", "1d"], ["db", "vectors"]],
)
def test_an_empty_file_is_refused_as_no_store_and_left_empty(tmp_path: Path, args: list[str]) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()
    code, out, err = cli(*args, "--db", str(empty))
    assert (code, out) == (2, "") and f"--db: {str(empty)!r} is an empty file, not a store" in err
    assert empty.stat().st_size == 0 and sorted(p.name for p in tmp_path.iterdir()) == ["empty.db"]


def test_serve_stopped_with_ctrl_c_exits_0_quietly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(db: str, **options: object) -> None:
        raise KeyboardInterrupt  # what uvicorn raises again once it has shut down on SIGINT

    monkeypatch.setattr(afteraction.server, "serve", interrupted)
    code, out, err = cli("serve", "--dev", "--db", str(tmp_path / "s.db"))
    assert code == 0 and out.startswith("afteraction: serving ") and "Aborted" not in out + err


def test_serve_says_serving_only_for_a_database_it_can_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def opening(db: str, **options: object) -> None:  # as the server does first; it never gets further here
        open_events(db).close()

    monkeypatch.setattr(afteraction.server, "serve", opening)
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_text("garbage\n")
    code, out, err = cli("serve", "--dev", "--db", str(corrupt))
    assert code != 0 and out == "" and "not an SQLite database" in err
    assert cli("serve", "--dev", "--db", str(tmp_path / "new.db"))[1].startswith("afteraction: serving ")
