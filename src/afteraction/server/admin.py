"""Key administration over HTTP, for a key with the ``admin`` scope, within its own tenant:

- ``POST /admin/keys`` ``{"scopes": ["read", "write"], "name"?, "project"?, "rate"?, "burst"?,
  "event_rate"?, "event_burst"?, "legacy_signatures"?, "require_signatures"?}`` → 201 ``{"key": {…}, "api_key": "afa_…",
  "signing_secret": "afs_…"}``: the only time the key's secret is shown.
- ``GET /admin/keys`` → ``{"keys": [{…}, …]}``, oldest first, never a secret or a hash.
- ``DELETE /admin/keys/{id}`` → ``{"key": {…}}`` revoked (again: unchanged); 404 for a key of
  another tenant, exactly as for one that does not exist.

An admin key bound to a project sees, creates and revokes keys of that project only. A ``null``
option is taken as absent, ``tenant`` and ``project`` too. The body may come gzip-compressed
(``ingest.read_content``).
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from afteraction.model._check import echoed
from afteraction.server.auth import KeyAuth, caller
from afteraction.server.common import Problem, json, path_id
from afteraction.server.ingest import parse_json, read_content
from afteraction.store.keys import Key, hash_token, mint

__all__ = ["routes"]

BODY_BYTES = 16 * 1024
_OPTIONS = ("name", "project", "rate", "burst", "event_rate", "event_burst", "legacy_signatures", "require_signatures")


async def _options(request: Request, admin: Key) -> dict[str, Any]:
    media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media != "application/json":
        raise Problem(415, "content-type", f"must be application/json, got {media or 'none'!r}")
    body = parse_json(await read_content(request, BODY_BYTES, admin.tenant), "body")
    if not isinstance(body, dict):
        raise Problem(400, "body", f"must be a JSON object, got {type(body).__name__}")
    unknown = sorted(set(body) - {"tenant", "scopes", *_OPTIONS})
    if unknown:
        raise Problem(400, echoed(str(unknown[0]), 64), f"is not an option of a key; use scopes, {', '.join(_OPTIONS)}")
    if body.get("tenant") not in (None, admin.tenant):  # null is absent, as for every option
        raise Problem(403, "tenant", f"an admin key of tenant {admin.tenant!r} manages that tenant's keys only")
    if admin.project is not None and body.get("project") not in (None, admin.project):
        raise Problem(403, "project", f"an admin key of project {admin.project!r} manages that project's keys only")
    if "scopes" not in body:
        raise Problem(400, "scopes", "is required: a list of read, write, admin")
    options = {name: body[name] for name in _OPTIONS if body.get(name) is not None}
    if admin.project is not None:
        options["project"] = admin.project
    return {"scopes": body["scopes"], **options}


def routes(auth: KeyAuth) -> list[Route]:
    async def create(request: Request) -> JSONResponse:
        admin = caller(request)
        options = await _options(request, admin)
        key, token = mint(admin.tenant, options.pop("scopes"), now=auth.now(), **options)
        await run_in_threadpool(auth.keys.add, key, hash_token(token))
        found = {"key": key.to_dict(), "api_key": token, "signing_secret": auth.secret.signing_secret(key.id)}
        return json(found, 201)

    async def listing(request: Request) -> JSONResponse:
        admin = caller(request)
        found = await run_in_threadpool(lambda: auth.keys.list(admin.tenant, project=admin.project))
        return json({"keys": [key.to_dict() for key in found]})

    async def revoke(request: Request) -> JSONResponse:
        admin = caller(request)
        key_id = path_id(request, "key_id")
        found = await run_in_threadpool(auth.keys.find, key_id)
        if found is None or found[0].tenant != admin.tenant or admin.project not in (None, found[0].project):
            raise Problem(404, "key_id", f"no key {key_id!r} in tenant {admin.tenant!r}")
        key = await run_in_threadpool(lambda: auth.keys.revoke(key_id, at=auth.now(), tenant=admin.tenant))
        return json({"key": key.to_dict()})

    return [
        Route("/admin/keys", create, methods=["POST"]),
        Route("/admin/keys", listing, methods=["GET"]),
        Route("/admin/keys/{key_id:path}", revoke, methods=["DELETE"]),
    ]
