"""What a remote memory checks and cleans before it sends a request, as a local ``Memory`` checks it.

A ``RemoteMemory`` answers each call as a local memory does (the README is the spec): a bad argument
is the same ``ValidationError`` naming the same argument, raised before anything is sent, and the
text searched is the same. So the checks a local memory makes before it reads its store are made
here, before the request: a query's type and ``k`` (``Memory._ranked``), an outcome's ``success``,
``known``, ``key`` and ``task`` (``feedback.count_outcome``), a person's decision
(``core.trust.decision``). Text goes out as a local memory reads it (``searching.query_text``,
``core.capture.clean_task``): a lone surrogate (text decoded with ``surrogateescape``) made U+FFFD
rather than a ``UnicodeEncodeError`` from the JSON encoder, and secrets scrubbed before they leave
the host.

``batches`` readies ``add_many``'s lessons: a repeated id kept once, as a local store keeps the first
(the service refuses a repeat within one request), everything the service would refuse found before
the first request is sent, and the requests the batch needs (see ``batches``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from afteraction.core.capture import clean_task
from afteraction.core.ids import own_id
from afteraction.core.sanitize import Limits
from afteraction.core.trust import decision
from afteraction.errors import ForbiddenError, ValidationError
from afteraction.model import Experience, Scope, Status, _check
from afteraction.searching import MAX_K, query_text

__all__ = ["BATCH", "BATCH_BYTES", "Batches", "batches", "k", "outcome", "query", "segment", "status"]

#: The most lessons one ``POST /experience/lessons`` takes (the service's limit).
BATCH = 1000
#: The most bytes of JSON ``batches`` puts in one request: under the service's default body limit
#: for a batch (``server.common.Limits.batch_bytes``, 16 MiB), with room for the envelope.
BATCH_BYTES = 15 << 20


def query(value: object, field: str = "query") -> str:
    """A query (a search's ``query``, a block's ``task``) as a local memory searches it (``query_text``)."""
    if not isinstance(value, str):
        raise ValidationError(field, f"must be a string, got {type(value).__name__}")
    return query_text(value)


def k(value: object) -> int:
    """A search's ``k``, checked as ``Memory._ranked`` checks it (a null ``k`` is no default here)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_K:
        raise ValidationError("k", f"must be an integer from 1 to {MAX_K}")
    return value


def outcome(
    id: object, scope: Scope, *, success: object, key: object, task: object, known: object, limits: Limits
) -> dict[str, Any]:
    """An outcome's body, checked as ``feedback.count_outcome`` checks it before it reads the lesson; a
    success's task sent as the wording it becomes (``clean_task``), a failure's not at all (it is not read)."""
    if not isinstance(success, bool):
        raise ValidationError("success", "must be true or false")
    if known is not None and (
        not isinstance(known, Experience) or (known.scope.tenant, known.id) != (scope.tenant, id)
    ):
        raise ValidationError("known", f"must be lesson {id!r} of tenant {scope.tenant!r} as a search returned it")
    body: dict[str, Any] = {"scope": scope.to_dict(), "success": success}
    if key is not None:
        body["key"] = _check.name(key, "key", limit=_check.MAX_ID)
    if task is not None and not isinstance(task, str):
        raise ValidationError("task", f"must be a string, got {type(task).__name__}")
    if task and success and (wording := clean_task(task, limits)):
        body["task"] = wording
    return body


def status(scope: Scope, wanted: Status | str, reason: str, limits: Limits) -> dict[str, Any]:
    """A person's decision's body, checked as ``Memory.set_status`` checks it (``core.trust.decision``: its
    error lists the statuses a person sets), the reason cleaned as ``feedback.change_status`` keeps it."""
    decided, said = decision(wanted, reason)
    said = clean_task(said, limits)[: Experience.REASON_CHARS] if said.strip() else ""
    return {"scope": scope.to_dict(), "status": decided.value, "reason": said}


def segment(id: str) -> str:
    """An id as one path segment, every reserved character escaped (the service then refuses what is
    not a valid id, naming it); ``.`` and ``..`` escaped too, which a URL would read as "here" and
    "up" (httpx drops such segments: ``lessons/.`` reached ``lessons``, ``users/../lessons`` ``lessons``)."""
    return "%2E" * len(id) if id in (".", "..") else quote(id, safe="")


@dataclass(frozen=True, slots=True)
class Batches:
    """The requests an ``add_many`` sends: each body, and for each the caller's index of every lesson in it."""

    bodies: tuple[bytes, ...]
    indexes: tuple[tuple[int, ...], ...]

    def field(self, request: int, field: str) -> str:
        """The service's ``lessons[i]…`` of request ``request`` as the caller's ``experiences[j]…``."""
        head, sep, rest = field.partition("]")
        if not (sep and head.startswith("lessons[") and head[8:].isdigit()):
            return field
        at = int(head[8:])
        mine = self.indexes[request]
        return f"experiences[{mine[at]}]{rest}" if at < len(mine) else field


def batches(experiences: Sequence[object]) -> Batches:
    """``add_many``'s lessons as requests. A lesson whose (tenant, id) an earlier one has (the id as the
    service keeps it, ``core.ids.own_id``) is left out: a local store keeps the first and counts the
    repeat as not new. Each is read back as the service will read it (``Experience.from_dict``, strict)
    and encoded, so that one it would refuse is named (``experiences[i]``) before anything is sent. A
    batch the service takes in one request (``BATCH`` lessons, ``BATCH_BYTES`` of JSON) is sent so, one
    transaction; a larger one in several, each stored on its own: then all must be of one tenant, the
    API key's (the service refuses another's), or nothing is sent."""
    bodies: list[bytes] = []
    indexes: list[tuple[int, ...]] = []
    items: list[bytes] = []
    mine: list[int] = []
    size = 0
    seen: set[tuple[str, str]] = set()
    tenants: dict[str, int] = {}
    for i, experience in enumerate(experiences):
        if not isinstance(experience, Experience):
            raise ValidationError(f"experiences[{i}]", f"must be an Experience, got {type(experience).__name__}")
        experience = own_id(experience)
        if (experience.scope.tenant, experience.id) in seen:
            continue
        seen.add((experience.scope.tenant, experience.id))
        tenants.setdefault(experience.scope.tenant, i)
        item = _encoded(experience, f"experiences[{i}]")
        if items and (len(items) == BATCH or size + len(item) + 1 > BATCH_BYTES):
            bodies.append(_body(items))
            indexes.append(tuple(mine))
            items, mine, size = [], [], 0
        items.append(item)
        mine.append(i)
        size += len(item) + 1
    if items:
        bodies.append(_body(items))
        indexes.append(tuple(mine))
    if len(bodies) > 1 and len(tenants) > 1:
        (first, _), (other, at) = list(tenants.items())[:2]
        raise ForbiddenError(
            f"experiences[{at}].scope.tenant: {other!r} is not experiences[0]'s {first!r}: the service takes one "
            f"tenant's lessons (its API key's) and this batch goes in {len(bodies)} requests; nothing was sent"
        )
    return Batches(tuple(bodies), tuple(indexes))


def _encoded(experience: Experience, field: str) -> bytes:
    """``experience`` as the request carries it, read back as the service reads it; ValidationError naming
    ``field`` (and the part at fault) when the service would refuse it."""
    try:
        item = json.dumps(experience.to_dict(), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        encoded = item.encode("utf-8")
    except (ValueError, TypeError) as exc:  # UnicodeEncodeError is a ValueError
        raise ValidationError(field, f"cannot be sent as JSON: {_check.echoed(exc, 120)}") from None
    try:
        Experience.from_dict(json.loads(item), strict=True)
    except ValidationError as exc:
        raise ValidationError(f"{field}.{exc.field}", exc.rule) from None
    return encoded


def _body(items: Sequence[bytes]) -> bytes:
    return b'{"lessons":[' + b",".join(items) + b"]}"
