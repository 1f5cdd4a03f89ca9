"""A search query is scrubbed before it is embedded and matched, as a recorded task is."""

from __future__ import annotations

import afteraction as aa
from afteraction.searching import MAX_QUERY_CHARS, query_text

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
SCOPE = aa.Scope(tenant="acme", app="a", project="p", agent="g")


class Spy:
    model_id = "spy-1"
    dimension = 4

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.seen.extend(texts)
        return [[1.0, 0.0, 0.0, 0.0] for _ in texts]


def test_query_text_scrubs_and_cuts() -> None:
    assert query_text(f"refund stuck, my token is {TOKEN}") == "refund stuck, my token is [REDACTED:api_key]"
    assert query_text("refund stuck in pending") == "refund stuck in pending"
    long = query_text("x " * ((MAX_QUERY_CHARS - 20) // 2) + TOKEN)  # the token across the cut
    assert len(long) <= MAX_QUERY_CHARS and TOKEN[:10] not in long
    assert query_text("a \ud800 b") == "a \ufffd b"


def test_the_embedder_never_reads_a_token_in_a_query() -> None:
    spy = Spy()
    with aa.Memory.open(":memory:", embedder=spy) as mem:
        mem.search(f"refund stuck, my token is {TOKEN}", scope=SCOPE)
        mem.reference_block(f"refund stuck with {TOKEN}", scope=SCOPE)
        mem.wait_indexed(5)
    assert spy.seen and not any(TOKEN in text for text in spy.seen)
