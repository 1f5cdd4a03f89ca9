"""Experience over HTTP: search, the reference block, lessons, outcomes, a person's decisions and verdicts.

Every route works in the caller's tenant (``service.tenant``, from the API key); the rest of
the scope (app, project and the optional team, agent, user) comes with the request, as it
would from the host's identity function. A scope naming another tenant is refused (403),
never quietly rewritten.

- ``POST /experience/search`` ``{"query", "scope", "k"?, "env"?}`` → ``{"hits": [...]}``
- ``POST /experience/block`` ``{"task", "scope", "env"?, "layout"?, "max_records"?, "max_bytes"?,
  "max_tokens"?}`` → ``{"block": "...", "lessons": [ids]}`` ("" and [] when no lesson qualifies; the
  ids of the lessons in the block, for the host to pass back as ``given``)
- ``GET /experience/lessons?app=&project=[&team=&agent=&user=][&status=&limit=&offset=]``
- ``GET /experience/lessons/{id}?app=&project=…`` → the lesson
- ``DELETE /experience/lessons/{id}?app=&project=…`` → ``{"deleted": true|false}``: the lesson forgotten,
  with its search rows and vectors (``Memory.forget``; false when the scope sees none: a retry is no error)
- ``DELETE /experience/users/{user}/lessons?tenant=`` → ``{"deleted": n, "ids": [...]}``: every lesson stored
  for that user of the caller's tenant, in any app or project (``Memory.forget_user``; a key bound to a
  project is refused: the erasure reaches every project)
- ``POST /experience/lessons`` ``{"lessons": [...]}`` → ``{"stored": n}`` (import as is, idempotent)
- ``POST /experience/lessons/{id}/outcome`` ``{"scope", "success", "key"?, "task"?}`` → the updated
  lesson (an outcome repeated under the same ``key`` counts once; a success's ``task`` becomes a
  wording the lesson is found by)
- ``POST /experience/lessons/{id}/status`` ``{"scope", "status", "reason"?}`` → the updated lesson: a
  person's decision (``revoked``, ``superseded``, ``stale``; ``validated`` reinstates), ``Memory.set_status``
- ``POST /experience/runs`` ``{"run", "given"?}`` → ``{"lesson": … | null}`` (a finished run with its checks)
- ``POST /sessions/{id}/verdict`` ``{"scope", "evidence": [...], "given"?}`` → ``{"lesson": … | null}``:
  the run assembled from that session's ingested events, judged by the host's evidence. Both answer
  201 with the lesson they stored; 200 with ``null`` when the run has no verdict, or with the lesson
  a finish of the same run stored before and ``"judged_before": true`` (that one stays; this verdict
  was not used: a run is judged once).

``given`` (at most 100 lesson ids, e.g. a block's ``lessons``) are the lessons the run was given: when
it has a verdict, each whose fix it applied (it called every tool of the lesson's worked steps) gets it
as a reuse outcome, once per run (``afteraction.feedback``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from afteraction.errors import NotFoundError, ValidationError
from afteraction.learning import Learned, learn
from afteraction.memory import Memory
from afteraction.model import Evidence, Experience, Run, Scope
from afteraction.model._check import echoed, mapping
from afteraction.server.common import Problem, Service, int_param, json, path_id
from afteraction.server.ingest import parse_json, read_content
from afteraction.server.offload import off_loop
from afteraction.server.openapi import OPERATIONS
from afteraction.server.session_runs import session_run
from afteraction.store.base import MAX_PAGE

__all__ = ["routes"]

_LAYOUTS = ("compact", "verbose")
_MAX_LESSONS = 1000  # per POST /experience/lessons


def _memory(service: Service) -> Memory:
    if service.memory is None:
        raise Problem(404, None, "this server keeps no experience store")
    return service.memory


#: The operations whose body may be a batch (lessons, a run's events): up to ``Limits.batch_bytes``;
#: every other body (a query, an outcome, a status, a verdict) up to ``Limits.event_bytes``.
_BATCHES = frozenset({"/experience/lessons", "/experience/runs"})


def _parse(body: bytes) -> Any:
    return parse_json(body, "body")


async def _body(service: Service, request: Request, path: str) -> dict[str, Any]:
    """The request's JSON object, decoded off the event loop when large (``offload``); a field its
    operation (``openapi.OPERATIONS``) does not name is refused, not ignored: a misspelt
    ``max_record`` would otherwise change nothing, silently."""
    media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media != "application/json":
        raise Problem(415, "content-type", f"must be application/json, got {media or 'none'!r}")
    limit = service.limits.batch_bytes if path in _BATCHES else service.limits.event_bytes
    tenant = service.tenant(request)
    data = await off_loop(request, tenant, await read_content(request, limit, tenant), _parse)
    if not isinstance(data, dict):
        raise Problem(400, "body", "must be a JSON object")
    known = _FIELDS[path]
    for name in data:
        if name not in known:
            raise Problem(400, echoed(name), f"is not a field of this request; it takes {', '.join(sorted(known))}")
    return data


def _fields(path: str) -> frozenset[str]:
    schema = OPERATIONS[(path, "post")]["requestBody"]["content"]["application/json"]["schema"]
    return frozenset(schema["properties"])


_FIELDS = {
    path: _fields(path)
    for path in (
        "/experience/search",
        "/experience/block",
        "/experience/lessons",
        "/experience/lessons/{lesson_id}/outcome",
        "/experience/lessons/{lesson_id}/status",
        "/experience/runs",
        "/sessions/{session_id}/verdict",
    )
}


def _scope(service: Service, request: Request, data: object, field: str = "scope") -> Scope:
    """The request's scope inside the caller's tenant (and the project its key is bound to)."""
    tenant = service.tenant(request)
    parts = dict(mapping(data, field))
    claimed = parts.pop("tenant", tenant)
    if claimed != tenant:
        raise Problem(403, f"{field}.tenant", "this key belongs to another tenant")
    bound = service.project(request)
    if bound is not None and parts.get("project", bound) != bound:
        raise Problem(403, f"{field}.project", f"this key is bound to project {bound!r}")
    return Scope.from_dict({**parts, "tenant": tenant}, field)


def _own(service: Service, request: Request, scope: Scope, field: str) -> None:
    """A 403 naming ``field`` unless a record's ``scope`` lies in the caller's tenant (and bound project)."""
    if scope.tenant != service.tenant(request):
        raise Problem(403, f"{field}.tenant", "this key belongs to another tenant")
    bound = service.project(request)
    if bound is not None and scope.project != bound:
        raise Problem(403, f"{field}.project", f"this key is bound to project {bound!r}")


def _query_scope(service: Service, request: Request) -> Scope:
    """The scope of ``?app=&project=…``; an error names the query parameter (``app``, not ``scope.app``)."""
    parts = {name: value for name in (*Scope.REQUIRED, *Scope.OPTIONAL) if (value := request.query_params.get(name))}
    try:
        return _scope(service, request, parts)
    except ValidationError as exc:
        raise ValidationError(exc.field.removeprefix("scope."), exc.rule) from None
    except Problem as exc:
        field = None if exc.field is None else exc.field.removeprefix("scope.")
        raise Problem(exc.status, field, exc.message, exc.headers) from None


def _text(data: Mapping[str, Any], name: str) -> str:
    value = data.get(name)
    if not isinstance(value, str):
        raise ValidationError(name, "is required and must be a string")
    return value


def _env(data: Mapping[str, Any]) -> dict[str, str] | None:
    env = data.get("env")
    if env is None:
        return None
    items = mapping(env, "env")
    for key, value in items.items():
        if not isinstance(value, str):
            raise ValidationError(f"env.{key}", "must be a string")
    return dict(items)


def _optional_int(data: Mapping[str, Any], name: str) -> int | None:
    value = data.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(name, "must be an integer")
    return value


async def search(service: Service, request: Request) -> JSONResponse:
    memory = _memory(service)
    data = await _body(service, request, "/experience/search")
    scope = _scope(service, request, data.get("scope"))
    query = _text(data, "query")
    k = _optional_int(data, "k")
    env = _env(data)
    hits = await run_in_threadpool(lambda: memory.search(query, scope=scope, k=5 if k is None else k, env=env))
    return json({"hits": [hit.to_dict() for hit in hits]})


async def block(service: Service, request: Request) -> JSONResponse:
    memory = _memory(service)
    data = await _body(service, request, "/experience/block")
    scope = _scope(service, request, data.get("scope"))
    task = _text(data, "task")
    layout = data.get("layout")
    if layout is not None and layout not in _LAYOUTS:
        raise ValidationError("layout", f"must be one of {', '.join(_LAYOUTS)}")
    options = {name: _optional_int(data, name) for name in ("max_records", "max_bytes", "max_tokens")}
    env = _env(data)
    text, shown = await run_in_threadpool(
        lambda: memory.block_with_hits(task, scope=scope, env=env, layout=layout, **options)
    )
    return json({"block": text, "lessons": [hit.id for hit in shown]})


async def lessons(service: Service, request: Request) -> JSONResponse:
    memory = _memory(service)
    scope = _query_scope(service, request)
    limit = int_param(request, "limit", 50, maximum=service.limits.page)
    offset = int_param(request, "offset", 0, minimum=0, maximum=MAX_PAGE)
    status = request.query_params.get("status")
    found = await run_in_threadpool(lambda: memory.lessons(scope=scope, limit=limit, offset=offset, status=status))
    return json({"lessons": [lesson.to_dict() for lesson in found]})


async def lesson(service: Service, request: Request) -> JSONResponse:
    memory = _memory(service)
    scope = _query_scope(service, request)
    id = path_id(request, "lesson_id")
    found = await _of_lesson(lambda: memory.get(id, scope=scope))
    return json(found.to_dict())


async def _of_lesson(call: Callable[[], Experience]) -> Experience:
    """``call`` (about the path's lesson) off the event loop; a lesson the scope does not see is a
    404 naming ``lesson_id``, the field at fault."""
    try:
        return await run_in_threadpool(call)
    except NotFoundError as exc:
        raise Problem(404, "lesson_id", str(exc)) from None


async def forget(service: Service, request: Request) -> JSONResponse:
    memory = _memory(service)
    scope = _query_scope(service, request)
    id = path_id(request, "lesson_id")
    return json({"deleted": await run_in_threadpool(memory.forget, id, scope=scope)})


async def forget_user(service: Service, request: Request) -> JSONResponse:
    memory = _memory(service)
    tenant = service.tenant(request)
    if request.query_params.get("tenant", tenant) != tenant:
        raise Problem(403, "tenant", "this key belongs to another tenant")
    if (bound := service.project(request)) is not None:
        raise Problem(403, "user", f"this key is bound to project {bound!r}; erasing a user reaches every project")
    gone = await run_in_threadpool(memory.forget_user, str(request.path_params["user"]), tenant=tenant)
    return json({"deleted": len(gone), "ids": gone})


async def add_lessons(service: Service, request: Request) -> JSONResponse:
    memory = _memory(service)
    data = await _body(service, request, "/experience/lessons")
    items = data.get("lessons")
    if not isinstance(items, list) or not items:
        raise ValidationError("lessons", "must be a non-empty array of lessons")
    if len(items) > _MAX_LESSONS:
        raise Problem(413, "lessons", f"holds {len(items)} lessons; the limit is {_MAX_LESSONS}")
    records = []
    seen: dict[tuple[str, str], int] = {}
    for index, item in enumerate(items):
        try:
            record = Experience.from_dict(item, strict=True)
        except ValidationError as exc:
            raise ValidationError(f"lessons[{index}].{exc.field}", exc.rule) from None
        _own(service, request, record.scope, f"lessons[{index}].scope")
        if (first := seen.setdefault((record.scope.tenant, record.id), index)) != index:
            raise ValidationError(f"lessons[{index}].id", f"repeats lessons[{first}].id; ids are unique per tenant")
        records.append(record)
    stored = await run_in_threadpool(memory.add_many, records)
    return json({"stored": stored, "received": len(records)}, 201 if stored else 200)


async def outcome(service: Service, request: Request) -> JSONResponse:
    memory = _memory(service)
    id = path_id(request, "lesson_id")
    data = await _body(service, request, "/experience/lessons/{lesson_id}/outcome")
    scope = _scope(service, request, data.get("scope"))
    success = data.get("success")
    if not isinstance(success, bool):
        raise ValidationError("success", "is required and must be true or false")
    key, task = data.get("key"), data.get("task")
    updated = await _of_lesson(lambda: memory.record_outcome(id, scope=scope, success=success, key=key, task=task))
    return json(updated.to_dict())


async def set_status(service: Service, request: Request) -> JSONResponse:
    memory = _memory(service)
    id = path_id(request, "lesson_id")
    data = await _body(service, request, "/experience/lessons/{lesson_id}/status")
    scope = _scope(service, request, data.get("scope"))
    status, reason = data.get("status"), data.get("reason", "")
    if status is None:  # the rest of the decision is checked by set_status (``core.trust.decision``)
        raise ValidationError("status", "is required: revoked, superseded, stale or validated (to reinstate)")
    updated = await _of_lesson(lambda: memory.set_status(id, status, scope=scope, reason=reason))
    return json(updated.to_dict())


def _learned(learned: Learned) -> JSONResponse:
    """201 with the lesson this call stored; 200 with ``lesson`` null (no verdict), or with the lesson a
    finish of the same run stored before and ``judged_before``: that one stays, this verdict unused."""
    if learned.lesson is None:
        return json({"lesson": None})
    if learned.new:
        return json({"lesson": learned.lesson.to_dict()}, 201)
    return json({"lesson": learned.lesson.to_dict(), "judged_before": True})


async def submit_run(service: Service, request: Request) -> JSONResponse:
    memory = _memory(service)
    data = await _body(service, request, "/experience/runs")
    run = Run.from_dict(data.get("run"), "run")
    _own(service, request, run.scope, "run.scope")
    given = data.get("given", ())
    return _learned(await run_in_threadpool(lambda: learn(memory, run, given=given)))


async def verdict(service: Service, request: Request) -> JSONResponse:
    memory = _memory(service)
    tenant = service.tenant(request)
    session_id = path_id(request, "session_id")
    data = await _body(service, request, "/sessions/{session_id}/verdict")
    scope = _scope(service, request, data.get("scope"))
    items = data.get("evidence")
    if not isinstance(items, list) or not items:
        raise ValidationError("evidence", "must be a non-empty array of the host's checks")
    evidence = tuple(Evidence.from_dict(item, f"evidence[{i}]") for i, item in enumerate(items))
    given = data.get("given", ())

    def judge() -> Learned:
        run = session_run(service, tenant, session_id, scope)
        return learn(memory, replace(run, evidence=(*run.evidence, *evidence)), given=given)

    return _learned(await run_in_threadpool(judge))


def routes(service: Service) -> list[Route]:
    def bound(handler: Any) -> Any:
        async def endpoint(request: Request) -> JSONResponse:
            result: JSONResponse = await handler(service, request)
            return result

        endpoint.__name__ = handler.__name__
        return endpoint

    return [
        Route("/experience/search", bound(search), methods=["POST"]),
        Route("/experience/block", bound(block), methods=["POST"]),
        Route("/experience/lessons", bound(lessons), methods=["GET"]),
        Route("/experience/lessons", bound(add_lessons), methods=["POST"]),
        Route("/experience/lessons/{lesson_id:path}", bound(lesson), methods=["GET"]),
        Route("/experience/lessons/{lesson_id:path}", bound(forget), methods=["DELETE"]),
        Route("/experience/lessons/{lesson_id:path}/outcome", bound(outcome), methods=["POST"]),
        Route("/experience/lessons/{lesson_id:path}/status", bound(set_status), methods=["POST"]),
        Route("/experience/users/{user:path}/lessons", bound(forget_user), methods=["DELETE"]),
        Route("/experience/runs", bound(submit_run), methods=["POST"]),
        Route("/sessions/{session_id:path}/verdict", bound(verdict), methods=["POST"]),
    ]
