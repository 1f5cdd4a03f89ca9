"""``afteraction events prune --older-than``: an age it refuses is told with the rule it breaks."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_cli import cli
from tests.test_cli_events import sessions, stored


@pytest.mark.parametrize("age", ["99999999d", "1234567h", "30 days", "d"])
def test_an_age_refused_names_its_six_digit_limit_and_deletes_nothing(tmp_path: Path, age: str) -> None:
    db = stored(tmp_path / "e.db")
    code, out, err = cli("events", "prune", "--older-than", age, "--db", db)
    assert (code, out) == (2, "")
    assert "--older-than: must be a whole number of days or hours of at most 6 digits" in err, err
    assert sessions(db, "acme") == ["new", "old"]


def test_six_digits_are_taken(tmp_path: Path) -> None:
    db = stored(tmp_path / "e.db")
    code, _, err = cli("events", "prune", "--older-than", "999999h", "--db", db)
    assert code == 0, err
    assert sessions(db, "acme") == ["new", "old"]  # 114 years ago: none ended before it
