"""Bad input ends in ``error: <option or field>: <rule>`` and exit 2 (``validate``: a bad line, exit 1), never in a
traceback: an age past the year 1, a page beyond what a store counts, an export to no file or to a read-only place,
JSON nested deeper than the parser goes."""

from __future__ import annotations

import errno
import json
from pathlib import Path
from typing import Any

import pytest

import afteraction as aa
from afteraction.testing import make_experience
from tests.test_cli import ACME, MINIMAL, cli

SCOPE = aa.Scope(tenant="acme", app="ci", project="builds")
DEEP = '{"a":' * 5000 + "1" + "}" * 5000


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "s.db")
    with aa.Memory.open(path, embedder=None) as memory:
        memory.add_many([make_experience(f"Package feed {n} returns 401", scope=SCOPE) for n in range(2)])
    return path


def test_an_age_reaching_back_past_the_year_1_is_named(db: str) -> None:
    code, out, err = cli("events", "prune", "--older-than", "800000d", "--db", db)
    assert (code, out) == (2, "") and err == "error: --older-than: reaches back before the year 1, got '800000d'\n"
    assert cli("events", "prune", "--older-than", "700000d", "--db", db)[0] == 0


@pytest.mark.parametrize(
    ("option", "value", "accepted"),
    [("--limit", "9223372036854775807", "10000"), ("--offset", str(10**20), "1000000000")],
)
def test_a_page_beyond_the_documented_maximum_is_refused(db: str, option: str, value: str, accepted: str) -> None:
    code, out, err = cli("lessons", *ACME, option, value, "--db", db)
    assert (code, out) == (2, "") and f"'{option}'" in err and "<=x<=" in err and "Traceback" not in err
    code, out, _ = cli("lessons", *ACME, option, accepted, "--db", db)
    assert code == 0 and out


@pytest.mark.parametrize("file", ["", "sub/", "sub/.", "sub/.."])
def test_an_export_to_no_file_is_refused_and_writes_nothing(
    db: str, file: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("export", file, "--db", db)
    assert (code, out) == (2, "") and err.startswith("error: FILE: must name a file (such as lessons.jsonl, or - ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.db"]  # no file named "sub"


def test_an_export_to_a_read_only_place_says_so_and_the_cleanup_hides_nothing(
    db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def read_only(self: Path, *args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.EROFS, "Read-only file system", str(self))

    monkeypatch.setattr(Path, "open", read_only)
    monkeypatch.setattr(Path, "unlink", read_only)  # EROFS, not ENOENT, for the partial file that is not there
    target = tmp_path / "out.jsonl"
    code, out, err = cli("export", str(target), "--db", db)
    assert (code, out) == (2, "") and err == f"error: FILE: cannot write {target}: Read-only file system\n"


def test_json_nested_too_deeply_is_named_by_line(tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text(json.dumps(MINIMAL) + "\n" + DEEP + "\n" + "1" * 5000 + "\n")
    code, out, _ = cli("validate", str(path))
    assert code == 1 and "line 2: nested too deeply\n" in out
    assert "line 3: not JSON (an integer is longer than 4300 characters, the most read exactly; send such" in out
    code, out, err = cli("import", str(path), "--db", str(tmp_path / "s.db"))
    assert (code, out) == (2, "") and "\n  line 2: nested too deeply\n" in err and "\n  line 3: not JSON (" in err
    array = tmp_path / "deep.json"
    array.write_text("[" + DEEP + "]")
    assert cli("validate", str(array)) == (2, "", f"error: {array}: nested too deeply\n")
