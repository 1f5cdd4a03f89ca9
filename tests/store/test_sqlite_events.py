"""The SQLite event store: dedup per tenant, sessions kept current, order by instant, cycle-safe trees."""

from __future__ import annotations

import time
from pathlib import Path

from afteraction.model import Event
from afteraction.store.sqlite import SQLiteStore
from afteraction.store.sqlite_events import SQLiteEvents


def event(id: str, time: str, session: str = "s1", parent: str | None = None, source: str = "agent://a") -> Event:
    return Event(
        id=id,
        time=time,
        source=source,
        type="task.updated",
        session_id=session,
        trace_id="t1",
        payload={},
        parent_session_id=parent,
    )


def test_dedup_is_per_tenant_and_within_a_batch(tmp_path: Path) -> None:
    events = SQLiteEvents(SQLiteStore(tmp_path / "e.db"))
    one = event("e1", "2026-01-01T10:00:00Z")
    assert events.add_many("a", [one, one]) == [True, False]
    assert events.add_many("b", [one]) == [True]
    assert events.add_many("a", [one]) == [False]
    session = events.session("a", "s1")
    assert session is not None and session.events == 1
    events.store.close()


def test_events_sort_by_instant_not_by_text(tmp_path: Path) -> None:
    events = SQLiteEvents(SQLiteStore(tmp_path / "e.db"))
    # As text "…T11:30:00+02:00" sorts after "…T10:00:00Z"; as an instant it is 09:30Z, earlier.
    events.add_many("a", [event("late", "2026-01-01T10:00:00Z"), event("early", "2026-01-01T11:30:00+02:00")])
    assert [data["id"] for _, data in events.events("a", "s1", limit=10)] == ["early", "late"]
    session = events.session("a", "s1")
    assert session is not None
    assert session.to_dict()["started_at"] == "2026-01-01T09:30:00.000000Z"
    events.store.close()


def test_a_self_parent_and_a_two_cycle_end_the_tree_walk(tmp_path: Path) -> None:
    events = SQLiteEvents(SQLiteStore(tmp_path / "e.db"))
    events.add_many(
        "a",
        [
            event("x1", "2026-01-01T10:00:00Z", session="self", parent="self"),
            event("y1", "2026-01-01T10:00:00Z", session="p", parent="q"),
            event("y2", "2026-01-01T10:00:01Z", session="q", parent="p"),
        ],
    )
    started = time.monotonic()
    found = events.tree("a", "self")
    assert found is not None and found[0].children == ()
    found = events.tree("a", "p")
    assert found is not None
    tree, truncated = found
    assert [child.session.id for child in tree.children] == ["q"]
    assert tree.children[0].children == () and not truncated
    assert time.monotonic() - started < 1
    assert events.tree("b", "p") is None  # another tenant sees nothing
    events.store.close()
