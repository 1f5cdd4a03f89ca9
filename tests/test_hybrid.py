"""Hybrid search end to end with the bundled embedder: a paraphrase is found, an unrelated
request gets nothing, a query of any length is answered, and the default is what it says."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import afteraction as aa
from afteraction.embed.adapter import ADAPTER_NAME, Adapted
from afteraction.embed.base import Checked
from afteraction.memory import MAX_QUERY_CHARS
from afteraction.store import MemoryStore
from afteraction.testing import make_experience
from afteraction.vector_channel import embed_extra_installed, warm
from tests.conformance.builders import NOW, SCOPE

pytestmark = pytest.mark.skipif(not embed_extra_installed(), reason="needs the embed extra")

LESSONS = [
    ("Package feed returns 401 Unauthorized after the access token expired", "HTTP 401 from the npm feed"),
    ("Deployment times out waiting for the readiness probe", "deadline exceeded: rollout not ready"),
    ("TLS certificate for the public API expired", "x509: certificate has expired"),
]


@pytest.fixture(scope="module")
def mem() -> Iterator[aa.Memory]:
    memory = aa.Memory(MemoryStore(), clock=lambda: NOW)
    memory.add_many(
        make_experience(task, scope=SCOPE, scenario=aa.Scenario(task=task, symptoms=(symptom,)))
        for task, symptom in LESSONS
    )
    assert memory.wait_indexed(120)
    yield memory
    memory.close()


def test_the_default_is_the_bundled_embedder(mem: aa.Memory) -> None:
    mem.search("deployment times out", scope=SCOPE)
    assert mem.channel_status.ok and mem.channel_status.model == f"{aa.embed.MiniLM.model_id}+{ADAPTER_NAME}"


def test_loading_the_default_embedder_leaves_its_model_in_memory() -> None:
    """The bundled model loads on its first embedding (~0.3 s); the background load from
    ``Memory.open`` makes that embedding, so a search just after does not spend its budget on it."""
    lazy = aa.embed.MiniLM(lazy=True)
    assert not lazy.loaded
    warm(Checked(Adapted(lazy)))
    assert lazy.loaded


def test_a_paraphrase_is_found_by_meaning(mem: aa.Memory) -> None:
    query = "the release rollout hangs then fails, pods never turn ready"
    lexical = aa.Memory(mem.store, embedder=None, clock=lambda: NOW)
    assert lexical.search(query, scope=SCOPE) == []  # too few shared words
    hits = mem.search(query, scope=SCOPE)
    assert [h.experience.task for h in hits] == [LESSONS[1][0]]
    assert hits[0].factors["vector"] > 0.4


def test_an_unrelated_request_gets_no_block(mem: aa.Memory) -> None:
    assert mem.reference_block("book a meeting room for Thursday", scope=SCOPE) == ""
    assert mem.channel_status.ok


def test_a_query_too_long_is_cut_never_an_error(mem: aa.Memory) -> None:
    query = "deployment times out waiting for readiness " + "and then some more words " * 10_000
    assert len(query) > MAX_QUERY_CHARS
    hits = mem.search(query, scope=SCOPE)
    assert [h.experience.task for h in hits][:1] == [LESSONS[1][0]]
