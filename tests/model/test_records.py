"""Every record type has one serializer each way: from_dict(to_dict(x)) == x."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from afteraction.errors import ValidationError
from afteraction.model import (
    Attempt,
    Evidence,
    Experience,
    Run,
    Scenario,
    Scope,
    Skill,
    Solution,
    Status,
    ToolCall,
    Tried,
)

NAMES = st.text(st.characters(categories=("L", "N", "P", "S")), min_size=1, max_size=12)
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40).filter(str.strip)
TIMES = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(timezone.utc))
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**9), 10**9) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
SCOPES = st.builds(
    Scope,
    tenant=NAMES,
    app=NAMES,
    project=NAMES,
    team=st.none() | NAMES,
    agent=st.none() | NAMES,
    user=st.none() | NAMES,
)
CALLS = st.builds(
    ToolCall,
    tool=NAMES,
    args=st.dictionaries(st.text(max_size=5), JSON, max_size=3),
    result=JSON,
    error=st.none() | TEXT,
    call_id=st.none() | NAMES,
    at=st.none() | TIMES,
)
EVIDENCE = st.builds(
    Evidence,
    id=NAMES,
    passed=st.booleans(),
    method=st.sampled_from(["check", "approval", "tool", "classifier"]),
    detail=st.text(max_size=20),
    approver=st.none() | NAMES,
    required=st.booleans(),
)


@st.composite
def runs(draw: st.DrawFn) -> Run:
    attempts = tuple(
        Attempt(i, tuple(draw(st.lists(CALLS, max_size=3))), draw(st.none() | TEXT))
        for i in range(draw(st.integers(0, 3)))
    )
    return Run(
        id=draw(NAMES),
        task=draw(TEXT),
        scope=draw(SCOPES),
        started_at=draw(TIMES),
        attempts=attempts,
        env=draw(st.dictionaries(NAMES, st.text(max_size=10), max_size=3)),
        ended_at=draw(st.none() | TIMES),
        state=draw(st.sampled_from(["running", "completed", "failed"])),
        error=draw(st.none() | TEXT),
        evidence=tuple(draw(st.lists(EVIDENCE, max_size=3))),
        session_id=draw(st.none() | NAMES),
        trace_id=draw(st.none() | NAMES),
        agent=draw(st.none() | NAMES),
        parent_id=draw(st.none() | NAMES),
    )


@st.composite
def experiences(draw: st.DrawFn) -> Experience:
    created = draw(TIMES)
    return Experience(
        id=draw(NAMES),
        task_id=draw(NAMES),
        task=draw(TEXT),
        lesson=draw(TEXT),
        status=draw(st.sampled_from(list(Status))),
        confidence=draw(st.floats(0, 1)),
        scope=draw(SCOPES),
        created_at=created,
        summary=draw(st.text(max_size=30)),
        scenario=draw(
            st.none()
            | st.builds(
                Scenario,
                task=TEXT,
                environment=st.dictionaries(NAMES, st.text(max_size=8), max_size=2),
                symptoms=st.lists(TEXT, max_size=2).map(tuple),
                failure_signature=st.text(max_size=10),
            )
        ),
        solution=draw(
            st.none()
            | st.builds(
                Solution,
                tried=st.lists(
                    st.builds(
                        Tried,
                        attempt=st.integers(0, 5),
                        tool=NAMES,
                        error_class=TEXT,
                        args=st.dictionaries(st.text(max_size=4), JSON, max_size=2),
                    ),
                    max_size=2,
                ).map(tuple),
                worked=st.text(max_size=10),
                steps=st.lists(TEXT, max_size=2).map(tuple),
            )
        ),
        skill=draw(st.none() | st.builds(Skill, statement=TEXT, authored_by=NAMES)),
        checks=tuple(draw(st.lists(NAMES, max_size=3))),
        supporting=draw(st.integers(0, 50)),
        contradicting=draw(st.integers(0, 50)),
        revision=draw(st.integers(1, 9)),
        updated_at=draw(st.none() | st.just(created + timedelta(days=1))),
        expires_at=draw(st.none() | TIMES),
        source=draw(NAMES),
        wordings=tuple(draw(st.lists(TEXT, max_size=Experience.MAX_WORDINGS))),
        outcome_keys=tuple(draw(st.lists(NAMES, max_size=4))),
    )


@settings(max_examples=150, deadline=None)
@given(runs())
def test_run_round_trips_through_json(run: Run) -> None:
    assert Run.from_dict(json.loads(json.dumps(run.to_dict()))) == run


@settings(max_examples=150, deadline=None)
@given(experiences())
def test_experience_round_trips_through_json(experience: Experience) -> None:
    assert Experience.from_dict(json.loads(json.dumps(experience.to_dict()))) == experience


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"attempts": "x"}, "run.attempts"),
        ({"attempts": [{"index": -1}]}, "run.attempts[0].index"),
        ({"attempts": [{"index": 0, "calls": [{"tool": ""}]}]}, "run.attempts[0].calls[0].tool"),
        ({"evidence": [{"id": "a", "passed": "yes"}]}, "run.evidence[0].passed"),
        ({"evidence": [{"id": "a", "passed": True, "method": "vibes"}]}, "run.evidence[0].method"),
        ({"state": "paused"}, "run.state"),
        ({"started_at": "2026-01-01T10:00:00"}, "run.started_at"),
        ({"scope": {"tenant": "a", "app": "b"}}, "run.scope.project"),
        ({"scope": {"tenant": "a", "app": "b", "project": "c", "planet": "x"}}, "run.scope.planet"),
    ],
)
def test_bad_runs_name_the_field(change: dict[str, Any], field: str) -> None:
    base = {"id": "r", "task": "t", "scope": {"tenant": "a", "app": "b", "project": "c"},
            "started_at": "2026-01-01T10:00:00Z"}  # fmt: skip
    with pytest.raises(ValidationError) as info:
        Run.from_dict({**base, **change})
    assert info.value.field == field


def _stored(**change: Any) -> dict[str, Any]:
    return {"id": "exp_1", "task_id": "run_1", "task": "t", "lesson": "l", "status": "validated",
            "confidence": 0.5, "scope": {"tenant": "a", "app": "b", "project": "c"},
            "created_at": "2026-01-01T10:00:00Z", **change}  # fmt: skip


def test_a_record_without_wordings_or_outcome_keys_reads_and_writes_as_before() -> None:
    read = Experience.from_dict(_stored())
    assert read.wordings == () and read.outcome_keys == ()
    assert "wordings" not in read.to_dict() and "outcome_keys" not in read.to_dict()


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"wordings": "one"}, "wordings"),
        ({"wordings": ["a", "b", "c", "d"]}, "wordings"),
        ({"wordings": ["x" * 301]}, "wordings[0]"),
        ({"wordings": ["ok", 7]}, "wordings[1]"),
        ({"outcome_keys": [f"run:{n}" for n in range(65)]}, "outcome_keys"),
        ({"outcome_keys": [""]}, "outcome_keys[0]"),
        ({"revision": 2**31}, "revision"),  # beyond PostgreSQL's integer: every backend keeps one bound
        ({"revision": 0}, "revision"),
    ],
)
def test_bad_wordings_and_outcome_keys_name_the_field(change: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as info:
        Experience.from_dict(_stored(**change))
    assert info.value.field == field


def test_an_import_refuses_a_key_that_is_no_field_at_any_depth() -> None:
    full = _stored(scenario={"task": "t", "environment": {}, "symptoms": [], "failure_signature": ""},
                   solution={"tried": [{"attempt": 0, "tool": "x", "error_class": "E"}], "worked": "", "steps": []},
                   skill={"statement": "s", "authored_by": "host"})  # fmt: skip
    assert Experience.from_dict(full, strict=True) == Experience.from_dict(full)
    for change, field in [
        ({"expire_at": "2030-01-01T00:00:00Z"}, "expire_at"),
        ({"scenario": {"task": "t", "enviroment": {}}}, "scenario.enviroment"),
        ({"solution": {"tried": [{"attempt": 0, "tool": "x", "error_class": "E", "err": 1}]}}, "solution.tried[0].err"),
        ({"skill": {"statement": "s", "authored_by": "host", "when": []}}, "skill.when"),
    ]:
        with pytest.raises(ValidationError) as info:
            Experience.from_dict(_stored(**change), strict=True)
        assert info.value.field == field and "is not a field of" in info.value.rule
        Experience.from_dict(_stored(**change))  # a stored record or a newer service's answer: read as before


def test_null_optional_fields_are_absent_and_wrong_types_are_named_in_jsons_words() -> None:
    read = Experience.from_dict(_stored(summary=None, source=None))
    assert (read.summary, read.source) == ("", "import")
    for change, rule in [
        ({"confidence": "high"}, "must be a number, got a string"),
        ({"supporting": 2.5}, "must be an integer, got 2.5"),
        ({"checks": "ok"}, "must be a list of strings, got a string"),
    ]:
        with pytest.raises(ValidationError, match=rule):
            Experience.from_dict(_stored(**change))


def test_a_naive_expiry_or_update_time_is_refused_naming_the_field() -> None:
    """Found by a user: a naive ``expires_at`` was accepted, then ``add`` failed with a bare TypeError."""
    base = Experience.from_dict(_stored())
    for name in ("expires_at", "updated_at"):
        with pytest.raises(ValidationError) as info:
            dataclasses.replace(base, **{name: datetime(2030, 1, 1)})
        assert info.value.field == name
