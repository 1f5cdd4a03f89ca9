"""The vector channel fails open to text, within its budget, and says why: every reason, each
with an embedder or store that really fails that way."""

from __future__ import annotations

import time
from typing import Any

import pytest

import afteraction as aa
from afteraction import searching
from afteraction.store import MemoryStore
from afteraction.vector_channel import REASONS, LazyEmbedder, VectorChannel
from tests.conformance.builders import NOW, SCOPE, experience
from tests.hybrid_doubles import (
    AsyncConcepts,
    BrokenVectors,
    Down,
    Letters,
    NaNs,
    Short,
    Sleepy,
    Switching,
    TextOnly,
    Three,
)

QUERY = "refund stuck in pending"


def open_memory(store: Any, embedder: Any, reported: list[str], **options: Any) -> aa.Memory:
    mem = aa.Memory(
        store, embedder=embedder, clock=lambda: NOW, on_error=lambda exc, where: reported.append(where), **options
    )
    mem.add(experience("a"))
    return mem


def search_twice(mem: aa.Memory) -> list[str]:
    """Search twice (the failure is reported once); the ids found, the same both times."""
    first = [hit.id for hit in mem.search(QUERY, scope=SCOPE)]
    assert [hit.id for hit in mem.search(QUERY, scope=SCOPE)] == first
    return first


def vector_reports(reported: list[str]) -> list[str]:
    return [where for where in reported if where.startswith("search.vector")]


def test_ok_when_the_channel_runs() -> None:
    reported: list[str] = []
    mem = open_memory(MemoryStore(), Letters(), reported)
    assert mem.wait_indexed(5)
    assert search_twice(mem) == ["a"]
    status = mem.channel_status
    assert (status.reason, status.model, status.candidates) == ("ok", "letters@1", 1)
    assert status.ok and reported == []


@pytest.mark.parametrize("store", [MemoryStore, TextOnly], ids=["embedder=None", "store-without-vectors"])
def test_not_configured_is_text_search_and_no_error(store: Any) -> None:
    reported: list[str] = []
    mem = open_memory(store(), None if store is MemoryStore else Letters(), reported)
    assert mem.wait_indexed(0)  # nothing to wait for
    assert search_twice(mem) == ["a"]
    assert mem.channel_status.reason == "not_configured"
    assert ("embedder=None" if store is MemoryStore else "keeps no vectors") in mem.channel_status.detail
    assert reported == []


@pytest.mark.parametrize(
    ("embedder", "reason", "detail"),
    [
        (Down(), "provider_unavailable", "ConnectionError: embedding provider refused"),
        (NaNs(), "provider_unavailable", "NaN"),
        (Short(), "dimension_mismatch", "has length 3, expected 4"),
    ],
    ids=["raises", "nan", "wrong-length"],
)
def test_a_failing_embedder_falls_back_to_text_and_says_why(embedder: Any, reason: str, detail: str) -> None:
    reported: list[str] = []
    mem = open_memory(MemoryStore(), embedder, reported)
    assert mem.wait_indexed(5)
    assert search_twice(mem) == ["a"]
    assert mem.channel_status.reason == reason and detail in mem.channel_status.detail
    assert vector_reports(reported) == [f"search.vector.{reason}"]
    assert "index" in reported  # the record could not be indexed either, and that was reported


def test_a_provider_that_switches_models_is_never_compared() -> None:
    reported: list[str] = []
    embedder = Switching()
    mem = open_memory(MemoryStore(), embedder, reported)
    assert mem.wait_indexed(5)
    embedder.switch()
    assert search_twice(mem) == ["a"]
    assert mem.channel_status.reason == "model_mismatch"
    assert "letters@2" in mem.channel_status.detail
    assert vector_reports(reported) == ["search.vector.model_mismatch"]


def test_stored_vectors_of_another_dimension_are_a_dimension_mismatch() -> None:
    store = MemoryStore()
    reported: list[str] = []
    assert open_memory(store, Letters(), reported).wait_indexed(5)  # 4-dimensional vectors stored
    mem = aa.Memory(store, embedder=Three(), clock=lambda: NOW, on_error=lambda e, w: reported.append(w))
    assert search_twice(mem) == ["a"]
    assert mem.channel_status.reason == "dimension_mismatch"
    assert "vector" in mem.channel_status.detail
    assert vector_reports(reported) == ["search.vector.dimension_mismatch"]


def test_a_failing_vector_search_falls_back_to_text() -> None:
    reported: list[str] = []
    mem = open_memory(BrokenVectors(), Letters(), reported)
    assert mem.wait_indexed(5)
    assert search_twice(mem) == ["a"]
    assert mem.channel_status.reason == "search_failed"
    assert "StoreError: the vector index is unreadable" in mem.channel_status.detail
    assert vector_reports(reported) == ["search.vector.search_failed"]


def test_a_slow_embedder_times_out_within_the_budget() -> None:
    reported: list[str] = []
    embedder = Sleepy(0.5, slow=False)
    mem = open_memory(MemoryStore(), embedder, reported, vector_budget=0.05)
    assert mem.wait_indexed(5)
    embedder.slow = True
    start = time.perf_counter()
    assert search_twice(mem) == ["a"]
    assert time.perf_counter() - start < 0.4  # two searches, each bounded by the 50 ms budget
    assert mem.channel_status.reason == "timeout"
    assert vector_reports(reported) == ["search.vector.timeout"]
    embedder.release()


def test_a_recovered_channel_reports_the_next_failure_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(searching, "REPORT_EVERY", 0.0)  # else once a minute at most (tests/test_searching.py)
    reported: list[str] = []
    embedder = Sleepy(0.3, slow=False)
    mem = open_memory(MemoryStore(), embedder, reported, vector_budget=0.05)
    assert mem.wait_indexed(5)
    embedder.slow = True
    mem.search(QUERY, scope=SCOPE)
    embedder.slow = False
    time.sleep(0.35)  # the late embedding finishes and frees its thread
    mem.search(QUERY, scope=SCOPE)
    assert mem.channel_status.ok
    embedder.slow = True
    mem.search(QUERY, scope=SCOPE)
    assert vector_reports(reported) == ["search.vector.timeout", "search.vector.timeout"]
    embedder.release()


def test_an_embedder_still_loading_is_waited_for_within_the_budget_only() -> None:
    import threading

    loaded = threading.Event()

    def slow_load() -> aa.embed.Checked:
        loaded.wait(5)
        return aa.embed.Checked(Letters())

    store = MemoryStore()
    store.put(experience("a"))
    channel = VectorChannel(store, LazyEmbedder(load=slow_load), budget=0.05)
    found, status = channel.start(SCOPE, QUERY, now=NOW, limit=5, min_confidence=0.5).result()
    # the job gives up waiting for the load at 80% of the budget (on a busy machine the budget may run out first)
    assert (found, status.model) == ([], None)
    assert status.reason == "timeout" or (status.reason, status.detail) == (
        "provider_unavailable",
        "the embedder is still loading",
    )
    time.sleep(0.1)
    assert channel.embedder.model_id is None
    loaded.set()
    assert channel.embedder.get(wait=5).model_id == "letters@1"
    found, status = channel.start(SCOPE, QUERY, now=NOW, limit=5, min_confidence=0.5).result()
    assert (found, status.reason, status.model) == ([], "ok", "letters@1")  # ran; "a" has no vector


def test_an_embedder_that_fails_to_load_is_unavailable() -> None:
    def broken_load() -> aa.embed.Checked:
        raise aa.ConfigError("the model file is missing")

    store = MemoryStore()
    channel = VectorChannel(store, LazyEmbedder(load=broken_load))
    found, status = channel.start(SCOPE, QUERY, now=NOW, limit=5, min_confidence=0.5).result()
    assert (found, status.reason) == ([], "provider_unavailable")
    assert "could not be loaded: the model file is missing" in status.detail


def test_the_reasons_are_a_fixed_set() -> None:
    assert REASONS == (
        "ok",
        "not_configured",
        "provider_unavailable",
        "model_mismatch",
        "dimension_mismatch",
        "search_failed",
        "timeout",
        "no_terms",
    )


@pytest.mark.parametrize("budget", [0, -1, 61, True, "0.5"])
def test_a_bad_budget_is_refused_at_set_up(budget: Any) -> None:
    with pytest.raises(aa.ConfigError, match="vector_budget"):
        aa.Memory(MemoryStore(), embedder=Letters(), vector_budget=budget)


def test_a_query_with_no_words_says_so_and_touches_no_channel() -> None:
    """Found by a user: after a blank query the status still told of the search before it."""
    reported: list[str] = []
    mem = open_memory(MemoryStore(), Down(), reported)
    assert mem.search(QUERY, scope=SCOPE) and mem.channel_status.reason == "provider_unavailable"
    for blank in ("", "   ", "the and of it", "hi, thanks!"):
        assert mem.search(blank, scope=SCOPE) == []
        assert mem.channel_status.reason == "no_terms"
    assert vector_reports(reported) == ["search.vector.provider_unavailable"]


class Strict(Letters):
    """An embedder that, like a real tokenizer, refuses text that is not Unicode (a lone surrogate)."""

    def embed(self, texts: Any) -> list[list[float]]:
        for text in texts:
            text.encode("utf-8")
        return super().embed(texts)


def test_a_lone_surrogate_in_a_query_is_not_blamed_on_the_embedder() -> None:
    """Found by a user: ``search("refund \\ud800 pending")`` was a ``provider_unavailable`` report."""
    reported: list[str] = []
    mem = open_memory(MemoryStore(), Strict(), reported)
    assert mem.wait_indexed(5)
    assert [hit.id for hit in mem.search("refund \udcff stuck in \ud800 pending", scope=SCOPE)] == ["a"]
    assert mem.channel_status.reason == "ok" and reported == []


def test_an_async_only_embedder_indexes_and_finds_by_meaning() -> None:
    """Found by a tester: an embedder with only a coroutine ``aembed`` was accepted, then every
    record failed to index and every search went by text ("async only: call aembed")."""
    reported: list[str] = []
    embedder = AsyncConcepts()
    mem = open_memory(MemoryStore(), embedder, reported)
    mem.add(experience("b", task="Deployment rollout never gets ready", lesson="Raise the probe deadline."))
    assert mem.wait_indexed(5) and mem.store.missing_vectors("concepts@1") == []
    query = "money back request frozen"  # no word shared with "Refund ticket is stuck in pending"
    assert aa.Memory(mem.store, embedder=None, clock=lambda: NOW).search(query, scope=SCOPE) == []
    assert [hit.id for hit in mem.search(query, scope=SCOPE)] == ["a"]
    assert mem.channel_status.ok and embedder.calls >= 2 and len(embedder.loops) == 1 and reported == []


def test_an_async_only_embedder_that_hangs_is_bounded_by_the_budget() -> None:
    reported: list[str] = []
    embedder = AsyncConcepts()
    mem = open_memory(MemoryStore(), embedder, reported, vector_budget=0.1)
    assert mem.wait_indexed(5)
    embedder.hang = True
    start = time.perf_counter()
    assert search_twice(mem) == ["a"]
    assert time.perf_counter() - start < 2 * 0.1 + 0.5
    assert mem.channel_status.reason == "timeout"
    assert vector_reports(reported) == ["search.vector.timeout"]
    deadline = time.monotonic() + 2
    while embedder.cancelled < 2 and time.monotonic() < deadline:  # each coroutine is cancelled: no thread held
        time.sleep(0.01)
    assert embedder.cancelled == 2
