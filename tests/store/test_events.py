"""The EventStore contract, one suite over SQLite and PostgreSQL: dedup per tenant, order by
instant, sessions kept current, cycle-safe trees and workflows, filters, counts, isolation."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from afteraction.errors import ConfigError
from afteraction.model import Event
from afteraction.store import events as contract
from afteraction.store import postgres_events
from afteraction.store.events import EventStore, micros, open_events
from afteraction.store.session_walks import matching, tree, workflow
from afteraction.store.sqlite import SQLiteStore
from afteraction.store.sqlite_events import SQLiteEvents


def event(
    id: str,
    time: str = "2026-01-01T10:00:00Z",
    session: str = "s1",
    parent: str | None = None,
    *,
    source: str = "agent://a",
    type: str = "task.updated",
    trace: str = "t1",
    payload: dict[str, object] | None = None,
) -> Event:
    return Event(
        id=id,
        time=time,
        source=source,
        type=type,
        session_id=session,
        trace_id=trace,
        payload=payload or {},
        parent_session_id=parent,
    )


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[EventStore]:
    if request.param == "sqlite":
        found: EventStore = open_events(str(tmp_path / "events.db"))
    else:
        found = open_events(request.getfixturevalue("pg_url"))
    yield found
    found.close()


def ids(found: list[contract.StoredEvent]) -> list[str]:
    import json

    return [json.loads(item.data)["id"] for item in found]


def test_dedup_is_per_tenant_never_global_and_within_one_write(store: EventStore) -> None:
    one = event("e1")
    assert store.add_many("a", [one, one]) == [True, False]
    assert store.add_many("b", [one]) == [True]
    assert store.add_many("a", [one]) == [False]
    assert store.add_groups([("a", [event("e2"), one]), ("c", [one]), ("a", [event("e2")])]) == [
        [True, False],
        [True],
        [False],
    ]
    for tenant, count in (("a", 2), ("b", 1), ("c", 1)):
        session = store.session(tenant, "s1")
        assert session is not None and session.events == count
        assert store.stats(tenant).events == count


def test_events_sort_by_instant_not_by_text(store: EventStore) -> None:
    # As text "…T11:30:00+02:00" sorts after "…T10:00:00Z"; as an instant it is 09:30Z, earlier.
    store.add_many("a", [event("late", "2026-01-01T10:00:00Z"), event("early", "2026-01-01T11:30:00+02:00")])
    store.add_many("a", [event("middle", "2026-01-01T09:45:00.5-00:00")])
    assert ids(store.events("a", "s1", limit=10)) == ["early", "middle", "late"]
    session = store.session("a", "s1")
    assert session is not None
    assert session.to_dict()["started_at"] == "2026-01-01T09:30:00.000000Z"
    assert session.to_dict()["ended_at"] == "2026-01-01T10:00:00.000000Z"


def test_the_session_row_follows_its_events(store: EventStore) -> None:
    store.add_many("a", [event("e1", "2026-01-01T10:00:00Z", source="agent://second")])
    store.add_many("a", [event("e2", "2026-01-01T09:00:00Z", parent="p1", source="agent://first")])
    store.add_many("a", [event("e3", "2026-01-01T11:00:00Z", parent="p2", source="agent://third")])
    session = store.session("a", "s1")
    assert session is not None
    assert (session.source, session.parent_session_id, session.events) == ("agent://first", "p1", 3)
    assert session.ended_at - session.started_at == 2 * 3600 * 1_000_000
    root = store.session("a", "r")
    assert root is None
    store.add_many("a", [event("e4", session="r", parent="")])  # the SDKs send "" for a root
    found = store.session("a", "r")
    assert found is not None and found.parent_session_id is None


def test_sessions_page_newest_first(store: EventStore) -> None:
    store.add_many("a", [event(f"e{i}", f"2026-01-0{i + 1}T00:00:00Z", session=f"s{i}") for i in range(5)])
    store.add_many("a", [event("same", "2026-01-05T00:00:00Z", session="s5")])  # same start as s4: by id
    first = store.sessions("a", limit=3)
    assert [s.id for s in first] == ["s5", "s4", "s3"]
    rest = store.sessions("a", limit=10, before=(first[-1].started_at, first[-1].id))
    assert [s.id for s in rest] == ["s2", "s1", "s0"]
    assert store.sessions("b", limit=10) == []


def test_trees_are_cycle_safe_and_tenant_scoped(store: EventStore) -> None:
    store.add_many(
        "a",
        [
            event("x1", session="self", parent="self"),
            event("y1", session="p", parent="q"),
            event("y2", "2026-01-01T10:00:01Z", session="q", parent="p"),
            event("r1", session="root"),
            event("c1", "2026-01-01T10:00:02Z", session="kid-b", parent="root"),
            event("c2", "2026-01-01T10:00:01Z", session="kid-a", parent="root"),
            event("g1", session="grandkid", parent="kid-b"),
        ],
    )
    started = time.monotonic()
    own = tree(store, "a", "self")
    assert own is not None and own[0].children == () and own[1] is False
    loop = tree(store, "a", "p")
    assert loop is not None
    assert [child.session.id for child in loop[0].children] == ["q"] and loop[0].children[0].children == ()
    assert time.monotonic() - started < 2
    found = tree(store, "a", "root")
    assert found is not None
    assert [(c.session.id, [g.session.id for g in c.children]) for c in found[0].children] == [
        ("kid-a", []),
        ("kid-b", ["grandkid"]),
    ]
    assert tree(store, "b", "root") is None


def test_a_tree_past_the_cap_says_it_was_cut(store: EventStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(contract, "MAX_TREE_SESSIONS", 3)
    store.add_many("a", [event("r", session="r"), *(event(f"k{i}", session=f"k{i}", parent="r") for i in range(5))])
    found = tree(store, "a", "r")
    assert found is not None
    assert len(found[0].children) == 2 and found[1] is True


def test_a_tree_larger_than_one_fetch_is_walked_to_the_same_tree(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL fetches a small tree whole in one statement and walks a larger one level by
    level: both give the tree the walk defines, loops and order included."""
    store.add_many(
        "a",
        [
            event("r", session="r", parent="q"),
            event("q", session="q", parent="r"),
            *(event(f"k{i}", f"2026-01-01T10:00:0{9 - i}Z", session=f"k{i}", parent="r") for i in range(4)),
            *(event(f"g{i}", session=f"g{i}", parent=f"k{i % 2}") for i in range(3)),
        ],
    )

    def shape(found: tuple[contract.Tree, bool] | None) -> object:
        assert found is not None
        return [(c.session.id, [g.session.id for g in c.children]) for c in found[0].children], found[1]

    whole = shape(tree(store, "a", "r"))
    assert whole == ([("q", []), ("k3", []), ("k2", []), ("k1", ["g1"]), ("k0", ["g0", "g2"])], False)
    monkeypatch.setattr(postgres_events, "TREE_PREFETCH", 3)
    assert shape(tree(store, "a", "r")) == whole
    monkeypatch.setattr(contract, "MAX_TREE_SESSIONS", 4)
    assert shape(tree(store, "a", "r")) == ([("q", []), ("k3", []), ("k2", [])], True)


def test_a_workflow_is_its_trace_as_a_forest_even_with_loops(store: EventStore) -> None:
    store.add_many(
        "a",
        [
            event("1", "2026-01-01T10:00:00Z", session="root", trace="T"),
            event("2", "2026-01-01T10:00:01Z", session="kid", parent="root", trace="T"),
            event("3", "2026-01-01T10:00:02Z", session="outside-parent", parent="elsewhere", trace="T"),
            event("4", "2026-01-01T10:00:03Z", session="me", parent="me", trace="T"),
            event("5", "2026-01-01T10:00:04Z", session="p", parent="q", trace="T"),
            event("6", "2026-01-01T10:00:05Z", session="q", parent="p", trace="T"),
            event("7", session="other", trace="U"),
        ],
    )
    found = workflow(store, "a", "T")
    assert found is not None
    roots, truncated = found
    shape = [(r.session.id, [c.session.id for c in r.children]) for r in roots]
    assert shape == [("root", ["kid"]), ("outside-parent", []), ("me", []), ("p", ["q"])]
    assert truncated is False
    assert workflow(store, "a", "nope") is None
    assert workflow(store, "b", "T") is None


def test_a_session_below_a_loop_hangs_from_the_loop_member_it_belongs_to(store: EventStore) -> None:
    store.add_many(
        "a",
        [
            event("1", "2026-01-01T09:00:00Z", session="c", parent="b", trace="L"),  # the earliest, below the loop
            event("2", "2026-01-01T10:00:00Z", session="a", parent="b", trace="L"),
            event("3", "2026-01-01T10:00:01Z", session="b", parent="a", trace="L"),
        ],
    )
    found = workflow(store, "a", "L")
    assert found is not None
    (root,) = found[0]
    assert (root.session.id, [(k.session.id, [g.session.id for g in k.children]) for k in root.children]) == (
        "a",
        [("b", ["c"])],
    )


def test_a_workflow_as_deep_as_its_cap_answers_and_says_it_was_cut(store: EventStore) -> None:
    """A chain of parents 600 long: no recursion limit is met, and the workflow stops at the tree's depth."""
    store.add_many(
        "a",
        [event(f"e{i}", session=f"s{i}", parent=None if i == 0 else f"s{i - 1}", trace="D") for i in range(600)],
    )
    found = workflow(store, "a", "D")
    assert found is not None
    (root,), truncated = found
    depth, node = 0, root
    while node.children:
        (node,) = node.children
        depth += 1
    assert depth == contract.MAX_TREE_DEPTH and truncated
    assert root.to_dict()["session_id"] == "s0"


def test_events_filter_by_type_range_and_position(store: EventStore) -> None:
    store.add_many(
        "a",
        [
            event("c", "2026-01-01T10:00:00Z", type="task.created"),
            event("t", "2026-01-01T10:00:01Z", type="tool.called"),
            event("r", "2026-01-01T10:00:02Z", type="tool.result"),
            event("o", "2026-01-01T10:00:03Z", session="s2", type="tool.called"),
        ],
    )
    assert ids(store.events("a", "s1", limit=10, types=["tool.called", "tool.result"])) == ["t", "r"]
    first = store.events("a", "s1", limit=1)
    assert ids(store.events("a", "s1", limit=10, after=first[0].position)) == ["t", "r"]
    start, end = (micros(event("x", t).instant) for t in ("2026-01-01T10:00:01Z", "2026-01-01T10:00:03Z"))
    assert ids(store.events("a", None, limit=10, start=start, end=end)) == ["t", "r"]
    assert ids(store.events("a", None, limit=10, start=start)) == ["t", "r", "o"]
    assert store.events("b", None, limit=10) == []


def test_text_matches_values_case_folded_not_field_names(store: EventStore) -> None:
    store.add_many(
        "a",
        [
            event(f"e{i}", f"2026-01-01T10:00:{i:02d}Z", payload={"note": "Ünïcode LOCK held" if i % 2 else "fine"})
            for i in range(12)
        ],
    )
    found = list(matching(store, "a", "s1", limit=100, after=None, types=(), text="ünïcode lock"))
    assert ids(found) == [f"e{i}" for i in range(1, 12, 2)]
    assert ids(list(matching(store, "a", "s1", limit=2, after=None, types=(), text="LOCK"))) == ["e1", "e3"]
    assert list(matching(store, "a", "s1", limit=10, after=None, types=(), text="note")) == []  # a field name


def test_stats_count_each_type_and_session_of_the_tenant_only(store: EventStore) -> None:
    store.add_many("a", [event("1", type="task.created"), event("2", type="tool.called"), event("3", session="s2")])
    store.add_many("a", [event("1", type="task.created")])  # a duplicate counts nothing
    store.add_many("b", [event("1", type="task.failed")])
    stats = store.stats("a")
    assert stats.by_type == {"task.created": 1, "tool.called": 1, "task.updated": 1}
    assert (stats.events, stats.sessions) == (3, 2)
    assert store.stats("c").events == 0


def test_open_events_refuses_memory() -> None:
    with pytest.raises(ConfigError, match="outlives"):
        open_events(":memory:")


def test_the_sqlite_file_keeps_events_across_a_reopen(tmp_path: Path) -> None:
    first = SQLiteEvents(SQLiteStore(tmp_path / "e.db"))
    first.add_many("a", [event("e1")])
    first.close()
    again = SQLiteEvents(SQLiteStore(tmp_path / "e.db"))
    assert again.add_many("a", [event("e1")]) == [False]
    again.close()


@pytest.mark.postgres
def test_row_level_security_hides_and_refuses_other_tenants_rows(pg_url: str) -> None:
    store = open_events(pg_url)
    store.add_many("a", [event("e1", type="task.created")])
    store.close()
    with psycopg.connect(pg_url) as db:  # the application role, not a superuser: policies apply
        db.execute("SELECT set_config('afteraction.tenant', 'b', false)")
        for table in ("afteraction_events", "afteraction_sessions", "afteraction_event_counts"):
            assert db.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,), table  # no WHERE: RLS alone
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            db.execute(
                "INSERT INTO afteraction_events (tenant, id, session_id, trace_id, type, at, data) "
                "VALUES ('a', 'x', 's', 't', 'task.created', 0, '{}')"
            )
        db.rollback()
        db.execute("SELECT set_config('afteraction.tenant', 'a', false)")
        assert db.execute("SELECT count(*) FROM afteraction_events").fetchone() == (1,)


@pytest.mark.postgres
def test_the_service_tables_policies_read_the_tenant_once_per_statement(pg_url: str) -> None:
    """m009: each policy on events, sessions and counts reads ``current_setting`` in a sub-select
    (evaluated once per statement), never once per row, and still allows what it allowed."""
    open_events(pg_url).close()
    with psycopg.connect(pg_url) as db:
        rows = db.execute(
            "SELECT tablename, policyname, coalesce(qual, '') || ' ' || coalesce(with_check, '') FROM pg_policies "
            "WHERE tablename IN ('afteraction_events', 'afteraction_sessions', 'afteraction_event_counts')"
        ).fetchall()
    assert len(rows) == 12
    for table, policy, expressions in rows:
        calls = expressions.count("current_setting(")
        assert calls and expressions.count("SELECT current_setting(") == calls, (table, policy, expressions)


def test_sqlite_trees_workflows_and_ranges_read_by_index_never_by_scan(tmp_path: Path) -> None:
    store = SQLiteEvents(SQLiteStore(tmp_path / "e.db"))
    store.add_many("a", [event(f"e{i}", session=f"s{i}", parent="s0") for i in range(50)])
    run: list[str] = []
    with store.store._reading() as db:
        db.set_trace_callback(run.append)  # the statements as run, parameters bound
    assert tree(store, "a", "s0") is not None
    assert workflow(store, "a", "t1") is not None
    assert store.events("a", None, limit=10, start=0, end=micros(event("x").instant)) == []
    with store.store._reading() as db:
        db.set_trace_callback(None)
        selects = [sql for sql in run if sql.lstrip().upper().startswith("SELECT")]
        assert len(selects) >= 4
        for sql in selects:
            plan = " | ".join(row[3] for row in db.execute(f"EXPLAIN QUERY PLAN {sql}"))
            # an index narrowed by more than the tenant: never every session or event of the tenant
            assert plan.startswith("SEARCH") and "(tenant=? AND " in plan and "SCAN" not in plan, (sql, plan)
    store.close()
