"""The ``afteraction`` command line. Each command makes one library call and maps errors."""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, TypeVar

import click

from afteraction.errors import AfterActionError, ConfigError, ValidationError
from afteraction.memory import Memory
from afteraction.model import Event, Experience, Scope
from afteraction.settings import DEFAULT_DATABASE
from afteraction.store.keys import ServerSecret

F = TypeVar("F", bound=Callable[..., Any])

db_option = click.option(
    "--db",
    "db",
    envvar="AFTERACTION_DATABASE_URL",
    default=DEFAULT_DATABASE,
    show_default=True,
    help="The store: an SQLite file path, ':memory:' or 'postgresql://…' (env: AFTERACTION_DATABASE_URL).",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
scope_option = click.option(
    "--scope",
    "scope_pairs",
    multiple=True,
    metavar="KEY=VALUE",
    help="A scope part (tenant, app, project required; team, agent, user optional). Repeat it.",
)
env_option = click.option("--env", "env_pairs", multiple=True, metavar="KEY=VALUE", help="The task's environment.")


def _pairs(values: Sequence[str], option: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        key, sep, item = value.partition("=")
        if not sep or not key.strip():
            raise ValidationError(option, f"expects KEY=VALUE, got {value!r}")
        out[key.strip()] = item
    return out


def _scope(values: Sequence[str]) -> Scope:
    return Scope.from_dict(_pairs(values, "--scope"), field="--scope")


def _errors(fn: F) -> F:
    """Map afteraction errors to a one-line message and an exit status (2: bad input or
    set-up; 1: anything else)."""
    return _mapped(fn, failure=1)


def _schema_errors(fn: F) -> F:
    """As ``_errors``, but every error exits 2 (a database that cannot be read, is not
    afteraction's or is newer than this code), so that 1 keeps meaning "migrations pending"."""
    return _mapped(fn, failure=2)


def _mapped(fn: F, *, failure: int) -> F:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except AfterActionError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2 if isinstance(exc, (ValidationError, ConfigError)) else failure)

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper  # type: ignore[return-value]


def _open(db: str) -> Memory:
    return Memory.open(db)


secret_file_option = click.option(
    "--secret-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="A file holding the server secret (else AFTERACTION_SERVER_SECRET_FILE, else AFTERACTION_SERVER_SECRET).",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="afteraction")
def main() -> None:
    """afteraction: verified experience for AI agents."""


@main.command()
@db_option
@_errors
def demo(db: str) -> None:
    """Run the learning loop offline: a failed-then-fixed run teaches the next one.

    The demo database (default .afteraction/demo.db when --db is not given) is recreated on
    each run so that the output is the same every time."""
    from afteraction.demo import demo_memory, run_demo

    path = Path(".afteraction/demo.db" if db == DEFAULT_DATABASE else db)
    if db != ":memory:" and path.exists():
        Memory.open(path).close()  # refuses a file that is not an afteraction database
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    with demo_memory(":memory:" if db == ":memory:" else str(path)) as memory:
        run_demo(memory, click.echo, db=None if db == ":memory:" else str(path))


@main.command()
@click.argument("queries", nargs=-1, required=True)
@scope_option
@env_option
@click.option("-k", "k", default=5, show_default=True, help="Hits per query.")
@db_option
@json_option
@_errors
def search(queries: tuple[str, ...], scope_pairs: tuple[str, ...], env_pairs: tuple[str, ...], k: int, db: str,
           as_json: bool) -> None:  # fmt: skip
    """Search lessons for one or more QUERIES (each in its own result)."""
    scope = _scope(scope_pairs)
    env = _pairs(env_pairs, "--env")
    with _open(db) as memory:
        results = [(q, memory.search(q, scope=scope, k=k, env=env)) for q in queries]
    if as_json:
        payload = [
            {
                "query": q,
                "hits": [{"id": h.id, "task_id": h.experience.task_id, "score": round(h.score, 6)} for h in hits],
            }
            for q, hits in results
        ]
        click.echo(json.dumps(payload, ensure_ascii=False))
        return
    for q, hits in results:
        click.echo(f"{q}")
        if not hits:
            click.echo("  (no lesson qualifies)")
        for h in hits:
            click.echo(f"  {h.score:.3f}  {h.id}  {h.experience.task}")


@main.command()
@click.argument("task")
@scope_option
@env_option
@click.option("--layout", type=click.Choice(["compact", "verbose"]), default=None, help="Block layout.")
@click.option("--max-records", type=int, default=None, help="At most this many records (default 8).")
@click.option("--max-bytes", type=int, default=None, help="At most this many bytes (default 16384).")
@click.option("--max-tokens", type=int, default=None, help="At most this many tokens (estimated).")
@db_option
@_errors
def block(task: str, scope_pairs: tuple[str, ...], env_pairs: tuple[str, ...], layout: str | None,
          max_records: int | None, max_bytes: int | None, max_tokens: int | None, db: str) -> None:  # fmt: skip
    """Print the reference block for TASK exactly as an agent receives it (nothing when no
    lesson qualifies)."""
    scope = _scope(scope_pairs)
    with _open(db) as memory:
        text = memory.reference_block(
            task,
            scope=scope,
            env=_pairs(env_pairs, "--env"),
            layout="verbose" if layout == "verbose" else "compact" if layout else None,
            max_records=max_records,
            max_bytes=max_bytes,
            max_tokens=max_tokens,
        )
    click.echo(text, nl=False)


@main.command()
@scope_option
@click.option("--limit", default=50, show_default=True, help="At most this many lessons.")
@click.option("--status", default=None, help="Only lessons with this status.")
@db_option
@json_option
@_errors
def lessons(scope_pairs: tuple[str, ...], limit: int, status: str | None, db: str, as_json: bool) -> None:
    """List stored lessons, newest first, with whether each may be injected and why not."""
    scope = _scope(scope_pairs)
    with _open(db) as memory:
        found = memory.lessons(scope=scope, limit=limit, status=status)
    if as_json:
        click.echo(json.dumps([lesson.to_dict() for lesson in found], ensure_ascii=False))
        return
    for lesson in found:
        e = lesson.experience
        state = "eligible" if lesson.eligible else f"not eligible: {lesson.reason}"
        click.echo(f"{e.created_at:%Y-%m-%d %H:%M}  {e.status.label:<11} {e.confidence:.2f}  {e.id}  ({state})")
        click.echo(f"    {e.task}")
        click.echo(f"    {e.lesson}")


def _lines(handle: IO[str]) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(handle, start=1):
        if line.strip():
            yield number, line


@main.command(name="import")
@click.argument("file", type=click.File("r", encoding="utf-8"))
@db_option
@json_option
@_errors
def import_(file: IO[str], db: str, as_json: bool) -> None:
    """Import lessons from FILE (JSONL as `export` writes it; - for stdin), keeping their ids.

    Every line is checked first: if any is bad, nothing is imported."""
    with _open(db) as memory:
        now = memory.now()
        records: list[Experience] = []
        problems: list[str] = []
        for number, line in _lines(file):
            try:
                records.append(Experience.from_dict(json.loads(line), now=now))
            except json.JSONDecodeError as exc:
                problems.append(f"line {number}: not JSON ({exc.msg})")
            except ValidationError as exc:
                problems.append(f"line {number}: {exc}")
        if problems:
            raise ValidationError(file.name, "nothing imported:\n  " + "\n  ".join(problems[:20]))
        added = memory.add_many(records)
    if as_json:
        click.echo(json.dumps({"read": len(records), "added": added, "existing": len(records) - added}))
    else:
        click.echo(f"read {len(records)}, added {added}, already present {len(records) - added}")


@main.command()
@click.argument("file", type=click.File("w", encoding="utf-8"), default="-")
@click.option("--tenant", default=None, help="Only this tenant's lessons.")
@db_option
@_errors
def export(file: IO[str], tenant: str | None, db: str) -> None:
    """Export lessons as JSONL to FILE (default: stdout)."""
    with _open(db) as memory:
        for experience in memory.export(tenant):
            file.write(json.dumps(experience.to_dict(), ensure_ascii=False) + "\n")


@main.command()
@click.argument("file", type=click.File("r", encoding="utf-8"))
@db_option
@json_option
@_errors
def validate(file: IO[str], db: str, as_json: bool) -> None:
    """Validate an events FILE (JSONL, or one JSON array) against AEP 0.2.0.

    Exits 1 when any event is invalid. (--db is accepted for symmetry; nothing is stored.)"""
    text = file.read()
    stripped = text.lstrip()
    items: list[tuple[int, Any, str | None]] = []
    if stripped.startswith("["):
        try:
            items = [(n, item, None) for n, item in enumerate(json.loads(stripped), start=1)]
        except json.JSONDecodeError as exc:
            raise ValidationError(file.name, f"not JSON ({exc.msg})") from None
    else:
        for number, line in _lines(io.StringIO(text)):
            try:
                items.append((number, json.loads(line), None))
            except json.JSONDecodeError as exc:
                items.append((number, None, f"not JSON ({exc.msg})"))
    results: list[dict[str, Any]] = []
    for number, item, problem in items:
        if problem is not None:
            results.append({"line": number, "valid": False, "field": None, "error": problem})
            continue
        try:
            Event.from_dict(item)
            results.append({"line": number, "valid": True})
        except ValidationError as exc:
            results.append({"line": number, "valid": False, "field": exc.field, "error": exc.rule})
    bad = [r for r in results if not r["valid"]]
    if as_json:
        click.echo(json.dumps({"events": len(results), "invalid": len(bad), "results": results}))
    else:
        for r in bad:
            where = f"{r['field']}: " if r["field"] else ""
            click.echo(f"line {r['line']}: {where}{r['error']}")
        click.echo(f"{len(results)} events, {len(results) - len(bad)} valid, {len(bad)} invalid")
    if bad:
        sys.exit(1)


@main.group()
def db() -> None:
    """Inspect and upgrade the store's schema (SQLite or PostgreSQL).

    `db status` only reads: it exits 0 when the schema is up to date, 1 when migrations are
    pending, 2 when the database cannot be read, is not afteraction's or is newer than this
    afteraction. `db upgrade` applies the pending migrations, forward-only; a second run applies
    nothing. Both take --db and --json."""


@db.command(name="status")
@db_option
@json_option
@_schema_errors
def db_status(db: str, as_json: bool) -> None:
    """Show the schema version of the database, the version this afteraction expects, and the
    migrations applied and pending. Reads only: nothing is created or migrated.

    Exits 0 when up to date, 1 when migrations are pending (run `afteraction db upgrade`), 2
    when the database cannot be read, is not afteraction's, or is newer than this afteraction."""
    from afteraction.store.admin import status

    found = status(db)
    if as_json:
        click.echo(json.dumps(found.to_dict(), ensure_ascii=False))
    elif found.backend == "memory":
        click.echo(":memory: keeps no schema (nothing outlives the process): nothing to migrate")
    else:
        state = f"version {found.version}" if found.ours else "none yet (a blank database)"
        click.echo(f"database: {found.database} ({found.backend})")
        click.echo(f"schema:   {state}; this afteraction expects version {found.expected}")
        for m in found.applied:
            click.echo(f"  applied  {m.name}  {m.applied_at.isoformat(timespec='seconds')}")
        for name in found.pending:
            click.echo(f"  pending  {name}")
        click.echo("up to date" if found.up_to_date else "migrations pending: run `afteraction db upgrade`")
    if not found.up_to_date:
        sys.exit(1)


@db.command(name="upgrade")
@db_option
@json_option
@_schema_errors
def db_upgrade(db: str, as_json: bool) -> None:
    """Apply the pending migrations (forward-only) and print their names; a database already up
    to date is left as it is, except that PostgreSQL gets the vector indexes a role that is not
    the tables' owner could not create (run it as the owner). Opening a store with any other
    command migrates it too.

    Exits 0 on success, 2 when the database cannot be opened, is not afteraction's, or is newer
    than this afteraction."""
    from afteraction.store.admin import upgrade

    applied = upgrade(db)
    if as_json:
        click.echo(json.dumps({"applied": applied}))
    elif db == ":memory:":
        click.echo(":memory: keeps no schema: nothing to apply")
    else:
        for name in applied:
            click.echo(f"applied  {name}")
        click.echo(f"{len(applied)} migration(s) applied" if applied else "already up to date: nothing applied")


@main.command()
@db_option
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option("--port", default=8787, show_default=True, type=click.IntRange(0, 65535), help="The port.")
@click.option("--dev", is_flag=True, help="Development mode: tenant 'dev', no API keys, loopback only.")
@secret_file_option
@_errors
def serve(db: str, host: str, port: int, dev: bool, secret_file: str | None) -> None:
    """Run the HTTP service (the `server` extra): AEP-compatible ingest and session reads.

    An AEP SDK pointed at http://HOST:PORT sends events unchanged (POST /events, POST
    /events/batch); GET /sessions, /sessions/{id}/events and /sessions/{id}/tree read them back.

    Every request needs an API key (`Authorization: Bearer <key>`, from `afteraction keys
    create`), and a server secret is required (AFTERACTION_SERVER_SECRET, or a file:
    --secret-file / AFTERACTION_SERVER_SECRET_FILE). With --dev there are no keys: every request
    is tenant 'dev', and only a loopback address is allowed."""
    from afteraction.server import is_loopback
    from afteraction.server import serve as run

    if dev and not is_loopback(host):
        raise ConfigError(f"--dev runs without API keys, so only on a loopback address; got --host {host!r}")
    secret = None if dev else ServerSecret.require(os.environ, secret_file)
    mode = "development mode: tenant 'dev', no API keys" if dev else "API keys required"
    click.echo(f"afteraction: serving {db} on http://{host}:{port} ({mode})")
    run(db, host=host, port=port, dev=dev, secret=secret)


@main.group()
def keys() -> None:
    """Create, list and revoke API keys for `afteraction serve` (in the --db database).

    A key is bound to a tenant (and optionally a project) and has scopes: read (GET routes),
    write (ingest) and admin (/admin routes). Only a hash of each key is stored: `keys create`
    prints it once. Its signing secret (for HMAC-signed events) derives from the server secret,
    so `keys create` needs the same AFTERACTION_SERVER_SECRET (or file) as the server."""


@keys.command(name="create")
@click.option("--tenant", required=True, help="The tenant every request with this key acts for.")
@click.option("--project", default=None, help="Bind the key to one project of the tenant.")
@click.option("--scope", "scopes", required=True, metavar="SCOPES", help="Comma-separated: read, write, admin.")
@click.option("--rate", default=None, metavar="N/s", help="At most N requests per second (per server replica).")
@click.option("--burst", type=int, default=None, help="Requests allowed at once above the rate (default: N).")
@click.option("--legacy-signatures", is_flag=True, help="Also accept AEP canonical v1 (envelope-only) signatures.")
@click.option("--require-signatures", is_flag=True, help="Refuse events that carry no signature.")
@click.option("--name", default=None, help="A label to recognise the key by.")
@secret_file_option
@db_option
@json_option
@_errors
def keys_create(tenant: str, project: str | None, scopes: str, rate: str | None, burst: int | None,
                legacy_signatures: bool, require_signatures: bool, name: str | None, secret_file: str | None,
                db: str, as_json: bool) -> None:  # fmt: skip
    """Create a key and print it, and its signing secret, once."""
    from datetime import datetime, timezone

    from afteraction.store import open_store
    from afteraction.store.keys import hash_token, mint, open_keys, parse_rate, parse_scopes

    secret = ServerSecret.require(os.environ, secret_file)
    key, token = mint(
        tenant, parse_scopes(scopes, "--scope"), now=datetime.now(timezone.utc), project=project, name=name,
        rate=None if rate is None else parse_rate(rate), burst=burst,
        legacy_signatures=legacy_signatures, require_signatures=require_signatures,
    )  # fmt: skip
    store = open_store(db)
    try:
        open_keys(store).add(key, hash_token(token))
    finally:
        store.close()
    signing = secret.signing_secret(key.id)
    if as_json:
        click.echo(json.dumps({"key": key.to_dict(), "api_key": token, "signing_secret": signing}))
        return
    click.echo(f"created {key.id} for tenant {key.tenant!r}" + (f", project {key.project!r}" if key.project else ""))
    click.echo(f"api key (shown once; keep it secret): {token}")
    click.echo(f"signing secret (for signed events):  {signing}")


@keys.command(name="list")
@click.option("--tenant", default=None, help="Only this tenant's keys (default: every tenant's).")
@db_option
@json_option
@_errors
def keys_list(tenant: str | None, db: str, as_json: bool) -> None:
    """List keys, oldest first: ids, scopes, limits and state; never a secret."""
    from afteraction.store import open_store
    from afteraction.store.keys import open_keys

    store = open_store(db)
    try:
        found = open_keys(store).list(tenant)
    finally:
        store.close()
    if as_json:
        click.echo(json.dumps([key.to_dict() for key in found], ensure_ascii=False))
        return
    for key in found:
        data = key.to_dict()
        rate = f"{key.rate:g}/s burst {key.burst}" if key.rate else "no rate limit"
        state = f"revoked {data['revoked_at']}" if key.revoked_at else "active"
        where = key.tenant + (f"/{key.project}" if key.project else "")
        click.echo(f"{key.id}  {where}  {','.join(data['scopes'])}  {rate}  {state}  {key.name or ''}".rstrip())


@keys.command(name="revoke")
@click.argument("key_id")
@click.option("--tenant", default=None, help="Refuse unless the key belongs to this tenant.")
@db_option
@_errors
def keys_revoke(key_id: str, tenant: str | None, db: str) -> None:
    """Revoke the key KEY_ID: from now on it authenticates nothing (it stays listed)."""
    from datetime import datetime, timezone

    from afteraction.store import open_store
    from afteraction.store.keys import open_keys

    store = open_store(db)
    try:
        key = open_keys(store).revoke(key_id, at=datetime.now(timezone.utc), tenant=tenant)
    finally:
        store.close()
    click.echo(f"revoked {key.id} (tenant {key.tenant!r})")
