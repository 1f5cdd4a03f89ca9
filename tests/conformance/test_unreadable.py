"""A record stored unreadable (its JSON damaged by a hand, a bug or a newer version), on every
backend that stores records as text: ``missing_vectors`` passes over it (logged once, listed
to a caller that asks) and reads on past it, never raises, so every other record still gets
its vector from the background indexer and from ``reindex``. (The memory store holds records
as objects: nothing there can be unreadable.)"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path

import psycopg
import pytest

from afteraction.embed import Checked
from afteraction.memory import Memory
from afteraction.reindex import reindex
from afteraction.store import SQLiteStore
from afteraction.store.base import VectorStore
from afteraction.store.postgres import PostgresStore
from afteraction.store.postgres_schema import TABLE
from tests.conformance.builders import experience, scoped
from tests.conformance.test_store import BACKENDS, SCOPE
from tests.test_reindex import Letters

MODEL = "letters@1"


def damage_sqlite(path: Path, tenant: str, *ids: str) -> None:
    with closing(sqlite3.connect(path)) as db, db:
        db.executemany(
            "UPDATE experiences SET data = '{broken' WHERE tenant = ? AND id = ?", [(tenant, i) for i in ids]
        )


def damage_postgres(store: PostgresStore, tenant: str, *ids: str) -> None:
    with psycopg.connect(store.url, autocommit=True) as db, db.transaction():
        db.execute("SELECT set_config('afteraction.tenant', %s, true)", (tenant,))
        db.execute(f"UPDATE {TABLE} SET data = '{{broken' WHERE tenant = %s AND id = ANY(%s)", (tenant, list(ids)))


@pytest.fixture(params=[pytest.param("postgres", marks=pytest.mark.postgres), "sqlite"])
def stored(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[VectorStore, Callable[..., None]]]:
    """A store and a function that damages records of it: ``damage(tenant, *ids)``."""
    store = BACKENDS[request.param](request, tmp_path)
    assert isinstance(store, VectorStore)
    if isinstance(store, SQLiteStore):
        yield store, lambda tenant, *ids: damage_sqlite(tmp_path / "store.db", tenant, *ids)
    else:
        assert isinstance(store, PostgresStore)
        yield store, lambda tenant, *ids: damage_postgres(store, tenant, *ids)
    store.close()  # type: ignore[attr-defined]


def pages(
    store: VectorStore, limit: int, passed: list[tuple[str, str, str]], tenant: str | None = None
) -> list[list[str]]:
    found, after = [], None
    while page := store.missing_vectors(MODEL, limit=limit, tenant=tenant, after=after, unreadable=passed):
        found.append([e.id for e in page])
        after = (page[-1].scope.tenant, page[-1].id)
    return found


def test_missing_vectors_reads_on_past_unreadable_records(
    stored: tuple[VectorStore, Callable[..., None]], caplog: pytest.LogCaptureFixture
) -> None:
    store, damage = stored
    store.put_many([experience(f"m{i}") for i in range(8)])  # type: ignore[attr-defined]
    damage("acme", "m2", "m3", "m7")  # two in a row across a page's end, and the last one
    passed: list[tuple[str, str, str]] = []
    with caplog.at_level(logging.WARNING, logger="afteraction.store"):
        assert pages(store, 2, passed) == [["m0", "m1"], ["m4", "m5"], ["m6"]]
        assert pages(store, 2, []) == [["m0", "m1"], ["m4", "m5"], ["m6"]]  # a second pass: the same
        assert [e.id for e in store.missing_vectors(MODEL, limit=3)] == ["m0", "m1", "m4"]  # no list: not raised
    # m7 is listed twice: a page that ended on m6 reads past it again (reindex counts it once)
    assert sorted((tenant, id) for tenant, id, _ in passed) == [("acme", id) for id in ("m2", "m3", "m7", "m7")]
    assert all("cannot be read" in why for _, _, why in passed)
    said = sorted(r.getMessage().split("'")[1] for r in caplog.records if "passed over" in r.getMessage())
    assert said == ["m2", "m3", "m7"]  # once each, however often read


def test_a_tenants_pages_pass_over_its_unreadable_records_only(stored: tuple[VectorStore, Callable[..., None]]) -> None:
    store, damage = stored
    globex = scoped(SCOPE, tenant="globex")
    store.put_many([experience(f"m{i}") for i in range(3)] + [experience(f"m{i}", scope=globex) for i in range(3)])  # type: ignore[attr-defined]
    damage("globex", "m0")
    passed: list[tuple[str, str, str]] = []
    assert pages(store, 2, passed, tenant="globex") == [["m1", "m2"]]
    assert pages(store, 2, passed, tenant="acme") == [["m0", "m1"], ["m2"]]
    assert [(tenant, id) for tenant, id, _ in passed] == [("globex", "m0")]


def test_reindex_and_the_background_indexer_embed_every_readable_record(
    stored: tuple[VectorStore, Callable[..., None]],
) -> None:
    store, damage = stored
    store.put_many([experience(f"e{i}", task=f"Refund ticket {i} is stuck") for i in range(10)])  # type: ignore[attr-defined]
    damage("acme", "e3", "e9")
    report = reindex(store, Checked(Letters()), batch=3)
    assert (report.embedded, report.unreadable) == (8, 2)
    assert [f.first for f in report.failed] == [("acme", "e3"), ("acme", "e9")]
    assert store.missing_vectors(MODEL) == []
    store.drop_vectors(MODEL)
    memory = Memory(store, embedder=Letters())  # type: ignore[arg-type]
    try:
        assert memory.wait_indexed(10)
        assert store.missing_vectors(MODEL) == []  # the eight readable records have their vectors again
        assert len(store.vector_models()) == 1 and store.vector_models()[0].vectors == 8
    finally:
        memory.close()
