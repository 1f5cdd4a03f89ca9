"""What a run recorder holds before its finish: the calls and attempts as the agent's thread appended
them (nothing is scrubbed yet: that happens once, at the finish), and the agent's values made text
without raising (an exception whose ``__str__`` fails is still recorded, as its ``repr`` or its type);
and the one deadline a remote memory gives a finish (``finish_deadline``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

__all__ = ["RawAttempt", "RawCall", "error_text", "finish_deadline", "shown", "text_of"]


@dataclass(slots=True)
class RawCall:
    tool: str
    args: Mapping[str, Any] | None
    result: Any
    error: str | None
    call_id: str | None
    at: datetime


@dataclass(slots=True)
class RawAttempt:
    calls: list[RawCall] = field(default_factory=list)
    error: str | None = None
    refused: int = 0
    failed_checks: list[str] = field(default_factory=list)
    failed_tools: set[str] = field(default_factory=set)


def text_of(value: object) -> str:
    """``str(value)``; when that fails, its ``repr``; when that fails too, its type's name. Never raises."""
    if type(value) is str:
        return value
    for convert in (str, repr):
        try:
            return convert(value)
        except Exception:
            pass
    return f"<{type(value).__name__}>"


def shown(value: object) -> str:
    """``repr(value)`` for a message, or its type's name when that fails. Never raises."""
    try:
        return repr(value)
    except Exception:
        return f"<{type(value).__name__}>"


def error_text(error: object) -> str:
    """An error as recorded: ``"Type: message"`` for an exception, else the value's text. Never raises."""
    if isinstance(error, BaseException):
        return f"{type(error).__name__}: {text_of(error)}"
    return text_of(error)


def finish_deadline(memory: object) -> AbstractContextManager[None]:
    """A remote memory's ``finish_deadline`` (its lesson and its outcomes wait ``timeout`` in all,
    however many lessons the run was given); nothing for a local one."""
    deadline = getattr(memory, "finish_deadline", None)
    return deadline() if callable(deadline) else contextlib.nullcontext()
