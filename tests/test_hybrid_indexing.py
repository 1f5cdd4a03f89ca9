"""Background indexing: vectors made off the caller's thread after a record commits, the
revision guard under a real race, every failure kind reported, the backfill, a bounded close."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import afteraction as aa
from afteraction.embed import Checked
from afteraction.embed.minilm import REQUANTIZED_MODEL_ID
from afteraction.indexing import Indexer
from afteraction.store import MemoryStore, SQLiteStore
from afteraction.store.base import VectorStore
from afteraction.vector_channel import LazyEmbedder
from tests.conformance.builders import NOW, SCOPE, experience
from tests.embed.conftest import bundled_minilm
from tests.hybrid_doubles import Down, Gate, Letters, NaNs, Poisoned, Short, Sleepy
from tests.store.test_sqlite_unreadable import damage


def memory(store: MemoryStore, embedder: Any, reported: list[str] | None = None) -> aa.Memory:
    sink = reported if reported is not None else []
    return aa.Memory(store, embedder=embedder, clock=lambda: NOW, on_error=lambda e, w: sink.append(f"{w}: {e}"))


def indexer(store: MemoryStore, embedder: Any, reported: list[str], **options: Any) -> Indexer:
    return Indexer(store, LazyEmbedder(Checked(embedder)), report=lambda e, w: reported.append(f"{w}: {e}"), **options)


def test_records_are_embedded_off_the_callers_thread_after_they_commit() -> None:
    store, embedder = MemoryStore(), Letters()
    mem = memory(store, embedder)
    mem.add(experience("a"))
    mem.add_many([experience("b"), experience("c")])
    assert mem.wait_indexed(5)
    assert store.missing_vectors("letters@1") == []
    assert embedder.threads and threading.current_thread().name not in embedder.threads


def test_a_finished_run_and_an_outcome_are_indexed_at_their_revision() -> None:
    store = MemoryStore()
    mem = memory(store, Letters())
    with mem.run("Refund ticket 42 is stuck in pending", scope=SCOPE) as run:
        run.tool("run_refund_check", result="issued")
        run.check("refund-issued", passed=True)
    assert run.experience is not None and mem.wait_indexed(5)
    updated = mem.record_outcome(run.experience.id, scope=SCOPE, success=True)
    assert updated.revision == 2
    assert mem.wait_indexed(5) and store.missing_vectors("letters@1") == []


def test_a_learned_wording_is_embedded_with_the_lesson() -> None:
    class Heard(Letters):
        def __init__(self) -> None:
            super().__init__()
            self.texts: list[str] = []

        def embed(self, texts: Any) -> list[list[float]]:
            self.texts.extend(texts)
            return super().embed(texts)

    store, embedder = MemoryStore(), Heard()
    mem = memory(store, embedder)
    mem.add(experience("a", task="Refund ticket 42 is stuck in pending"))
    assert mem.wait_indexed(5)
    mem.record_outcome("a", scope=SCOPE, success=True, key="run:r-2", task="customer money never came back")
    assert mem.wait_indexed(5) and store.missing_vectors("letters@1") == []
    # (the first text may be embedded twice: by the add and by the backfill that opening starts)
    assert embedder.texts[-1] == "Refund ticket 42 is stuck in pending\ncustomer money never came back"
    assert set(embedder.texts[:-1]) == {"Refund ticket 42 is stuck in pending"}


def test_an_outcome_that_changes_no_text_is_not_embedded_again() -> None:
    store, embedder = MemoryStore(), Letters()
    mem = memory(store, embedder)
    mem.add(experience("a", task="Refund ticket 42 is stuck in pending"))
    assert mem.wait_indexed(5)
    calls = embedder.calls
    for n in range(3):
        mem.record_outcome("a", scope=SCOPE, success=True, key=f"run:{n}")
    assert mem.wait_indexed(5) and store.missing_vectors("letters@1") == []  # at revision 4, from memory
    assert embedder.calls == calls
    mem.record_outcome("a", scope=SCOPE, success=True, key="run:9", task="customer money never came back")
    assert mem.wait_indexed(5) and store.missing_vectors("letters@1") == []
    assert embedder.calls == calls + 1  # a new wording: a new text


def test_a_record_changed_while_it_was_embedded_keeps_no_stale_vector() -> None:
    """The race for real: the worker is inside embed() when another writer updates the record."""
    store, embedder = MemoryStore(), Gate("Refund")
    mem = memory(store, embedder)
    mem.add(experience("a"))
    assert embedder.entered.wait(5)
    first = store.get(SCOPE, "a")
    assert first is not None
    store.update(replace(first, task="Refund ticket stuck again"), expected_revision=1)  # not through mem
    embedder.release.set()
    assert mem.wait_indexed(5)
    assert store.missing_vectors("letters@1") == []  # the vector is of revision 2
    assert embedder.seen[-1] == ["Refund ticket stuck again"]  # re-queued at its new revision
    found = store.search_vector(SCOPE, "letters@1", [1.0, 0.0, 0.0, 0.0], now=NOW)
    assert [(c.experience.id, c.experience.revision) for c in found] == [("a", 2)]


def test_each_failure_is_reported_and_the_record_stays_searchable_by_text() -> None:
    for embedder, fault in ((Down(), "ConnectionError"), (NaNs(), "NaN"), (Short(), "has length 3")):
        reported: list[str] = []
        store = MemoryStore()
        mem = memory(store, embedder, reported)
        mem.add(experience("a"))
        assert mem.wait_indexed(5)
        assert [w for w in reported if w.startswith("index: ")] and fault in reported[0], (embedder, reported)
        assert [e.id for e in store.missing_vectors(embedder.model_id)] == ["a"]
        assert [h.id for h in mem.search("refund stuck pending", scope=SCOPE)] == ["a"]


def test_an_embedder_past_its_timeout_is_reported_and_left_behind() -> None:
    reported: list[str] = []
    store = MemoryStore()
    store.put(experience("a"))
    worker = indexer(store, Sleepy(1.0), reported, embed_timeout=0.1)
    start = time.perf_counter()
    assert worker.wait(5)
    assert time.perf_counter() - start < 0.9
    assert worker.failed == 1 and "took over 0.1 s" in reported[0]


def test_one_bad_record_does_not_cost_its_batch() -> None:
    reported: list[str] = []
    store = MemoryStore()
    records = [experience("a"), experience("b", task="poison pill task"), experience("c")]
    store.put_many(records)
    worker = indexer(store, Poisoned(), reported)
    worker.enqueue(records)
    assert worker.wait(5)
    assert (worker.indexed, worker.failed) == (2, 1)
    assert [e.id for e in store.missing_vectors("letters@1")] == ["b"]


def test_records_written_before_are_backfilled_and_an_overflow_is_found_again() -> None:
    store = MemoryStore()
    store.put_many([experience(f"old-{i}") for i in range(7)])
    reported: list[str] = []
    worker = indexer(store, Letters(), reported, batch_size=2, max_pending=2)
    fresh = [experience(f"new-{i}") for i in range(5)]
    store.put_many(fresh)
    worker.enqueue(fresh)  # 3 of these overflow the queue
    assert worker.wait(5)
    assert store.missing_vectors("letters@1") == [] and worker.indexed == 12 and reported == []


def test_close_drains_within_its_bound() -> None:
    store, embedder = MemoryStore(), Sleepy(0.02)
    mem = memory(store, embedder)
    mem.add_many([experience(f"r{i}") for i in range(3)])
    mem.close(timeout=5)
    assert store.missing_vectors("letters@1") == []
    hung = memory(MemoryStore(), Sleepy(30))
    hung.add(experience("a"))
    start = time.perf_counter()
    hung.close(timeout=0.2)
    assert time.perf_counter() - start < 1.0


def test_the_async_face_waits_for_indexing_too() -> None:
    import asyncio

    store = MemoryStore()
    mem = memory(store, Letters())
    mem.add(experience("a"))
    assert asyncio.run(mem.aio.wait_indexed(5))
    assert store.missing_vectors("letters@1") == []
    mem.search("refund stuck pending", scope=SCOPE)
    assert mem.aio.channel_status.ok


def test_a_provider_down_is_reported_once_per_batch_not_once_per_record() -> None:
    reported: list[str] = []
    store = MemoryStore()
    records = [experience(f"r{i}") for i in range(5)]
    store.put_many(records)
    worker = indexer(store, Down(), reported, batch_size=5)
    assert worker.wait(5)
    assert worker.failed == 5 and len(reported) == 1
    assert "refused the connection (and 4 more records of that batch)" in reported[0]


def test_background_indexing_with_the_bundled_model_uses_every_core_and_its_variants_id() -> None:
    """The real default: the re-quantized MiniLM, a batch's model calls on two threads."""
    minilm = bundled_minilm(parallel=2, cache_size=0)
    assert minilm.model_id == REQUANTIZED_MODEL_ID
    store = MemoryStore()
    mem = memory(store, minilm)
    topics = ["refund stuck in pending", "deploy timed out", "TLS certificate expired", "DNS lookup fails"]
    mem.add_many([experience(f"r{i}", task=f"{topics[i % 4]} on host {i}") for i in range(24)])
    assert mem.wait_indexed(120)
    assert store.missing_vectors(REQUANTIZED_MODEL_ID) == [] and len(store.missing_vectors("other")) == 24
    assert minilm._pool is not None  # the batch ran on a helper thread too
    hits = mem.search("the deployment was timing out", scope=SCOPE, k=3)
    assert hits and "deploy timed out" in hits[0].experience.task


def test_vectors_of_a_model_changed_while_memory_is_open_are_not_kept_under_the_old_id() -> None:
    """An embedder whose model changes under a memory (a hot reload): search already refuses to compare
    (model_mismatch); the indexer must not store the new model's vectors under the id it was opened with."""
    store, embedder, reported = MemoryStore(), Letters("m@1"), []
    mem = memory(store, embedder, reported)
    mem.add_many([experience(f"before-{i}") for i in range(3)])
    assert mem.wait_indexed(5)
    embedder.model_id = "m@2"
    mem.add_many([experience(f"after-{i}") for i in range(3)])
    mem.wait_indexed(5)
    (info,) = store.vector_models()
    assert (info.model, info.vectors) == ("m@1", 3)
    assert any("model is now 'm@2'" in line for line in reported)


def test_a_batch_embedded_while_memory_closes_is_dropped_silently_and_left_to_the_backfill(tmp_path: Any) -> None:
    """The store is closed under the batch: its vectors are not stored, no failure is reported
    (the next backfill finds the record), and wait_indexed says the work was left undone."""
    reported: list[str] = []
    embedder = Gate("Refund")
    path = tmp_path / "memory.db"
    mem = aa.Memory.open(path, embedder=embedder, clock=lambda: NOW, on_error=lambda e, w: reported.append(f"{w}: {e}"))
    assert mem.wait_indexed(5)  # the backfill pass at open is done
    mem.add(experience("a"))
    assert embedder.entered.wait(5)
    mem.close(timeout=0.1)
    embedder.release.set()
    assert mem.wait_indexed(5) is False
    assert reported == []
    reopened = aa.Memory.open(path, embedder=Letters(), clock=lambda: NOW)
    assert isinstance(reopened.store, VectorStore)
    assert reopened.wait_indexed(5) and reopened.store.missing_vectors("letters@1") == []  # the backfill
    reopened.close()


def test_wait_indexed_after_close_is_true_only_when_nothing_was_left() -> None:
    store = MemoryStore()
    drained = memory(store, Letters())
    drained.add_many([experience("a"), experience("b")])
    drained.close(timeout=5)
    assert drained.wait_indexed(0) is True
    embedder = Gate("Refund")
    left = memory(MemoryStore(), embedder)
    left.add_many([experience(f"r{i}") for i in range(40)])  # more than one batch
    assert embedder.entered.wait(5)
    left.close(timeout=0.1)
    start = time.perf_counter()
    assert left.wait_indexed(0.5) is False
    assert time.perf_counter() - start < 0.4  # known at once, not waited for
    embedder.release.set()
    assert left.wait_indexed(5) is False


def test_wait_indexed_after_close_does_not_wait_for_a_batch_that_will_be_dropped() -> None:
    """Found by a review: with one batch in flight and nothing else left, wait_indexed after close waited for
    the batch to finish embedding (up to the 60 s embed timeout), although its vectors were to be dropped."""
    embedder = Gate("Refund")
    mem = memory(MemoryStore(), embedder)
    mem.add(experience("a"))
    assert embedder.entered.wait(5)
    mem.close(timeout=0.1)
    releaser = threading.Timer(5.0, embedder.release.set)  # the batch would end only then
    releaser.start()
    try:
        start = time.perf_counter()
        assert mem.wait_indexed(10) is False
        assert time.perf_counter() - start < 2.5  # decided at once, not after the batch
    finally:
        embedder.release.set()
        releaser.cancel()


def test_a_record_stored_unreadable_does_not_stop_the_backfill_of_the_others(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store = SQLiteStore(path)
    store.put_many([experience(f"old-{i}") for i in range(7)])
    damage(path, "old-2")  # say a hand edit: the store cannot read it, the six others are fine
    reported: list[str] = []
    worker = Indexer(store, LazyEmbedder(Checked(Letters())), report=lambda e, w: reported.append(f"{w}: {e}"))
    assert worker.wait(5)  # the pass ends (before: the page failed, and was tried again for ever)
    assert store.missing_vectors("letters@1") == [] and worker.indexed == 6 and reported == []
    worker.close()
    store.close()
