"""What the child of ``os.fork()`` starts afresh.

A forked child has only the thread that forked: the parent's worker threads, the calls they had in
flight and any lock one of them held are not there (a lock held at the fork stays held in the child
for good). Objects that own threads or locks register here (``renewed``) and rebuild them in
``_after_fork``; module state registers a function (``at_fork``). Nothing runs where there is no fork.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable
from typing import Protocol, TypeVar

__all__ = ["Renewable", "at_fork", "renewed"]


class Renewable(Protocol):
    def _after_fork(self) -> None: ...


_OBJECTS: weakref.WeakSet[Renewable] = weakref.WeakSet()
_HOOKS: list[Callable[[], None]] = []
R = TypeVar("R", bound=Renewable)


def renewed(obj: R) -> R:
    """Register ``obj`` to have its ``_after_fork`` called in a forked child; ``obj`` itself."""
    _OBJECTS.add(obj)
    return obj


def at_fork(hook: Callable[[], None]) -> Callable[[], None]:
    """Register a module's reset, run in a forked child before the objects' (a decorator)."""
    _HOOKS.append(hook)
    return hook


def _in_child() -> None:
    for hook in _HOOKS:
        hook()
    for obj in list(_OBJECTS):
        obj._after_fork()


if hasattr(os, "register_at_fork"):  # not on Windows
    os.register_at_fork(after_in_child=_in_child)
