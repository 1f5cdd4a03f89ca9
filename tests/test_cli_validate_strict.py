"""``afteraction validate`` decodes as strictly as ingest (h17 #3): NaN, Infinity, a number past a double's
range, an integer of more than 4,300 characters (its sign counted, h30) and a lone surrogate escape are refused
with the service's rule; ``keys create`` refuses
``--require-signatures`` with ``--legacy-signatures`` (h17 #1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from afteraction.cli import main

EVENT = (
    '{"specversion":"0.2.0","id":"e1","time":"2026-01-01T00:00:00Z","source":"a","type":"task.created",'
    '"session_id":"s","trace_id":"t","payload":{"x":%s}}'
)
STRICT = {
    "NaN": "NaN and Infinity are not JSON numbers",
    "-Infinity": "NaN and Infinity are not JSON numbers",
    "Infinity": "NaN and Infinity are not JSON numbers",
    "1e400": "a number is beyond ±1.8e308, the range of a double",
    "-1e400": "a number is beyond ±1.8e308, the range of a double",
    '"\\ud83d"': "holds a lone UTF-16 surrogate escape (\\ud83d) with no pair: that is not Unicode text",
    '"a\\ude00b"': "holds a lone UTF-16 surrogate escape (\\ude00) with no pair: that is not Unicode text",
    "-"
    + "1" * 4300: "an integer is longer than 4300 characters, the most read exactly; send such a number as a string",
    "1" * 4301: "an integer is longer than 4300 characters, the most read exactly; send such a number as a string",
}


def _short(value: str) -> str:
    return value if len(value) <= 40 else f"{value[:3]}...({len(value)} characters)"


def _validate(tmp_path: Path, text: str) -> tuple[int, dict[str, object]]:
    path = tmp_path / "events.jsonl"
    path.write_text(text + "\n", encoding="utf-8")
    done = CliRunner().invoke(main, ["validate", "--json", str(path)])
    return done.exit_code, json.loads(done.output)


@pytest.mark.parametrize("value", sorted(STRICT), ids=_short)
def test_validate_refuses_what_ingest_refuses(tmp_path: Path, value: str) -> None:
    code, found = _validate(tmp_path, EVENT % value)
    assert code == 1 and found["invalid"] == 1, found
    (result,) = found["results"]  # type: ignore[misc]
    assert STRICT[value] in result["error"]


@pytest.mark.parametrize(
    "value",
    ['"\\ud83d\\ude00"', "1.7976931348623157e308", '"\\\\ud83d"', "1e-400", "-" + "1" * 4299, "1" * 4300],
    ids=_short,
)
def test_validate_takes_what_ingest_takes(tmp_path: Path, value: str) -> None:
    assert _validate(tmp_path, EVENT % value)[0] == 0


@pytest.mark.parametrize("value", sorted(STRICT), ids=_short)
def test_the_cli_and_the_service_give_the_same_rule(value: str) -> None:
    pytest.importorskip("msgspec")
    from afteraction.server.common import Problem
    from afteraction.server.ingest import parse_json

    with pytest.raises(Problem) as raised:
        parse_json((EVENT % value).encode(), "body")
    assert STRICT[value] in raised.value.message


def test_a_multiline_object_and_an_array_are_decoded_strictly_too(tmp_path: Path) -> None:
    whole = tmp_path / "one.json"
    whole.write_text((EVENT % "NaN").replace(",", ",\n"), encoding="utf-8")
    done = CliRunner().invoke(main, ["validate", str(whole)])
    assert done.exit_code == 1 and "NaN" in done.output
    array = tmp_path / "many.json"
    array.write_text("[" + EVENT % "1e400" + "]", encoding="utf-8")
    done = CliRunner().invoke(main, ["validate", str(array)])
    assert done.exit_code == 2 and "1.8e308" in done.output


def test_keys_create_refuses_both_signature_flags(tmp_path: Path) -> None:
    done = CliRunner().invoke(
        main,
        ["keys", "create", "--tenant", "acme", "--scope", "write", "--require-signatures", "--legacy-signatures",
         "--db", str(tmp_path / "k.db")],
        env={"AFTERACTION_SERVER_SECRET": "s" * 48},
    )  # fmt: skip
    assert done.exit_code == 2, done.output
    assert "--require-signatures: cannot go with --legacy-signatures" in done.output
    assert "covers no payload" in done.output
