from __future__ import annotations

from afteraction.core.tasktext import task_text


def test_last_user_message_is_the_task() -> None:
    messages = [("system", "You are helpful"), ("user", "Refund ticket 42 is stuck"), ("assistant", "On it")]
    assert task_text(messages) == "Refund ticket 42 is stuck"


def test_short_follow_up_joins_previous_request() -> None:
    messages = [("user", "Refund ticket 42 is stuck in pending"), ("assistant", "Tried"), ("user", "and retry")]
    assert task_text(messages) == "Refund ticket 42 is stuck in pending and retry"


def test_a_new_request_stands_alone() -> None:
    messages = [("user", "Refund ticket 42 is stuck"), ("user", "Now book a meeting room for Thursday at ten please")]
    assert task_text(messages) == "Now book a meeting room for Thursday at ten please"


def test_no_user_message_gives_empty_text_and_long_text_is_cut() -> None:
    assert task_text([("system", "x")]) == ""
    long = task_text([("user", "word " * 1000)], limit=100)
    assert len(long) <= 100 and long.endswith("word")
