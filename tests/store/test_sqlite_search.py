"""The SQLite store's narrowed text search of a large table: exact scores, the best rows first, rare terms
first when common ones are heavy, term counts that follow every connection's writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from afteraction.model import Status
from afteraction.store import SQLiteStore, sqlite_terms
from afteraction.store.sqlite import search_stems
from tests.conformance.builders import NOW, SCOPE, experience, scoped

# the narrowed search of a large table


def test_a_narrowed_search_scores_exactly_and_fills_from_common_terms(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SQLiteStore(tmp_path / "store.db")
    common = [
        experience(f"common-{i:02d}", task="Refund is late", lesson=f"Retry the refund {'again ' * (i % 4)}later.")
        for i in range(30)
    ]
    rare = [
        experience(f"rare-{i}", task="Payment call duplicated", lesson=f"Idempotency key {'reused ' * i}on retry.")
        for i in range(1, 4)
    ]
    store.put_many([*common, *rare])
    store.put(
        experience(
            "rare-hidden", task="Payment call duplicated", lesson="Idempotency key reused.", status=Status.QUARANTINED
        )
    )
    terms = ["idempotency", "retry", "refund"]

    exact = store.search_text(SCOPE, terms, now=NOW)
    exact_top = store.search_text(SCOPE, terms, now=NOW, limit=2)
    monkeypatch.setattr(sqlite_terms, "BUDGET", (1, 1))
    monkeypatch.setattr(sqlite_terms, "PER_RESULT", 0)
    with store._connections.reading() as held:
        assert store._split(held, search_stems(terms), 50) == (["idempot"], ["refund", "retri"])

    narrowed = store.search_text(SCOPE, terms, now=NOW)  # three rare rows, then the common ones
    assert [c.experience.id for c in narrowed] == [c.experience.id for c in exact]
    assert [c.text_score for c in narrowed] == pytest.approx([c.text_score for c in exact])
    assert len(narrowed) == 33 and "rare-hidden" not in {c.experience.id for c in narrowed}
    top = store.search_text(SCOPE, terms, now=NOW, limit=2)
    assert [c.experience.id for c in top] == [c.experience.id for c in exact_top]
    assert store.search_text(SCOPE, ["_"], now=NOW) == []  # the anchor token cannot be searched
    store.close()


def test_a_search_over_many_rows_takes_the_best_scored_first_and_gives_the_same_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The capped search (the best ``CAPPED`` rows of the whole index, then the scope) gives
    exactly the rows and scores of the full one, also when another scope holds the best-scored
    rows and the capped pass must fall back."""
    store = SQLiteStore(tmp_path / "store.db")
    other = scoped(SCOPE, project="other")
    store.put_many(
        [
            experience(f"mine-{i:02d}", task="Refund is late", lesson=f"Retry the refund {'again ' * (i % 5)}later.")
            for i in range(40)
        ]
        + [
            experience(f"theirs-{i:02d}", task="Refund refund refund", lesson="Refund refund.", scope=other)
            for i in range(40)
        ]
    )
    terms = ["refund"]
    exact = store.search_text(SCOPE, terms, now=NOW, limit=10)
    exact_all = store.search_text(SCOPE, terms, now=NOW)
    monkeypatch.setattr(sqlite_terms, "CAPPED", 12)
    capped = store.search_text(SCOPE, terms, now=NOW, limit=10)  # the best 12 are all theirs: falls back
    assert [c.experience.id for c in capped] == [c.experience.id for c in exact]
    assert [c.text_score for c in capped] == pytest.approx([c.text_score for c in exact])
    assert [c.experience.id for c in store.search_text(SCOPE, terms, now=NOW)] == [c.experience.id for c in exact_all]
    assert all(c.experience.scope == SCOPE for c in capped)
    monkeypatch.setattr(sqlite_terms, "CAPPED", 60)  # the best 60 hold 20 of mine: enough for 10
    assert [c.experience.id for c in store.search_text(SCOPE, terms, now=NOW, limit=10)] == [
        c.experience.id for c in exact
    ]
    store.close()


def test_a_heavy_search_scores_on_its_rare_terms_and_fills_from_the_common_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ``HEAVY`` postings the rare terms alone choose and order the rows; rows holding only
    common terms come after them when the rare ones give too few."""
    store = SQLiteStore(tmp_path / "store.db")
    store.put_many(
        [
            experience(f"common-{i:02d}", task="Refund is late", lesson=f"Retry the refund {'again ' * (i % 4)}later.")
            for i in range(30)
        ]
        + [
            experience(f"rare-{i}", task="Payment call duplicated", lesson=f"Idempotency key {'reused ' * i}on retry.")
            for i in range(1, 4)
        ]
    )
    monkeypatch.setattr(sqlite_terms, "BUDGET", (1, 1))
    monkeypatch.setattr(sqlite_terms, "PER_RESULT", 0)
    monkeypatch.setattr(sqlite_terms, "HEAVY", 0)
    terms = ["idempotency", "retry", "refund"]
    found = store.search_text(SCOPE, terms, now=NOW)
    rare_only = store.search_text(SCOPE, ["idempotency"], now=NOW)
    assert [c.experience.id for c in found[:3]] == [c.experience.id for c in rare_only]
    assert [c.text_score for c in found[:3]] == pytest.approx([c.text_score for c in rare_only])
    assert len(found) == 33 and {c.experience.id for c in found[3:]} == {f"common-{i:02d}" for i in range(30)}
    assert len(store.search_text(SCOPE, terms, now=NOW, limit=2)) == 2
    store.close()


def test_the_term_counts_that_narrow_a_search_follow_writes_of_any_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_terms, "BUDGET", (1, 1))
    monkeypatch.setattr(sqlite_terms, "PER_RESULT", 0)
    path = tmp_path / "store.db"
    reader, writer = SQLiteStore(path), SQLiteStore(path)
    writer.put_many([experience(f"r{i}", task="Refund retry loop", lesson="Back off.") for i in range(4)])
    writer.put(experience("lock", task="Refund lock held", lesson="Wait for the lock."))
    terms = ["refund", "lock"]
    with reader._connections.reading() as held:  # one read connection of ``reader``, and its counts
        reader.search_text(SCOPE, terms, now=NOW)
        assert reader._split(held, search_stems(terms), 50) == (["lock"], ["refund"])
        writer.put_many([experience(f"l{i}", task="Lock contention", lesson="Lock wait.") for i in range(9)])
        assert reader._split(held, search_stems(terms), 50) == (["refund"], ["lock"])  # another store wrote
        reader.put_many([experience(f"f{i}", task="Refund failed", lesson="Refund again.") for i in range(9)])
        assert reader._split(held, search_stems(terms), 50) == (["lock"], ["refund"])  # and its own writer
    found = {c.experience.id for c in reader.search_text(SCOPE, terms, now=NOW, limit=100)}
    assert found == {"lock", *(f"r{i}" for i in range(4)), *(f"l{i}" for i in range(9)), *(f"f{i}" for i in range(9))}
    reader.close()
    writer.close()
