"""AEP ingest: ``POST /events`` and ``POST /events/batch``, answered as the AEP reference server does.

One event: 202 ``{"accepted": true, "duplicate": false, "id": …}`` when new, 200 with
``"duplicate": true`` when this tenant already has the id, 400 ``{"accepted": false, "errors": […]}``
naming the field. A batch (a JSON array, or NDJSON) is answered per event in ``results``: 202
when at least one event was new, 200 when none was new but some were valid, 400 when none was
valid. A body over the limit gets 413 before it is parsed (chunked ones too), a content type
other than JSON (or NDJSON for a batch) 415. A body may come ``Content-Encoding: gzip``
(``read_content``, which every route that reads a body uses): decompressed with the same limit (413
past it, decompression stopping there), as ``POST /v1/traces`` does; any encoding but gzip or
``identity`` is 415 naming ``content-encoding``.

Events are stored through the group committer (``committer.Committer``): a request is answered
once the transaction holding its events has committed. JSON is read and written with msgspec
(strict: UTF-8, no NaN or Infinity, bounded nesting), each event validated once. Decoding and
validating (secrets scrubbed, sizes cut: the slow part) of a body over ``offload.INLINE_BYTES`` run
in a worker thread, a few bodies at a time, not on the event loop, so one large request does not hold
up the others; the turns are shared fairly by tenants, and a body whose client has gone is not worked
on; a smaller body is done on the loop (``offload``). A batch's events are counted before any is
decoded (NDJSON: its non-blank lines, split on ``\n`` only, up to one past the limit).

An event timed more than ``AHEAD`` (24 hours) past this server's clock is refused (400 naming
``time``): retention prunes a session by its last event's time, so a sender's clock must not keep
its sessions out of the retention window.

Every event a request carries, valid or not, costs one of the caller's event rate (``Service.charge``:
``KeyAuth.charge`` with API keys), charged once the events are counted (a JSON body parsed, NDJSON
lines counted) and before any is validated or stored, so a refused request (413 or 429) stores
nothing and costs no validation. A rate refusal is not a rejection in the metrics.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from functools import cache
from itertools import islice
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from afteraction.core.capture import clean_event
from afteraction.core.sanitize import LIMITS
from afteraction.errors import ValidationError
from afteraction.model import Event
from afteraction.model._check import echoed
from afteraction.server.common import Problem, Service, content_encoding, count, decompress, shown
from afteraction.server.offload import off_loop

__all__ = ["AHEAD", "parse_json", "read_body", "read_content", "routes"]

#: How far past this server's clock an event's ``time`` may be; later is refused (400 naming ``time``).
AHEAD = timedelta(hours=24)

_NDJSON = frozenset({"application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines"})


def _media_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()


def _is_json(media: str) -> bool:
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


async def read_body(request: Request, limit: int) -> bytes:
    """The body, refused with 413 as soon as it is known to pass ``limit`` bytes: by its
    Content-Length, or while a chunked body streams in."""
    declared = request.headers.get("content-length")
    if declared is not None:
        size = count(declared)
        if size is None:
            raise Problem(400, "content-length", f"must be a number of bytes, got {echoed(declared, 32)!r}")
        if size > limit:
            raise Problem(413, None, f"the body is {size} bytes; the limit is {limit}")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise Problem(413, None, f"the body passes the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def read_content(request: Request, limit: int, tenant: str) -> bytes:
    """The body as ``read_body`` reads it, decoded from its ``Content-Encoding`` (``common.decompress``:
    gzip, or none; another is 415 before a byte is read), never more than ``limit`` bytes either way.
    A gzip body over ``offload.INLINE_BYTES`` is decompressed in a worker thread, in ``tenant``'s turn."""
    encoding = content_encoding(request)
    body = await read_body(request, limit)
    if encoding in ("", "identity"):
        return body
    return await off_loop(request, tenant, body, _inflate, encoding, limit)


def _inflate(encoding: str, limit: int, body: bytes) -> bytes:
    return decompress(body, encoding, limit)


_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


def respond(data: Any, status: int) -> Response:
    return Response(_encode(data), status, media_type="application/json")


#: The rules strict JSON breaks, as ``afteraction validate`` words them too (``cli/files.py``; a test keeps them equal).
NOT_A_NUMBER = "NaN and Infinity are not JSON numbers"
OUT_OF_RANGE = "a number is beyond ±1.8e308, the range of a double"
#: An integer is read exactly, however far past a double's range, up to 4300 characters (its sign included).
TOO_LONG = "an integer is longer than 4300 characters, the most read exactly; send such a number as a string"
LONE_SURROGATE = "holds a lone UTF-16 surrogate escape ({}) with no pair: that is not Unicode text"
_NOT_A_NUMBER = re.compile(r"invalid character \(byte ([0-9]+)\)")


def _lone_surrogate(data: bytes | str | msgspec.Raw) -> str | None:
    """The first lone surrogate escape of JSON ``data`` (``\\ud83d``), which msgspec refuses as "truncated" or
    as a bad "surrogate pair"; None when there is none, or the text is not JSON for another reason."""
    try:
        text = json.dumps(json.loads(bytes(data) if isinstance(data, msgspec.Raw) else data), ensure_ascii=False)
    except (ValueError, RecursionError):
        return None
    found = re.search("[\ud800-\udfff]", text)
    return None if found is None else f"\\u{ord(found.group()):04x}"


def _not_json(message: str, data: bytes | str | msgspec.Raw) -> str:
    """msgspec's complaint about ``data`` with the rule named where it names none."""
    if message == "Input data was truncated" or "surrogate pair" in message:
        escape = _lone_surrogate(data)
        if escape is not None:
            return LONE_SURROGATE.format(escape)
    if message.startswith("Number out of range"):
        return f"is not JSON: {OUT_OF_RANGE}"
    if message.startswith("Integer value out of range"):
        return f"is not JSON: {TOO_LONG}"
    found = _NOT_A_NUMBER.fullmatch(message)
    if found is not None:
        at = int(found.group(1))
        head = (bytes(data) if not isinstance(data, str) else data.encode("utf-8", "surrogatepass"))[at : at + 8]
        if head.startswith((b"NaN", b"Infinity")):
            return f"is not JSON: {NOT_A_NUMBER} (byte {at})"
    return f"is not JSON: {message}"


def parse_json(data: bytes | str | msgspec.Raw, field: str, decode: Callable[[Any], Any] = _decode) -> Any:
    """Strict JSON: UTF-8, no NaN or Infinity, no number past a double's range (an integer is read exactly,
    up to 4300 digits), no lone surrogate escape; nesting too deep is bad input, not a crash."""
    try:
        return decode(data)
    except msgspec.DecodeError as exc:
        raise Problem(400, field, _not_json(str(exc).removeprefix("JSON is malformed: "), data)) from None
    except msgspec.MsgspecError as exc:
        raise Problem(400, field, _not_json(str(exc), data)) from None
    except UnicodeDecodeError:  # a string's bytes are not UTF-8 (msgspec raises this one itself)
        raise Problem(400, field, "is not UTF-8 text") from None
    except RecursionError:
        raise Problem(400, field, "is nested too deeply") from None


def validate(data: object, prefix: str = "") -> Event:
    """The event as it will be stored (``core.capture.clean_event``: secrets redacted, sizes cut),
    or Problem(400) naming the field (``prefix`` places it inside a batch)."""
    try:
        return clean_event(Event.from_dict(data), LIMITS)
    except ValidationError as exc:
        field = prefix.rstrip(".") if prefix and exc.field == "event" else prefix + exc.field
        raise Problem(400, field, exc.rule) from None
    except (TypeError, ValueError) as exc:
        raise Problem(400, prefix.rstrip(".") or "event", f"is not a valid AEP event: {exc}") from None


def latest() -> datetime:
    """The latest event time taken now: ``AHEAD`` past this server's clock."""
    return datetime.now(timezone.utc) + AHEAD


def in_time(event: Event, latest: datetime, prefix: str = "") -> Event:
    """``event``, or Problem(400) naming its ``time`` when it is past ``latest``."""
    if event.instant > latest:
        minutes = -(-(event.instant - latest + AHEAD) // timedelta(minutes=1))  # rounded up: never "24 h … at most 24"
        hours, minutes = divmod(minutes, 60)
        rule = f"is {echoed(event.time, 64)}, {hours:,} h {minutes} min ahead of this server's clock (at most 24 hours)"
        raise Problem(400, prefix + "time", rule)
    return event


def _event(service: Service, request: Request, body: bytes) -> Event:
    data = parse_json(body, "body")
    service.charge(request, 1)
    return service.check(request, data, in_time(validate(data), latest()), "")


async def post_event(service: Service, request: Request) -> Response:
    media = _media_type(request)
    if not _is_json(media):
        raise Problem(415, "content-type", f"must be application/json, got {media or 'none'!r}")
    tenant = service.tenant(request)
    try:
        body = await read_content(request, service.limits.event_bytes, tenant)
        event = await off_loop(request, tenant, body, _event, service, request)
    except Problem as problem:
        if problem.status == 400:  # refused by validation; not a body too large, an encoding, a rate, a client gone
            service.metrics.rejected(tenant, 1)
        raise
    (added,) = await service.writer.add(tenant, [event])
    service.metrics.ingested(tenant, int(added), int(not added))
    return respond({"accepted": True, "duplicate": not added, "id": event.id}, 202 if added else 200)


# a line of NDJSON: what lies between two ``\n`` (one ``\r`` before a ``\n`` is dropped); blank ones are
# skipped. Only ``\n`` ends a line: a JSON string may hold a raw U+2028, U+2029 or U+0085, as LLM text does.
_LINE = re.compile("[^\n]+")


def _lines(text: str) -> Iterator[str]:
    """The non-blank lines of NDJSON ``text``, lazily."""
    for match in _LINE.finditer(text):
        line = match.group(0)
        line = line[:-1] if line.endswith("\r") else line
        if line.strip():
            yield line


_COUNTED_UP_TO = 100_000  # a batch limit above this is counted once decoded


@cache
def _first_items(limit: int) -> Callable[[bytes], Any]:
    """A decoder of a JSON array's first ``limit + 1`` items left undecoded (``msgspec.Raw``: the rest is
    only scanned), as the fields of an array-like struct: counting them costs a tenth of decoding."""
    fields = [(f"i{n}", msgspec.Raw, msgspec.UNSET) for n in range(limit + 1)]
    return msgspec.json.Decoder(msgspec.defstruct("FirstItems", fields, array_like=True)).decode


def _array(body: bytes, limit: int, charge: Callable[[int], None]) -> list[Any]:
    """A JSON array body's items, decoded once counted and charged: more than ``limit`` is 413 before
    any is decoded, so is a number the key's event burst cannot take (``charge``)."""
    if limit > _COUNTED_UP_TO:
        found = parse_json(body, "body")
        if not isinstance(found, list):  # pragma: no cover - a text starting with "[" decodes to a list
            raise Problem(400, "body", "must be a JSON array of events or NDJSON")
        raws: list[Any] = found
    else:
        first = parse_json(body, "body", _first_items(limit))
        raws = [raw for raw in msgspec.structs.astuple(first) if raw is not msgspec.UNSET]
    if len(raws) > limit:
        raise Problem(413, None, f"the batch holds more than {limit} events; the limit is {limit}")
    charge(len(raws))
    return raws if limit > _COUNTED_UP_TO else [parse_json(raw, "body") for raw in raws]


def _items(media: str, body: bytes, limit: int, charge: Callable[[int], None]) -> list[tuple[Any, Problem | None]]:
    """The batch's items, each decoded or with the problem that stopped it, once ``charge`` took
    their number. NDJSON lines are counted before any is decoded, and so are a JSON array's items
    (``_array``)."""
    if _is_json(media) and body.lstrip().startswith(b"["):
        items: list[tuple[Any, Problem | None]] = [(item, None) for item in _array(body, limit, charge)]
    else:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise Problem(400, "body", "is not UTF-8 text") from None
        lines = list(islice(_lines(text), limit + 1))
        if len(lines) > limit:
            raise Problem(413, None, f"the batch holds more than {limit} events; the limit is {limit}")
        charge(len(lines))
        items = []
        for line in lines:
            try:
                items.append((parse_json(line, f"events[{len(items)}]"), None))
            except Problem as problem:
                items.append((None, problem))
    if not items:
        raise Problem(400, "body", "holds no events")
    return items


def _batch(
    service: Service, request: Request, media: str, body: bytes
) -> tuple[int, list[dict[str, Any]], list[tuple[int, Event]], set[int]]:
    """Decode and validate a batch (blocking work, run off the event loop): the number of items,
    a result per item (empty for the valid ones), the valid events by index, the statuses met."""
    items = _items(media, body, service.limits.batch_events, lambda count: service.charge(request, count))
    until = latest()
    results: list[dict[str, Any]] = []
    valid: list[tuple[int, Event]] = []
    statuses: set[int] = set()
    for index, (item, problem) in enumerate(items):
        if problem is None:
            try:
                prefix = f"events[{index}]."
                event = in_time(validate(item, prefix), until, prefix)
                valid.append((index, service.check(request, item, event, prefix)))
            except Problem as found:
                problem = found
        if problem is not None:
            statuses.add(problem.status)
            results.append({"index": index, "accepted": False, "errors": [shown(problem.field, problem.message)]})
        else:
            results.append({})
    return len(items), results, valid, statuses


async def post_batch(service: Service, request: Request) -> Response:
    media = _media_type(request)
    if not (_is_json(media) or media in _NDJSON):
        raise Problem(415, "content-type", f"must be application/json or application/x-ndjson, got {media or 'none'!r}")
    tenant = service.tenant(request)
    body = await read_content(request, service.limits.batch_bytes, tenant)
    received, results, valid, statuses = await off_loop(request, tenant, body, _batch, service, request, media)
    added = await service.writer.add(tenant, [event for _, event in valid])
    for (index, event), new in zip(valid, added, strict=True):
        results[index] = {"index": index, "accepted": True, "duplicate": not new, "id": event.id}
    rejected = [result for result in results if not result["accepted"]]
    service.metrics.ingested(tenant, sum(added), len(added) - sum(added))
    service.metrics.rejected(tenant, len(rejected))
    body_out: dict[str, Any] = {
        "accepted": bool(valid),
        "received": received,
        "added": sum(added),
        "duplicates": len(added) - sum(added),
        "rejected": len(rejected),
        "results": results,
    }
    if rejected:
        body_out["errors"] = [error for result in rejected for error in result["errors"]]
    # nothing valid: 400, or the one status every event got (401 when all are badly signed)
    refused = statuses.pop() if len(statuses) == 1 else 400
    return respond(body_out, 202 if any(added) else 200 if valid else refused)


def routes(service: Service) -> list[Route]:
    async def event(request: Request) -> Response:
        return await post_event(service, request)

    async def batch(request: Request) -> Response:
        return await post_batch(service, request)

    return [Route("/events", event, methods=["POST"]), Route("/events/batch", batch, methods=["POST"])]
