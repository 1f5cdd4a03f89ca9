"""index_experiences: records to stored vectors, with the revision guard."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

import afteraction as aa
from afteraction.core.text import embedding_text
from afteraction.embed import Checked
from afteraction.errors import EmbedderError
from afteraction.indexing import index_experiences
from afteraction.store import MemoryStore
from tests.conformance.builders import NOW, SCOPE, experience


class LetterCounts:
    """A deterministic embedder: how often each of a few letters occurs in the text."""

    model_id = "letter-counts@1"
    dimension = 4

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.seen.extend(texts)
        return [[1.0 + text.count(letter) for letter in "aeio"] for text in texts]


def test_vectors_are_made_from_the_embedding_text_and_stored_at_the_revision() -> None:
    store = MemoryStore()
    records = [experience("a"), experience("b", task="Invoice export times out")]
    store.put_many(records)
    inner = LetterCounts()
    assert index_experiences(store, Checked(inner), records) == 2
    assert inner.seen == [embedding_text(r) for r in records]
    assert store.missing_vectors(inner.model_id) == []
    hits = store.search_vector(SCOPE, inner.model_id, [1.0, 0.0, 0.0, 0.0], now=NOW)
    assert sorted(h.experience.id for h in hits) == ["a", "b"]


def test_a_record_changed_meanwhile_keeps_no_stale_vector() -> None:
    store = MemoryStore()
    read = experience("a")
    store.put(read)
    store.update(replace(read, lesson="Changed while we embedded."), expected_revision=1)
    assert index_experiences(store, Checked(LetterCounts()), [read]) == 0
    assert [e.id for e in store.missing_vectors(LetterCounts.model_id)] == ["a"]


def test_a_failing_embedder_stores_nothing() -> None:
    class Broken(LetterCounts):
        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            return [[float("nan")] * 4 for _ in texts]

    store = MemoryStore()
    store.put(experience("a"))
    with pytest.raises(EmbedderError, match="NaN"):
        index_experiences(store, Checked(Broken()), [experience("a")])
    assert [e.id for e in store.missing_vectors(Broken.model_id)] == ["a"]


def test_a_store_that_keeps_failing_is_reported_once_and_not_tried_in_a_tight_loop(tmp_path: Path) -> None:
    """With the store's file replaced under it, the background worker retried at once, forever: 114,899
    reports to on_error in 2 s, and a core kept busy."""
    path = tmp_path / "memory.db"
    first = aa.Memory.open(path, embedder=None)
    with first.run("Refund ticket 42 is stuck", scope=SCOPE) as run:
        run.check("refund-issued", passed=True)
    first.close()
    released = threading.Event()

    class Waiting:
        model_id, dimension = "waiting", 4

        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            released.wait(5)
            return [[1.0, 0.0, 0.0, 0.0] for _ in texts]

    heard: list[str] = []
    mem = aa.Memory.open(path, embedder=Waiting(), on_error=lambda exc, where: heard.append(where))
    time.sleep(0.3)  # the worker is embedding the backfill's first batch
    os.replace(path, tmp_path / "moved.db")
    released.set()
    time.sleep(1.0)
    assert heard == ["index"]
    mem.close()


def test_a_store_opened_by_a_relative_path_keeps_its_file_when_the_process_changes_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    heard: list[str] = []
    mem = aa.Memory.open(".afteraction/memory.db", embedder=None, on_error=lambda exc, where: heard.append(where))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    with mem.run("Refund ticket 42 is stuck", scope=SCOPE) as run:
        run.check("refund-issued", passed=True)
    assert heard == [] and len(mem.search("refund stuck", scope=SCOPE)) == 1
    assert not (elsewhere / ".afteraction").exists()
    mem.close()
