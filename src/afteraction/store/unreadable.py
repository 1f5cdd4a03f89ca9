"""Reading past records stored unreadable, for every backend's ``missing_vectors``.

A record whose stored JSON cannot be decoded (damaged by a hand, a bug, or written by a newer
version) must not stop the records after it from getting their vectors: ``read_past`` asks the
backend for rows in (tenant, id) order, decodes each, lists the ones it cannot read as
(tenant, id, why) and asks for more until it holds ``limit`` records or the rows run out.
``say_unreadable`` logs each such record once per store.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from afteraction.errors import StoreError
from afteraction.model import Experience

__all__ = ["Page", "Rows", "read_past", "say_unreadable"]

log = logging.getLogger("afteraction.store")

#: Rows (tenant, id, stored JSON) after a (tenant, id), at most the count asked, in that order.
Rows = Callable[[tuple[str, str] | None, int], Sequence[tuple[str, str, str]]]

_SAID_AT_MOST = 4096  # records remembered as logged, per store: the set never grows past it


@dataclass(slots=True)
class Page:
    """The records read, those that could not be (tenant, id, why), and whether the rows ran out
    (``end``) having held none at all (``empty``)."""

    records: list[Experience] = field(default_factory=list)
    unreadable: list[tuple[str, str, str]] = field(default_factory=list)
    end: bool = False
    empty: bool = True


def read_past(rows: Rows, decode: Callable[[str], Experience], limit: int, after: tuple[str, str] | None) -> Page:
    """Up to ``limit`` records decoded from ``rows``, reading on past any ``decode`` refuses
    (a StoreError), which are listed in ``unreadable``."""
    found = Page()
    while True:
        wanted = limit - len(found.records)
        batch = rows(after, wanted)
        found.empty = found.empty and not batch
        for tenant, id, data in batch:
            try:
                found.records.append(decode(data))
            except StoreError as exc:
                found.unreadable.append((tenant, id, str(exc)))
        if len(batch) < wanted:
            found.end = True
            return found
        if len(found.records) >= limit:
            return found
        after = (batch[-1][0], batch[-1][1])


def say_unreadable(
    said: set[tuple[str, str]], unreadable: Sequence[tuple[str, str, str]], caller: list[tuple[str, str, str]] | None
) -> None:
    """Log each record of ``unreadable`` (tenant, id, why) that ``said`` (a store's) does not hold
    yet, and add them all to ``caller``'s list when it gave one."""
    if caller is not None:
        caller.extend(unreadable)
    for tenant, id, why in unreadable:
        if (tenant, id) not in said and len(said) < _SAID_AT_MOST:
            said.add((tenant, id))
            log.warning("afteraction: vector indexing passed over stored record %r of %r: %s", id, tenant, why)
