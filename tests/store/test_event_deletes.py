"""Deleting sessions from the EventStore (``delete_sessions``, ``prune``), one suite over SQLite and
PostgreSQL: a session goes with all its events, its place in trees and its share of the counts;
nothing of another tenant's; an event id deleted is stored again when it comes back."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from afteraction.errors import StoreError, ValidationError
from afteraction.store.events import EventStore
from afteraction.store.postgres_schema import EVENT_COUNTS
from afteraction.store.session_walks import tree, workflow
from afteraction.store.sqlite_events import SQLiteEvents
from tests.store.test_events import event, ids, store  # noqa: F401  (store: the fixture over every backend)


def stored(store: EventStore, tenant: str) -> tuple[int, int, dict[str, int]]:  # noqa: F811
    """What the tenant holds, counted from the rows themselves, and what ``stats`` says."""
    sessions = store.sessions(tenant, limit=1000)
    events = sum(len(store.events(tenant, s.id, limit=1000)) for s in sessions)
    assert sum(s.events for s in sessions) == events
    stats = store.stats(tenant)
    assert (stats.events, stats.sessions) == (events, len(sessions)), "stats disagree with what is stored"
    return len(sessions), events, stats.by_type


def fill(store: EventStore, tenant: str) -> None:  # noqa: F811
    store.add_many(
        tenant,
        [
            event("p1", "2026-01-01T10:00:00Z", session="parent", type="task.created"),
            event("p2", "2026-01-01T10:05:00Z", session="parent", type="tool.called"),
            event("c1", "2026-01-01T10:01:00Z", session="child", parent="parent", type="tool.called"),
            event("o1", "2026-01-03T10:00:00Z", session="other", trace="t2"),
        ],
    )


def test_deleting_a_session_takes_its_events_tree_node_and_counts(store: EventStore) -> None:  # noqa: F811
    fill(store, "a")
    fill(store, "b")
    assert store.delete_sessions("a", ["parent", "unknown"]) == 1
    assert store.session("a", "parent") is None
    assert store.events("a", "parent", limit=10) == []
    assert stored(store, "a") == (2, 2, {"tool.called": 1, "task.updated": 1})  # task.created went to zero: gone
    child = store.session("a", "child")  # a child is a session of its own: it stays, naming its parent still
    assert child is not None and child.parent_session_id == "parent" and child.events == 1
    assert tree(store, "a", "parent") is None
    found = workflow(store, "a", "t1")
    assert found is not None and [root.session.id for root in found[0]] == ["child"]
    assert stored(store, "b") == (3, 4, {"task.created": 1, "tool.called": 2, "task.updated": 1})  # untouched
    assert ids(store.events("b", "parent", limit=10)) == ["p1", "p2"]
    assert store.delete_sessions("a", ["parent"]) == 0  # twice: nothing more
    assert store.delete_sessions("a", []) == 0
    assert store.delete_sessions("a", ["child", "other", "child"]) == 2
    assert stored(store, "a") == (0, 0, {})


def test_an_event_id_deleted_is_stored_again_when_it_comes_back(store: EventStore) -> None:  # noqa: F811
    fill(store, "a")
    store.delete_sessions("a", ["parent"])
    again = [event("p1", "2026-01-01T10:00:00Z", session="parent", type="task.created")]
    assert store.add_many("a", again) == [True]
    session = store.session("a", "parent")
    assert session is not None and session.events == 1
    assert ids(store.events("a", "parent", limit=10)) == ["p1"]
    assert stored(store, "a") == (3, 3, {"task.created": 1, "tool.called": 1, "task.updated": 1})
    assert store.add_many("a", again) == [False]


def test_prune_deletes_exactly_the_sessions_that_ended_before(store: EventStore) -> None:  # noqa: F811
    fill(store, "a")
    fill(store, "b")
    # "parent" ends at 10:05, "child" at 10:01: a cut at 10:05 takes the child only (its end is before).
    assert store.prune("a", datetime(2026, 1, 1, 10, 5, tzinfo=timezone.utc)) == 1
    assert [s.id for s in store.sessions("a", limit=10)] == ["other", "parent"]
    assert ids(store.events("a", "parent", limit=10)) == ["p1", "p2"]
    assert stored(store, "a") == (2, 3, {"task.created": 1, "tool.called": 1, "task.updated": 1})
    assert stored(store, "b")[:2] == (3, 4)  # another tenant's sessions are not this prune's
    assert store.prune("a", datetime(2026, 1, 1, 10, 5, tzinfo=timezone.utc)) == 0


def test_prune_of_every_tenant(store: EventStore) -> None:  # noqa: F811
    fill(store, "a")
    fill(store, "b")
    store.add_many("c", [event("new", "2026-02-01T00:00:00Z")])
    assert store.prune(None, datetime(2026, 1, 2, tzinfo=timezone.utc)) == 4
    for tenant in ("a", "b"):
        assert [s.id for s in store.sessions(tenant, limit=10)] == ["other"]
        assert stored(store, tenant) == (1, 1, {"task.updated": 1})
    assert stored(store, "c") == (1, 1, {"task.updated": 1})
    assert store.prune(None, datetime(2027, 1, 1, tzinfo=timezone.utc)) == 3
    assert all(stored(store, tenant) == (0, 0, {}) for tenant in ("a", "b", "c"))


def test_bad_input_is_named_and_deletes_nothing(store: EventStore) -> None:  # noqa: F811
    fill(store, "a")
    with pytest.raises(ValidationError, match="before"):
        store.prune("a", datetime(2027, 1, 1))  # naive: which instant is meant cannot be known
    with pytest.raises(ValidationError, match="ids"):
        store.delete_sessions("a", "parent")
    with pytest.raises(ValidationError, match=r"ids\[1\]"):
        store.delete_sessions("a", ["parent", ""])
    assert stored(store, "a")[:2] == (3, 4)


def refuse_count_updates(events: EventStore) -> None:
    """Make the last step of a deletion (the counts' update) fail with "refused", on either backend."""
    if isinstance(events, SQLiteEvents):
        with events.store._writing() as db:
            db.execute("CREATE TRIGGER refuse BEFORE UPDATE ON event_counts BEGIN SELECT RAISE(ABORT, 'refused'); END")
    else:
        with events.store._transaction("a") as cur:  # type: ignore[attr-defined]
            cur.execute("CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE 'refused'; END $$")
            cur.execute(f"CREATE TRIGGER refuse BEFORE UPDATE ON {EVENT_COUNTS} FOR EACH ROW EXECUTE FUNCTION refuse()")


def test_a_failed_deletion_leaves_everything_as_it_was(store: EventStore) -> None:  # noqa: F811
    """The counts are the last step: a failure there undoes the events and sessions already deleted."""
    fill(store, "a")
    refuse_count_updates(store)
    with pytest.raises(StoreError, match="refused"):
        store.delete_sessions("a", ["parent"])
    with pytest.raises(StoreError, match="refused"):
        store.prune(None, datetime(2027, 1, 1, tzinfo=timezone.utc))
    assert stored(store, "a") == (3, 4, {"task.created": 1, "tool.called": 2, "task.updated": 1})
    assert ids(store.events("a", "parent", limit=10)) == ["p1", "p2"]
