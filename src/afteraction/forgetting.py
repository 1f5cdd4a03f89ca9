"""Forgetting: lessons deleted for good, with what was derived from them.

``forget`` is ``Memory.forget``: one lesson the caller's scope sees (``Store.delete``).
``forget_user`` is ``Memory.forget_user``: every lesson stored for one user of a tenant, in any
app, project, team or agent (``Store.delete_user``), as a request to erase a person's data asks;
lessons shared by every user (no ``user`` part in their scope) are not theirs and stay (an outcome
naming a deleted lesson finds nothing to update: outcomes read the lesson as stored). Sessions and
events are the service's (``EventStore.delete_sessions``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from afteraction import arguments
from afteraction.model import Scope
from afteraction.store.base import check_owner

if TYPE_CHECKING:
    from afteraction.memory import Memory

__all__ = ["forget", "forget_user"]


def forget(memory: Memory, id: str, *, scope: Scope) -> bool:
    """True when lesson ``id`` was deleted; False when ``scope`` sees none by that id (an id no
    lesson can have included), so that forgetting again, or a retried request, is no error."""
    known = arguments.lesson_id(id)
    return known is not None and memory.store.delete(scope, [known]) > 0


def forget_user(memory: Memory, user: str, *, tenant: str) -> list[str]:
    """The ids of the lessons of ``user`` in ``tenant`` deleted (none is no error: erasing again).
    ValidationError naming ``tenant`` or ``user`` when it is not a scope part's name."""
    tenant, user = check_owner(tenant, user)  # named before the store is asked, whatever the store
    return memory.store.delete_user(tenant, user)
