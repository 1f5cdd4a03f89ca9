"""``payload.$schema``, the one payload member the AEP envelope schema types, must be a string (h17 #4)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from afteraction.errors import ValidationError
from afteraction.model import Event
from tests.conftest import CONFORMANCE

BASE = {
    "specversion": "0.2.0",
    "id": "evt-1",
    "time": "2026-01-01T00:00:00Z",
    "source": "agent://a",
    "type": "task.created",
    "session_id": "ses-1",
    "trace_id": "tr-1",
}


@pytest.mark.parametrize(
    ("value", "kind"), [(5, "a number"), (True, "true or false"), (None, "null"), ([], "an array"), ({}, "an object")]
)
def test_a_payload_schema_that_is_not_a_string_is_refused_naming_it(value: Any, kind: str) -> None:
    with pytest.raises(ValidationError) as raised:
        Event.from_dict({**BASE, "payload": {"$schema": value, "x": 1}})
    assert raised.value.field == "payload.$schema"
    assert raised.value.rule.startswith("must be a string") and raised.value.rule.endswith(f"got {kind}")


def test_a_string_payload_schema_and_none_at_all_are_taken() -> None:
    assert Event.from_dict({**BASE, "payload": {"$schema": "https://example.com/s.json"}}).payload["$schema"]
    assert Event.from_dict({**BASE, "payload": {"schema": 5}}).payload == {"schema": 5}


def test_it_agrees_with_the_conformance_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((CONFORMANCE / "aep" / "schemas" / "aep-envelope.schema.json").read_text())
    for value in (5, None, "https://x", [1]):
        data = {**BASE, "payload": {"$schema": value}}
        by_schema = jsonschema.Draft202012Validator(schema).is_valid(data)
        try:
            Event.from_dict(data)
            ours = True
        except ValidationError:
            ours = False
        assert ours == by_schema, value
