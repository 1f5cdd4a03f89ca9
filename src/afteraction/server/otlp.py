"""OpenTelemetry ingest: ``POST /v1/traces``, answered as an OTLP/HTTP collector does.

The body is an ``ExportTraceServiceRequest`` as OTLP/JSON (``application/json``) or protobuf
(``application/x-protobuf``), optionally ``Content-Encoding: gzip``. Its GenAI spans become AEP events
(``afteraction.core.otlp_events``) stored like any other ingest, deduplicated per tenant by their
derived ids, so an exporter's retry adds nothing.

A run may arrive over several exports (a batching exporter sends each span when it ends): spans
whose ancestry is not known yet wait in the store's span buffer (``afteraction.store.spans``), per
tenant and trace, and are placed when the export that brings their ancestors arrives
(``gather``); a trace past the buffer's bounds is resolved as it is.

Answers: 200 with an ``ExportTraceServiceResponse`` in the request's encoding, carrying
``partialSuccess`` (``rejectedSpans``, ``errorMessage``) when some spans could not be read; 400 for a
body that does not decode (the error names the problem); 415 for another content type or encoding;
413 for a body over ``Limits.traces_bytes``, compressed or once decompressed (decompression stops at
the limit, so a zip bomb costs no more memory than an honest body), or holding more than
``SPANS_PER_REQUEST`` spans (counted once the body is parsed, before any span is read or mapped);
413 or 429 (with ``Retry-After``) when the spans, charged one each to the caller's event rate
(``Service.charge``) once counted, pass it: nothing of the request is stored or held then.
A span timed more than 24 hours past this server's clock (``ingest.AHEAD``: retention prunes a
session by its last event's time) is kept, not refused, with its start and end capped at that limit
(``_capped``), and the answer's ``partialSuccess.errorMessage`` says so (``rejectedSpans`` stays 0): one
exporter's skewed clock loses no span, and its sessions still leave the retention window.
Errors come in the request's encoding too: afteraction's JSON error shape for JSON, a protobuf
``google.rpc.Status`` (whose message names the field and the problem) for protobuf, as OTLP/HTTP asks.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import timedelta
from functools import partial

from google.protobuf.json_format import MessageToDict
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTracePartialSuccess,
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from afteraction.core.otlp_events import Mapped, map_spans
from afteraction.core.otlp_pending import dumps, loads, split
from afteraction.core.otlp_sessions import Placed
from afteraction.core.otlp_spans import Batch, Span, decode_traces
from afteraction.core.redact import scrub_text
from afteraction.errors import ValidationError
from afteraction.model._check import echoed
from afteraction.server.common import Problem, Service, content_encoding, decompress, shown
from afteraction.server.ingest import AHEAD, parse_json, read_body
from afteraction.server.offload import in_turn
from afteraction.store.spans import Bounds, HeldSpan, SpanBuffer, open_spans

__all__ = ["BOUNDS", "SPANS_PER_REQUEST", "decompress", "gather", "routes", "status_body"]

BOUNDS = Bounds()  # the span buffer's: spans per trace and per tenant, bytes per tenant, age (store.spans)
SPANS_PER_REQUEST = 10_000  # more is 413, as events per batch are

JSON = "application/json"
PROTOBUF = "application/x-protobuf"
_PROTOBUF_TYPES = frozenset({PROTOBUF, "application/protobuf", "application/vnd.google.protobuf"})
_MAX_MESSAGE = 1000  # characters of errorMessage
# HTTP status → gRPC code in the Status body: INVALID_ARGUMENT, RESOURCE_EXHAUSTED, UNIMPLEMENTED (else UNKNOWN)
_GRPC_CODES = {400: 3, 413: 8, 415: 12, 429: 8}


def _too_many(count: int) -> None:
    if count > SPANS_PER_REQUEST:
        raise Problem(413, None, f"the request holds {count} spans; the limit is {SPANS_PER_REQUEST}")


def _listed(data: object, *keys: str) -> list[object]:
    """The list under the first of ``keys`` present (camelCase, then snake_case, as ``decode_traces`` reads)."""
    found = next((data[key] for key in keys if data.get(key) is not None), None) if isinstance(data, dict) else None
    return found if isinstance(found, list) else []  # a wrong shape is decode_traces's to name


def _request_data(media: str, body: bytes, charge: Callable[[int], None]) -> object:
    """The request as OTLP JSON data: parsed JSON, or the protobuf message in its JSON mapping;
    Problem(413) when it holds more than ``SPANS_PER_REQUEST`` spans; its spans ``charge``d."""
    if media == JSON:
        data = parse_json(body, "body")
        resources = _listed(data, "resourceSpans", "resource_spans")
        scopes = (scope for resource in resources for scope in _listed(resource, "scopeSpans", "scope_spans"))
        count = sum(len(_listed(scope, "spans")) for scope in scopes)
        _too_many(count)
        charge(count)
        return data
    message = ExportTraceServiceRequest()
    try:
        message.ParseFromString(body)
    except (DecodeError, RecursionError, ValueError) as exc:
        raise Problem(400, "body", echoed(f"is not a protobuf ExportTraceServiceRequest: {exc}", 300)) from None
    count = sum(len(scope.spans) for resource in message.resource_spans for scope in resource.scope_spans)
    _too_many(count)
    charge(count)
    return MessageToDict(message)


def _decoded(media: str, body: bytes, charge: Callable[[int], None]) -> Batch:
    try:
        return decode_traces(_request_data(media, body, charge))
    except ValidationError as exc:
        raise Problem(400, exc.field, exc.rule) from None


def gather(
    buffer: SpanBuffer,
    tenant: str,
    spans: Sequence[Span],
    *,
    now: float,
    bounds: Bounds = BOUNDS,
    placed: Callable[[list[str]], set[str]] = lambda sessions: set(),
) -> tuple[list[Span], list[tuple[str, str]]]:
    """The spans to map now, and the buffered (trace id, span id) they free once their events are
    stored. The export's spans whose ancestry is not known yet are held; the buffered spans of the
    traces this export roots are placed with it; a trace past ``bounds`` is resolved as it is, and
    so is a trace whose held spans wait for a parent already stored as a session (``placed``: its
    id ``<trace>-<span>``): an export that came after its root's, or raced it (``_ingest``)."""
    first = split(spans)
    late: set[tuple[str, str]] = set()
    if first.waiting:
        buffer.hold(tenant, [HeldSpan(s.trace_id, s.span_id, dumps(s)) for s in first.waiting], now=now)
        late = _under_placed(first.waiting, placed)
    traces = {s.trace_id for s in first.ready} | {trace for trace, _ in late}
    released = buffer.release(tenant, traces, now=now, bounds=bounds)
    if not released.spans:
        return list(first.ready), []
    held = {(h.trace_id, h.span_id) for h in released.spans}
    second = split([*first.ready, *(loads(h.data) for h in released.spans)], as_they_are=released.due, under=late)
    return list(second.ready), [key for s in second.ready if (key := (s.trace_id, s.span_id)) in held]


PLACED_LOOKUPS = 64  # sessions looked up per export for its waiting spans' parents; more wait as before


def _under_placed(waiting: Sequence[Span], placed: Callable[[list[str]], set[str]]) -> set[tuple[str, str]]:
    """The (trace id, span id) of the missing parents of ``waiting`` that are stored sessions (checked after
    the spans were held: see ``_ingest``), looking up at most ``PLACED_LOOKUPS`` of them, in one read. Only
    the spans under those are placed now; the trace's others keep waiting for their own parents."""
    known = {(s.trace_id, s.span_id) for s in waiting}
    parents = {(s.trace_id, s.parent_id) for s in waiting if s.parent_id and (s.trace_id, s.parent_id) not in known}
    if not parents:
        return set()
    stored = placed([f"{trace}-{parent}" for trace, parent in sorted(parents)[:PLACED_LOOKUPS]])
    return {(trace, parent) for trace, parent in parents if f"{trace}-{parent}" in stored}


def _capped(spans: Sequence[Span], latest_ns: int) -> tuple[list[Span], str]:
    """The spans with a start or end past ``latest_ns`` capped at it, and what the answer says of them ("" for none)."""
    out: list[Span] = []
    late: list[Span] = []
    for span in spans:
        if span.end_ns > latest_ns:  # end_ns >= start_ns
            late.append(span)
            span = replace(span, start_ns=min(span.start_ns, latest_ns), end_ns=latest_ns)
        out.append(span)
    if not late:
        return out, ""
    first = late[0]
    return out, (
        f"{len(late)} span(s) timed more than 24 hours ahead of this server's clock (first: span {first.span_id} "
        f"of trace {first.trace_id}) are stored as timed 24 hours ahead"
    )


def _ingest(
    service: Service, buffer: SpanBuffer, request: Request, tenant: str, media: str, body: bytes
) -> tuple[int, str]:
    """Decode (charging the spans), place, map and store (blocking work, run off the event loop):
    rejected spans, why.

    Two exports of one trace may race (two replicas, or two workers of one): the one holding
    children may commit them after the one bringing their root looked in the buffer, and before
    that one's events are stored. So each side looks again once its own work is committed: the
    holder asks whether the parent its spans wait for is a stored session (``gather``'s ``placed``),
    and the rooting side, once its events are stored, takes back what was held meanwhile for the
    traces it rooted and places it with them. One of the two looks late enough to see the other
    (each statement sees every commit before it); when both do, the events come out the same
    (their ids are derived) and are stored once."""
    batch = _decoded(media, body, partial(service.charge, request))
    now = time.time()
    spans, late = _capped(batch.spans, int(now * 1e9) + AHEAD // timedelta(microseconds=1) * 1000)
    placed = partial(_stored, service, tenant)
    ready, freed = gather(buffer, tenant, spans, now=now, bounds=BOUNDS, placed=placed)
    mapped = _store(service, buffer, tenant, ready, freed, placed=_placed(service, tenant, ready))
    rooted = {s.trace_id for s in ready if s.parent_id is None}
    if rooted:  # what another export held for these traces while this one placed them
        again, freed = gather(buffer, tenant, [s for s in ready if s.trace_id in rooted], now=now, bounds=BOUNDS)
        if freed:
            _store(service, buffer, tenant, again, freed, counted=False)
    message = _message((*([late] if late else []), *batch.errors, *mapped.errors))
    rejected = batch.rejected + mapped.rejected
    service.metrics.rejected(tenant, rejected)
    return rejected, message


def _message(parts: Sequence[str]) -> str:
    """The answer's ``errorMessage``: ``parts`` joined, scrubbed (a rejected span's error may echo what it held),
    then cut at ``_MAX_MESSAGE`` characters between words (``echoed``: a token cut short would slip past the
    scrubber). Only the parts the cut keeps are joined and scrubbed, however many spans were rejected."""
    kept: list[str] = []
    size = 0
    for part in parts:
        if size > _MAX_MESSAGE:
            break
        kept.append(part)
        size += len(part) + 2
    return echoed(scrub_text("; ".join(kept)), _MAX_MESSAGE)


def _stored(service: Service, tenant: str, ids: list[str]) -> set[str]:
    """Those of the session ``ids`` that are stored, read in one snapshot."""
    with service.events.reading(tenant) as reader:
        return {id for id in ids if reader.session(id) is not None}


def _placed(service: Service, tenant: str, spans: Sequence[Span]) -> dict[tuple[str, str], Placed]:
    """The stored sessions that those of ``spans`` whose (local) parent is not among them hang under, by
    (trace id, span id), as their ``task.created`` describes them: ``map_spans`` puts the spans in them, as
    the trace sent whole would. At most ``PLACED_LOOKUPS`` parents are looked up, in one read, then each
    one found's first event: only spans placed after their parent's session (``gather``) or resolved as
    they are have a parent missing, so an export that roots its traces reads nothing."""
    known = {(s.trace_id, s.span_id) for s in spans}
    parents = {(s.trace_id, s.parent_id) for s in spans if s.parent_id and not s.parent_remote}
    missing = sorted(parents - known)[:PLACED_LOOKUPS]
    if not missing:
        return {}
    with service.events.reading(tenant) as reader:
        found = {key: session for key in missing if (session := reader.session(f"{key[0]}-{key[1]}")) is not None}
    out: dict[tuple[str, str], Placed] = {}
    for key, session in found.items():
        first = service.events.events(tenant, session.id, limit=1, types=["task.created"])
        data = json.loads(first[0].data) if first else {}
        kind = data.get("payload", {}).get("kind")
        role = data.get("agent_role")
        out[key] = Placed(
            session.source,
            session.parent_session_id,
            kind=kind if kind in ("agent", "workflow") else None,
            role=role if role in ("orchestrator", "subagent", "standalone") else None,
        )
    return out


def _store(
    service: Service, buffer: SpanBuffer, tenant: str, ready: list[Span], freed: list[tuple[str, str]],
    *, counted: bool = True, placed: Mapping[tuple[str, str], Placed] | None = None,
) -> Mapped:  # fmt: skip
    """Map ``ready`` and store its events, then drop the held spans it ``freed`` (only once their events are
    stored: a crash before leaves them held). ``counted``: its duplicates count in the metrics (not when
    placing again what this request stored a moment ago); ``placed``: the stored sessions ``ready`` joins."""
    mapped = map_spans(ready, placed=placed)
    if mapped.events:  # the mapping scrubbed them (content sanitized, names and ids scrubbed and bounded)
        added = service.events.add_many(tenant, list(mapped.events))
        service.metrics.ingested(tenant, sum(added), len(added) - sum(added) if counted else 0)
    buffer.drop(tenant, freed)
    return mapped


def _answer(media: str, rejected: int, message: str) -> Response:
    if media == JSON:
        partial = {"rejectedSpans": str(rejected), "errorMessage": message} if rejected or message else None
        return JSONResponse({"partialSuccess": partial} if partial else {})
    response = ExportTraceServiceResponse()
    if rejected or message:
        response.partial_success.CopyFrom(ExportTracePartialSuccess(rejected_spans=rejected, error_message=message))
    return Response(response.SerializeToString(), media_type=PROTOBUF)


def _varint(number: int) -> bytes:
    out = bytearray()
    while True:
        byte, number = number & 0x7F, number >> 7
        out.append(byte | (0x80 if number else 0))
        if not number:
            return bytes(out)


def status_body(status: int, field: str | None, message: str, *, verbatim: bool = False) -> bytes:
    """A ``google.rpc.Status`` (code = 1, message = 2), the error body OTLP/HTTP gives protobuf clients: its
    field and message as the JSON error shows them (``server.common.shown``: scrubbed, unless ``verbatim``)."""
    said = shown(field, message, verbatim=verbatim)
    text = (f"{said['field']}: {said['message']}" if field else said["message"]).encode("utf-8")
    return b"\x08" + _varint(_GRPC_CODES.get(status, 2)) + b"\x12" + _varint(len(text)) + text


async def post_traces(service: Service, buffer: SpanBuffer, request: Request) -> Response:
    media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media in _PROTOBUF_TYPES:
        try:
            return await _post(service, buffer, request, PROTOBUF)
        except Problem as problem:  # a protobuf client reads a protobuf Status; JSON clients get the JSON shape
            body = status_body(problem.status, problem.field, problem.message, verbatim=problem.verbatim)
            return Response(body, status_code=problem.status, headers=problem.headers, media_type=PROTOBUF)
    if media != JSON:
        raise Problem(415, "content-type", f"must be {JSON} or {PROTOBUF}, got {echoed(media, 60) or 'none'!r}")
    return await _post(service, buffer, request, JSON)


async def _post(service: Service, buffer: SpanBuffer, request: Request, media: str) -> Response:
    encoding = content_encoding(request)
    tenant = service.tenant(request)
    limit = service.limits.traces_bytes
    body = await read_body(request, limit)
    rejected, message = await in_turn(  # in a worker thread, in the tenant's turn (``offload``)
        request, tenant, lambda: _ingest(service, buffer, request, tenant, media, decompress(body, encoding, limit))
    )
    return _answer(media, rejected, message)


def routes(service: Service) -> list[Route]:
    buffer = open_spans(service.events.store)

    async def traces(request: Request) -> Response:
        return await post_traces(service, buffer, request)

    return [Route("/v1/traces", traces, methods=["POST"])]
