"""A PostgreSQL ``update`` that waited for another writer's row lock reports the row as that
writer left it: the revision it committed (ConflictError), or NotFoundError when it deleted the
row. The race is made deterministic by holding the row lock from another connection."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace

import psycopg
import pytest

from afteraction.errors import AfterActionError, ConflictError, NotFoundError
from afteraction.store.postgres import PostgresStore
from afteraction.store.postgres_schema import TABLE
from tests.conformance.builders import SCOPE, experience

pytestmark = pytest.mark.postgres

LESSON = experience("raced")


@pytest.fixture
def store(pg_url: str) -> Iterator[PostgresStore]:
    opened = PostgresStore(pg_url)
    opened.put(LESSON)
    yield opened
    opened.close()


def racing(url: str, store: PostgresStore, winner: str) -> AfterActionError | None:
    """What ``store.update(…, expected_revision=1)`` raises when it starts while another
    transaction that ran ``winner`` (on the row) holds the row's lock, and that one commits."""
    raised: list[AfterActionError | None] = []

    def lose() -> None:
        try:
            store.update(replace(LESSON, summary="mine"), expected_revision=1)
            raised.append(None)
        except AfterActionError as exc:
            raised.append(exc)

    with psycopg.connect(url) as holder:
        holder.execute("SELECT set_config('afteraction.tenant', %s, true)", (SCOPE.tenant,))
        holder.execute(winner, (SCOPE.tenant, LESSON.id))
        loser = threading.Thread(target=lose)
        loser.start()
        wait_until(lambda: waiting_for_a_lock(url), loser)
        holder.commit()
    loser.join(10)
    return raised[0]


def waiting_for_a_lock(url: str) -> bool:
    with psycopg.connect(url, autocommit=True) as db:
        row = db.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'").fetchone()
    return bool(row and row[0])


def wait_until(condition: Callable[[], bool], thread: threading.Thread) -> None:
    deadline = time.monotonic() + 10
    while not condition():
        assert thread.is_alive() and time.monotonic() < deadline, "the update never waited for the row lock"
        time.sleep(0.01)


def test_a_lost_race_names_the_revision_the_winner_committed(store: PostgresStore, pg_url: str) -> None:
    winner = f"UPDATE {TABLE} SET revision = 2 WHERE tenant = %s AND id = %s"
    error = racing(pg_url, store, winner)
    assert isinstance(error, ConflictError) and "is at revision 2, not 1" in str(error)
    assert store.get(SCOPE, LESSON.id) == LESSON  # the loser wrote nothing (the row's data is the winner's)


def test_a_row_deleted_while_the_update_waited_is_not_found(store: PostgresStore, pg_url: str) -> None:
    error = racing(pg_url, store, f"DELETE FROM {TABLE} WHERE tenant = %s AND id = %s")
    assert isinstance(error, NotFoundError)
    assert store.get(SCOPE, LESSON.id) is None
