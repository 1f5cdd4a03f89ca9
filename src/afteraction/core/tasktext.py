"""Task text: what an invocation asks, derived from its messages."""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["MAX_TASK_CHARS", "is_follow_up", "task_text"]

#: Task text longer than this is cut (at a word boundary) before it is searched.
MAX_TASK_CHARS = 2000

_FOLLOW_UP = re.compile(
    r"^(?:and|also|then|now|again|retry|try again|ok(?:ay)?|yes|yep|sure|please|continue|go on|do it|same|"
    r"what about|how about|but)\b",
    re.IGNORECASE,
)


def is_follow_up(text: str) -> bool:
    """A short message that only makes sense after the previous request ("and retry")."""
    words = text.split()
    return len(words) <= 3 or (len(words) <= 8 and bool(_FOLLOW_UP.match(text.strip())))


def task_text(messages: Iterable[tuple[str, str]], *, limit: int = MAX_TASK_CHARS) -> str:
    """The task of an invocation from its ``(role, text)`` messages: the last user message,
    joined after the previous user request when it is a short follow-up."""
    requests = [" ".join(text.split()) for role, text in messages if role.lower() in ("user", "human") and text.strip()]
    if not requests:
        return ""
    task = requests[-1]
    if len(requests) > 1 and is_follow_up(task):
        task = f"{requests[-2]} {task}"
    if len(task) > limit:
        cut = task[:limit]
        task = cut[: cut.rfind(" ")] if " " in cut else cut
    return task
