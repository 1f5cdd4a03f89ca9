"""Event: the AEP 0.2.0 envelope, checked against the protocol's own fixtures and schema."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, FormatChecker

from afteraction.errors import ValidationError
from afteraction.model import AGENT_ROLES, EVENT_TYPES, Event, _check
from tests.conftest import CONFORMANCE

AEP = CONFORMANCE / "aep"
VALID = sorted((AEP / "fixtures" / "valid").glob("*.json"))
INVALID = sorted((AEP / "fixtures" / "invalid").glob("*.json"))
STREAM = CONFORMANCE / "aep-sdk-streams" / "openai-agents" / "events.jsonl"

# The field each invalid fixture must be rejected for (a set where several are at fault).
EXPECTED_FIELD: dict[str, set[str]] = {
    "bad-agent-role": {"agent_role"},
    "bad-specversion": {"specversion"},
    "bad-time-format": {"time"},
    "empty-id": {"id"},
    "missing-payload": {"payload"},
    "missing-required-fields": {"time", "source", "session_id", "trace_id"},
    "unknown-type": {"type"},
}


def _load(path: Path) -> Any:
    with path.open(encoding="utf-8-sig") as handle:
        return json.load(handle)


def _stream() -> list[dict[str, Any]]:
    with STREAM.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


ENVELOPE = Draft202012Validator(_load(AEP / "schemas" / "aep-envelope.schema.json"), format_checker=FormatChecker())
CORE_TYPES = _load(AEP / "schemas" / "aep-core-events.schema.json")["properties"]["event_types"]["items"]["enum"]


def _schema_accepts(data: Any) -> bool:
    return ENVELOPE.is_valid(data) and isinstance(data, dict) and data.get("type") in CORE_TYPES


def _event_accepts(data: Any) -> bool:
    try:
        Event.from_dict(data)
    except ValidationError:
        return False
    return True


def test_the_fixtures_are_all_there() -> None:
    assert len(VALID) == 12
    assert {path.stem for path in INVALID} == set(EXPECTED_FIELD)
    assert len(_stream()) == 22


def test_event_types_match_the_protocols_list() -> None:
    assert tuple(CORE_TYPES) == EVENT_TYPES
    assert sorted(json.loads(path.read_text())["type"] for path in VALID) == sorted(EVENT_TYPES)


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_valid_fixture_is_accepted(path: Path) -> None:
    data = _load(path)
    event = Event.from_dict(data)
    assert event.id == data["id"]
    assert event.type == data["type"]
    assert event.instant == datetime.fromisoformat(data["time"].replace("Z", "+00:00"))


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_invalid_fixture_names_the_field(path: Path) -> None:
    with pytest.raises(ValidationError) as caught:
        Event.from_dict(_load(path))
    assert caught.value.field in EXPECTED_FIELD[path.stem]
    assert caught.value.field in str(caught.value)
    assert caught.value.status == 400


@pytest.mark.parametrize("path", [*VALID, *INVALID], ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_schema_and_event_agree_on_fixtures(path: Path) -> None:
    data = _load(path)
    assert _schema_accepts(data) == (path.parent.name == "valid")
    assert _event_accepts(data) == _schema_accepts(data)


@pytest.mark.parametrize("index", range(22))
def test_sdk_stream_events_are_accepted_and_schema_valid(index: int) -> None:
    data = _stream()[index]
    assert _schema_accepts(data)
    assert Event.from_dict(data).to_dict() == data


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_valid_fixture_round_trips(path: Path) -> None:
    data = _load(path)
    assert Event.to_dict(Event.from_dict(data)) == data


@pytest.mark.parametrize(
    ("time", "ok"),
    [
        ("2026-01-01T10:00:00", False),  # no offset
        ("2026-01-01", False),
        ("10:00:00Z", False),
        ("2026-01-01T10:00:00+0200", False),
        ("2026-02-30T10:00:00Z", False),
        ("2026-01-01T24:00:00Z", False),
        ("2026-01-01T10:00:00+24:00", False),
        ("2026-01-01T10:00:00Z\n", False),
        ("\uff12026-01-01T10:00:00Z", False),  # a full-width digit is not an RFC 3339 digit
        ("2026-01-01T10:00:00Z", True),
        ("2026-01-01T10:00:00.123+02:00", True),
        ("2026-01-01t10:00:00z", True),
    ],
)
def test_time_must_be_rfc3339_with_offset(time: str, ok: bool) -> None:
    data = {**_load(AEP / "fixtures" / "sample-event.json"), "time": time}
    if ok:
        assert Event.from_dict(data).time == time
        assert _schema_accepts(data)
    else:
        with pytest.raises(ValidationError) as caught:
            Event.from_dict(data)
        assert caught.value.field == "time"


def test_instant_orders_by_meaning_not_text() -> None:
    base = _load(AEP / "fixtures" / "sample-event.json")
    early = Event.from_dict({**base, "time": "2026-01-01T10:00:00+02:00"})
    late = Event.from_dict({**base, "time": "2026-01-01T09:00:00Z"})
    assert early.time > late.time
    assert early.instant < late.instant
    assert early.instant.utcoffset() == timedelta(hours=2)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"payload": []}, "payload"),
        ({"id": 5}, "id"),
        ({"type": 3}, "type"),
        ({"labels": {"a": 1}}, "labels.a"),
        ({"extensions": []}, "extensions"),
        ({"signature": "x"}, "signature"),
        ({"subject": 1}, "subject"),
        ({"source": ""}, "source"),
        ({"session_id": ""}, "session_id"),
        ({"trace_id": ""}, "trace_id"),
    ],
)
def test_wrong_shapes_name_the_field(change: dict[str, Any], field: str) -> None:
    data = {**_load(AEP / "fixtures" / "sample-event.json"), **change}
    assert not _schema_accepts(data)
    with pytest.raises(ValidationError) as caught:
        Event.from_dict(data)
    assert caught.value.field == field


def test_not_an_object_is_refused() -> None:
    with pytest.raises(ValidationError) as caught:
        Event.from_dict(["not", "an", "event"])
    assert caught.value.field == "event"


def test_unknown_fields_are_kept() -> None:
    data = {**_load(AEP / "fixtures" / "sample-event.json"), "x_vendor": {"a": [1, 2]}}
    event = Event.from_dict(data)
    assert event.extra == {"x_vendor": {"a": [1, 2]}}
    assert event.to_dict() == data


# -- Hypothesis ------------------------------------------------------------------------------------

_ids = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=40)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)
_objects = st.dictionaries(st.text(max_size=8), _json, max_size=4)


@st.composite
def _times(draw: st.DrawFn) -> tuple[str, datetime]:
    """An RFC 3339 time text and the instant it means."""
    moment = draw(st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(2100, 1, 1)))
    minutes = draw(st.integers(min_value=-(23 * 60 + 59), max_value=23 * 60 + 59))
    sign = "-" if minutes < 0 else "+"
    offset = f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
    if minutes == 0 and draw(st.booleans()):
        offset = "Z"
    fraction = draw(st.sampled_from(["", ".0", ".123", ".123456", ".123456789"]))
    micro = int(fraction[1:7].ljust(6, "0")) if fraction else 0
    zone = timezone(timedelta(minutes=minutes))
    instant = moment.replace(microsecond=micro, tzinfo=zone)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + fraction + offset, instant


@st.composite
def _envelopes(draw: st.DrawFn) -> dict[str, Any]:
    data: dict[str, Any] = {
        "specversion": "0.2.0",
        "id": draw(_ids),
        "time": draw(_times())[0],
        "source": "agent://" + draw(_ids),
        "type": draw(st.sampled_from(EVENT_TYPES)),
        "session_id": draw(_ids),
        "trace_id": draw(_ids),
        "payload": draw(_objects),
    }
    for name in ("parent_session_id", "subject", "causation_id", "idempotency_key", "schema", "tenant"):
        if draw(st.booleans()):
            data[name] = draw(st.text(max_size=20))
    if draw(st.booleans()):
        data["agent_role"] = draw(st.sampled_from(AGENT_ROLES))
    if draw(st.booleans()):
        data["labels"] = draw(st.dictionaries(st.text(max_size=6), st.text(max_size=6), max_size=3))
    if draw(st.booleans()):
        data["extensions"] = draw(_objects)
    if draw(st.booleans()):
        data["signature"] = {"alg": "hmac-sha256", "value": draw(st.text(max_size=8)), "canon": "v2"}
    if draw(st.booleans()):
        data["x_" + draw(st.text(max_size=6))] = draw(_json)
    return data


@settings(suppress_health_check=[HealthCheck.too_slow])  # generation, not the code, is slow on a busy machine
@given(_envelopes())
def test_generated_events_round_trip(data: dict[str, Any]) -> None:
    event = Event.from_dict(data)
    assert event.to_dict() == data
    assert Event.from_dict(event.to_dict()) == event


@given(_times())
def test_instant_is_the_time_meant(pair: tuple[str, datetime]) -> None:
    text, instant = pair
    data = {**_load(AEP / "fixtures" / "sample-event.json"), "time": text}
    event = Event.from_dict(data)
    assert event.instant == instant
    assert event.instant.utcoffset() == instant.utcoffset()
    assert event.time == text


@given(_envelopes())
def test_generated_events_satisfy_the_schema(data: dict[str, Any]) -> None:
    assert _schema_accepts(data)


@pytest.mark.parametrize("field", ["parent_session_id", "agent_role", "labels", "signature", "causation_id"])
def test_null_optional_fields_are_rejected_as_the_schema_does(field: str) -> None:
    event = {
        "specversion": "0.2.0",
        "id": "evt_1",
        "time": "2026-01-01T10:00:00Z",
        "source": "agent://x",
        "type": "task.created",
        "session_id": "s",
        "trace_id": "t",
        "payload": {},
        field: None,
    }
    with pytest.raises(ValidationError) as info:
        Event.from_dict(event)
    assert info.value.field == field


# The C date-time parser reads the texts the RFC 3339 pattern admits exactly as the field-by-field reading does.
_TIMES = st.builds(
    "{:04d}-{:02d}-{:02d}{}{:02d}:{:02d}:{:02d}{}{}".format,
    st.integers(0, 9999),
    st.integers(0, 13),
    st.integers(0, 32),
    st.sampled_from("Tt "),
    st.integers(0, 24),
    st.integers(0, 60),
    st.integers(0, 61),
    st.one_of(st.just(""), st.text("0123456789", min_size=1, max_size=9).map(lambda digits: "." + digits)),
    st.one_of(
        st.sampled_from(["Z", "z"]),
        st.builds("{}{:02d}:{:02d}".format, st.sampled_from("+-"), st.integers(0, 25), st.integers(0, 61)),
    ),
)


@settings(max_examples=1000, deadline=None)
@given(_TIMES)
@example("0001-01-01T00:00:00+00:01")  # in range as written, before year 1 in UTC: both readers refuse it
@example("9999-12-31T23:59:59-00:01")
def test_times_parse_the_same_by_either_reader(text: str) -> None:
    match = _check._RFC3339.match(text)
    assert match is not None
    try:
        slow: datetime | str = _check._parse_matched(match, "time")
        if not _check._MIN_UTC <= slow <= _check._MAX_UTC:  # parse_time's range, checked after either reading
            slow = "is outside the years 1 to 9999 in UTC"
    except ValidationError as exc:
        slow = exc.rule
    if isinstance(slow, str) and slow.startswith("is outside"):
        slow = f"{slow}; got {text[:64]!r}"
    try:
        fast: datetime | str = _check.parse_time(text, "time")
    except ValidationError as exc:
        fast = exc.rule
    assert fast == slow
    if isinstance(fast, datetime) and isinstance(slow, datetime):
        assert fast.utcoffset() == slow.utcoffset()
        assert (fast.year, fast.microsecond) == (slow.year, slow.microsecond)
