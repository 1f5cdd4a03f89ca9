"""What ``Memory.add`` / ``add_many`` send to the background indexer: only the records the call
stored. A duplicate id is kept as stored (the import is idempotent), and its text is never
embedded: its vector would carry the stored record's revision and replace that record's vector,
so the lesson would be found by the rejected text and lost to its own."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import afteraction as aa
from afteraction.testing import FixedClock, make_experience
from tests.hybrid_doubles import Letters

SCOPE = aa.Scope(tenant="acme", app="support", project="refunds")


class Seen(Letters):
    """Letters that remembers every text it embedded."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts.extend(texts)
        return super().embed(texts)


def lesson(id: str, task: str) -> aa.Experience:
    return make_experience(task, scope=SCOPE, id=id)


def test_a_duplicate_in_a_batch_is_not_embedded_over_the_stored_lesson(tmp_path: Path) -> None:
    embedder = Seen()
    with aa.Memory.open(tmp_path / "m.db", clock=FixedClock(), embedder=embedder) as mem:
        assert mem.add(lesson("exp_1", "Refund ticket 42 is stuck in pending"))
        assert mem.wait_indexed(10)
        rejected, new = lesson("exp_1", "zebra giraffe okapi savanna"), lesson("exp_2", "Nightly build fails with 401")
        assert mem.add_many([rejected, new]) == 1
        assert mem.wait_indexed(10)
        assert not any("zebra" in text for text in embedder.texts)
        assert any("Nightly build" in text for text in embedder.texts)  # the new one is embedded
        assert mem.get("exp_1", scope=SCOPE).task == "Refund ticket 42 is stuck in pending"
        assert mem.add_many([rejected]) == 0  # nothing stored: nothing queued
        assert mem.wait_indexed(10)
        assert not any("zebra" in text for text in embedder.texts)
