"""event_writes: the stored JSON text of an event is exactly the compact JSON of ``Event.to_dict``."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from afteraction.model import Event
from afteraction.store.event_writes import event_json, micros, session_rows

_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=20,
)
# ids hold no control characters (refused at ingest: no route could name them); the payload and subject still do
_ID_CHARS = st.characters(codec="utf-8", exclude_categories=("Cs", "Cc"))
NAMES = st.text(_ID_CHARS, min_size=1, max_size=12).filter(str.strip)
OPTIONAL = st.fixed_dictionaries(
    {},
    optional={
        "parent_session_id": NAMES,
        "agent_role": st.sampled_from(["orchestrator", "subagent", "standalone"]),
        "subject": st.text(max_size=20),
        "causation_id": NAMES,
        "schema": NAMES,
        "tenant": NAMES,
        "labels": st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=3),
        "extensions": st.dictionaries(st.text(max_size=8), VALUES, max_size=3),
        "signature": st.fixed_dictionaries({"alg": st.just("hmac-sha256"), "value": st.text(max_size=20)}),
        "x-vendor": VALUES,
        "zz": VALUES,
    },
)


@settings(max_examples=150, deadline=None)
@given(NAMES, st.dictionaries(st.text(max_size=8), VALUES, max_size=5), OPTIONAL)
def test_the_stored_text_is_the_compact_json_of_to_dict(
    id: str, payload: dict[str, Any], optional: dict[str, Any]
) -> None:
    event = Event.from_dict(
        {
            "specversion": "0.2.0",
            "id": id,
            "time": "2026-01-01T10:00:00.5+02:00",
            "source": "agent://é",
            "type": "tool.called",
            "session_id": 'ses "1" \\ é',
            "trace_id": "trc-1",
            "payload": payload,
            **optional,
        }
    )
    assert event_json(event) == _COMPACT(event.to_dict())


def test_an_extra_field_named_like_a_known_one_keeps_the_place_to_dict_gives_it() -> None:
    event = Event(
        id="e1",
        time="2026-01-01T10:00:00Z",
        source="s",
        type="tool.called",
        session_id="s1",
        trace_id="t1",
        payload={},
        extra={"id": "shadow", "more": 1},
    )
    assert event_json(event) == _COMPACT(event.to_dict())


def test_sessions_fold_with_or_without_the_instants_given() -> None:
    events = [
        Event.from_dict(
            {
                "specversion": "0.2.0",
                "id": f"e{n}",
                "time": f"2026-01-01T10:00:0{9 - n}Z",
                "source": f"src-{n}",
                "type": "tool.called",
                "session_id": "s1",
                "trace_id": "t1",
                "payload": {},
            }
        )
        for n in range(3)
    ]
    given_instants = session_rows(events, [micros(e.instant) for e in events])
    assert given_instants == session_rows(events)
    assert given_instants["s1"].source == "src-2"
    assert given_instants["s1"].events == 3
