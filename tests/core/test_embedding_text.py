"""``core.text.embedding_text``: what a lesson's vector is made from, its learned wordings included."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from afteraction.core.text import EMBED_CHARS, embedding_text
from afteraction.model import Experience, Scenario
from afteraction.testing import make_experience
from tests.builders import ACME

LONG_TASK = "Refund ticket 42 is stuck in pending. " + " ".join(
    f"Ticket note {i}: the agent on shift {i} looked at the refund queue entry and left it." for i in range(8)
)
PARAPHRASE = "chargeback not processed, the payment is frozen for the client"


def as_before(experience: Experience, limit: int = EMBED_CHARS) -> str:
    """The embedding text as it was made before wordings had room of their own."""
    parts = [experience.task]
    if experience.scenario is not None and experience.scenario.symptoms:
        parts.append(experience.scenario.symptoms[0])
    parts.extend(experience.wordings)
    return "\n".join(part.strip() for part in parts if part.strip())[:limit]


TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=900).filter(str.strip)


@given(TEXT, st.lists(TEXT.map(lambda s: s[:300]), max_size=2))
def test_a_lesson_without_wordings_reads_as_it_always_has(task: str, symptoms: list[str]) -> None:
    """Stored vectors and the quality benchmark's exact figures depend on it."""
    scenario = Scenario(task=task, symptoms=tuple(symptoms)) if symptoms else None
    e = make_experience(task, scope=ACME, scenario=scenario)
    assert embedding_text(e) == as_before(e)


def test_a_lesson_whose_words_fit_reads_as_before() -> None:
    e = make_experience("Refund ticket 42 is stuck in pending", scope=ACME, wordings=(PARAPHRASE, "refund frozen"))
    assert embedding_text(e) == as_before(e) == f"Refund ticket 42 is stuck in pending\n{PARAPHRASE}\nrefund frozen"


def test_the_wordings_of_a_lesson_with_a_long_task_reach_its_vector() -> None:
    """Cut at the end, the task took all 512 characters: what the lesson learned never reached its vector."""
    e = make_experience(LONG_TASK, scope=ACME)
    assert len(LONG_TASK) > EMBED_CHARS
    learned = replace(e, wordings=("refund hangs awaiting the payment lock", PARAPHRASE))
    text = embedding_text(learned)
    assert PARAPHRASE not in as_before(learned)
    assert len(text) <= EMBED_CHARS and text.startswith(LONG_TASK[:200])  # the task still leads
    assert text.endswith(f"\n{PARAPHRASE}\nrefund hangs awaiting the payment lock")  # newest first
    full = replace(e, wordings=tuple(f"{n} " + "w" * 296 for n in range(3)))  # 900 characters of wordings
    text = embedding_text(full)
    assert len(text) == EMBED_CHARS and text.startswith(LONG_TASK[: EMBED_CHARS // 2 - 1] + "\n2 www")
