"""``afteraction validate`` over AEP's own fixtures, each one event written over several lines: a
valid one passes, an invalid one names its field. They were read as JSONL before, line by line:
``task-created.json`` gave ``14 events, 0 valid, 14 invalid`` and ``bad-time-format.json`` never
named ``time``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from afteraction.cli import main
from tests.conftest import CONFORMANCE

FIXTURES = CONFORMANCE / "aep" / "fixtures"


@pytest.mark.parametrize("path", sorted((FIXTURES / "valid").glob("*.json")), ids=lambda p: p.stem)
def test_each_valid_fixture_is_one_valid_event(path: Path) -> None:
    done = CliRunner().invoke(main, ["validate", str(path)])
    assert done.exit_code == 0, done.output
    assert done.output.strip() == "1 events, 1 valid, 0 invalid"


@pytest.mark.parametrize("path", sorted((FIXTURES / "invalid").glob("*.json")), ids=lambda p: p.stem)
def test_each_invalid_fixture_is_one_invalid_event_named(path: Path) -> None:
    done = CliRunner().invoke(main, ["validate", str(path)])
    assert done.exit_code == 1, done.output
    assert done.output.splitlines()[-1] == "1 events, 0 valid, 1 invalid"
    assert done.output.startswith("event 1: ")


def test_the_time_fixture_names_time_and_jsonl_is_still_read_by_line(tmp_path: Path) -> None:
    done = CliRunner().invoke(main, ["validate", str(FIXTURES / "invalid" / "bad-time-format.json")])
    assert done.output.startswith("event 1: time: must be an RFC 3339 date-time")
    lines = tmp_path / "events.jsonl"
    event = json.loads((FIXTURES / "valid" / "task-created.json").read_text())
    lines.write_text(json.dumps(event) + "\n" + json.dumps({**event, "time": "never"}) + "\n")
    done = CliRunner().invoke(main, ["validate", str(lines)])
    assert done.exit_code == 1 and done.output.startswith("line 2: time: ")
    assert done.output.splitlines()[-1] == "2 events, 1 valid, 1 invalid"


def test_lines_end_at_a_newline_only_as_the_service_reads_them(tmp_path: Path) -> None:
    """The service splits NDJSON at ``\\n`` only; ``validate`` read the file in text mode, whose universal newlines
    also split at a lone ``\\r``: it called valid a file the service refuses as one line that is not JSON."""
    event = json.dumps(json.loads((FIXTURES / "valid" / "task-created.json").read_text()))
    lone = tmp_path / "cr.jsonl"
    lone.write_bytes(f"{event}\r{event}\r".encode())
    done = CliRunner().invoke(main, ["validate", str(lone)])
    assert done.exit_code == 1 and done.output.splitlines()[-1] == "1 events, 0 valid, 1 invalid"
    windows = tmp_path / "crlf.jsonl"
    windows.write_bytes(f"{event}\r\n{event}\r\n".encode())
    done = CliRunner().invoke(main, ["validate", str(windows)])
    assert done.exit_code == 0 and done.output.strip() == "2 events, 2 valid, 0 invalid"
