"""Commands over lessons and events: demo, search, block, outcome, set-status, forget, lessons, import, export,
validate."""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import click

from afteraction.cli.common import (
    _errors,
    _open,
    _pairs,
    _scope,
    db_option,
    env_option,
    json_option,
    main,
    scope_option,
    shown,
)
from afteraction.errors import ConfigError, ValidationError
from afteraction.memory import Memory
from afteraction.model import Event, Experience, Scope

DEMO_DATABASE = ".afteraction/demo.db"


@main.command()
@click.option(  # not AFTERACTION_DATABASE_URL: the demo recreates its file, so it never takes the user's store
    "--db", "db", default=DEMO_DATABASE, show_default=True, help="The demo's own SQLite file, or ':memory:'."
)
@_errors
def demo(db: str) -> None:
    """Run the learning loop offline: a failed-then-fixed run teaches the next one.

    The demo database is recreated on each run so that the output is the same every time; a
    file that holds lessons other than the demo's is refused, never deleted."""
    from afteraction.demo import SCOPE, demo_memory, run_demo

    path = Path(db)
    if db != ":memory:" and path.exists():
        with Memory.open(path, embedder=None) as existing:  # refuses a file that is not an afteraction database
            if any(e.scope.tenant != SCOPE.tenant for e in existing.export()):
                raise ConfigError(
                    f"--db: {db!r} holds lessons that are not the demo's; the demo recreates its database on "
                    "each run, so give it a file of its own"
                )
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
    with _open(db, search=True) as memory:
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
        click.echo(shown(q))
        if not hits:
            click.echo("  (no lesson qualifies)")
        for h in hits:
            click.echo(f"  {h.score:.3f}  {h.id}  {shown(h.experience.task)}")


@main.command()
@click.argument("task")
@scope_option
@env_option
@click.option("--layout", type=click.Choice(["compact", "verbose"]), default=None, help="Block layout.")
@click.option("--max-records", type=int, default=None, help="At most this many records (default 8).")
@click.option("--max-bytes", type=int, default=None, help="At most this many bytes (default 16384).")
@click.option("--max-tokens", type=int, default=None, help="At most this many tokens (estimated).")
@db_option
@json_option
@_errors
def block(task: str, scope_pairs: tuple[str, ...], env_pairs: tuple[str, ...], layout: str | None,
          max_records: int | None, max_bytes: int | None, max_tokens: int | None, db: str,
          as_json: bool) -> None:  # fmt: skip
    """Print the reference block for TASK exactly as an agent receives it (nothing when no
    lesson qualifies). --json: {"block", "lessons": [the ids in it]}, the ids to report an
    outcome for (`afteraction outcome`)."""
    scope = _scope(scope_pairs)
    with _open(db, search=True) as memory:
        text, shown = memory.block_with_hits(
            task,
            scope=scope,
            env=_pairs(env_pairs, "--env"),
            layout="verbose" if layout == "verbose" else "compact" if layout else None,
            max_records=max_records,
            max_bytes=max_bytes,
            max_tokens=max_tokens,
        )
    if as_json:
        click.echo(json.dumps({"block": text, "lessons": [hit.id for hit in shown]}, ensure_ascii=False))
    else:
        click.echo(text, nl=False)


@main.command()
@click.argument("lesson_id")
@click.option("--success/--failure", "success", required=True, help="Did the run that was given the lesson pass?")
@click.option("--key", default=None, help="The outcome's own id (e.g. run:<id>): the same key counts once.")
@click.option("--task", default=None, help="A success's request in its own words: the lesson is found by it.")
@scope_option
@db_option
@json_option
@_errors
def outcome(lesson_id: str, success: bool, key: str | None, task: str | None, scope_pairs: tuple[str, ...], db: str,
            as_json: bool) -> None:  # fmt: skip
    """Record one reuse outcome for LESSON_ID: confidence and status follow (three supports and
    no contradiction make it Reinforced; confidence under 0.5 with a contradiction, Contested)."""
    scope = _scope(scope_pairs)
    with _open(db) as memory:
        updated = memory.record_outcome(lesson_id, scope=scope, success=success, key=key, task=task)
    if as_json:
        click.echo(json.dumps(updated.to_dict(), ensure_ascii=False))
        return
    click.echo(
        f"{updated.id}  {updated.status.label}  confidence {updated.confidence:.2f}  "
        f"(supporting {updated.supporting}, contradicting {updated.contradicting})"
    )


@main.command("set-status")
@click.argument("lesson_id")
@click.argument("status", type=click.Choice(["revoked", "superseded", "stale", "validated"]))
@click.option("--reason", default="", help="Why: kept with the lesson, shown by `afteraction lessons`.")
@scope_option
@db_option
@json_option
@_errors
def set_status(lesson_id: str, status: str, reason: str, scope_pairs: tuple[str, ...], db: str,
               as_json: bool) -> None:  # fmt: skip
    """A person's decision about LESSON_ID: revoked (wrong or harmful), superseded (a newer lesson
    replaces it) or stale (may no longer hold; a verified reuse revives it) are never injected
    again; validated reinstates it (its status follows its evidence). Lessons of failed runs
    (quarantined) cannot be reinstated."""
    scope = _scope(scope_pairs)
    with _open(db) as memory:
        updated = memory.set_status(lesson_id, status, scope=scope, reason=reason)
    if as_json:
        click.echo(json.dumps(updated.to_dict(), ensure_ascii=False))
        return
    why = f"  ({updated.status_reason})" if updated.status_reason else ""
    click.echo(f"{updated.id}  {updated.status.label}  confidence {updated.confidence:.2f}{why}")


@main.command()
@click.argument("lesson_id")
@scope_option
@db_option
@json_option
@_errors
def forget(lesson_id: str, scope_pairs: tuple[str, ...], db: str, as_json: bool) -> None:
    """Delete LESSON_ID for good, with its search rows and vectors (set-status revoked keeps it
    stored). Exits 0 whether or not the scope saw such a lesson: forgetting again is no error;
    the output says which."""
    scope = _scope(scope_pairs)
    with _open(db) as memory:
        deleted = memory.forget(lesson_id, scope=scope)
    if as_json:
        click.echo(json.dumps({"deleted": deleted}))
        return
    click.echo(f"{lesson_id}  forgotten" if deleted else f"{lesson_id}  not found in this scope: nothing deleted")


@main.command("forget-user")
@click.argument("user")
@click.option("--tenant", required=True, help="The tenant whose lessons of USER go.")
@db_option
@json_option
@_errors
def forget_user(user: str, tenant: str, db: str, as_json: bool) -> None:
    """Delete every lesson stored for USER in a tenant, in any app, project, team or agent, with
    their search rows and vectors: a request to erase a person's data. Lessons shared by all users
    (stored with no user) stay. Prints the ids deleted; none is no error (erasing again)."""
    with _open(db) as memory:
        gone = memory.forget_user(user, tenant=tenant)
    if as_json:
        click.echo(json.dumps({"deleted": len(gone), "ids": gone}))
        return
    for id in gone:
        click.echo(f"{id}  forgotten")
    click.echo(f"{len(gone)} lesson{'' if len(gone) == 1 else 's'} of {user!r} in tenant {tenant!r} forgotten")


@main.command()
@scope_option
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1), help="At most this many lessons.")
@click.option("--offset", default=0, show_default=True, type=click.IntRange(0), help="Skip this many first.")
@click.option("--status", default=None, help="Only lessons with this status.")
@db_option
@json_option
@_errors
def lessons(scope_pairs: tuple[str, ...], limit: int, offset: int, status: str | None, db: str,
            as_json: bool) -> None:  # fmt: skip
    """List stored lessons, newest first, with whether each may be injected and why not."""
    scope = _scope(scope_pairs)
    with _open(db) as memory:
        found = memory.lessons(scope=scope, limit=limit + 1, offset=offset, status=status)
    more, found = len(found) > limit, found[:limit]
    if as_json:
        click.echo(json.dumps([lesson.to_dict() for lesson in found], ensure_ascii=False))
        return
    if not found and offset:
        click.echo(f"(no lessons past the first {offset})")
    elif not found:
        narrower = [part for part in Scope.OPTIONAL if getattr(scope, part) is None]
        parts = " or ".join([", ".join(narrower[:-1]), narrower[-1]] if len(narrower) > 1 else narrower)
        hint = f"; one recorded for a {parts} is listed when --scope names it" if narrower else ""
        click.echo(f"(no lessons in this scope{hint})")
    for lesson in found:
        e = lesson.experience
        state = "eligible" if lesson.eligible else f"not eligible: {lesson.reason}"
        click.echo(f"{e.created_at:%Y-%m-%d %H:%M}  {e.status.label:<11} {e.confidence:.2f}  {e.id}  ({state})")
        click.echo(f"    {shown(e.task)}")
        click.echo(f"    {shown(e.lesson)}")
    if more:
        click.echo(f"(more: --offset {offset + limit})")


#: Lessons an import writes in one transaction.
IMPORT_BATCH = 1_000

#: Files are read keeping bytes that are not UTF-8 as lone surrogates, so that such a line is named, not a traceback.
_READ = click.File("r", encoding="utf-8", errors="surrogateescape")


def _lines(handle: IO[str]) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(handle, start=1):
        if line.strip():
            yield number, line


def _not_utf8(text: str) -> bool:
    """Whether text read through ``_READ`` held bytes that are not UTF-8."""
    return not text.isascii() and any("\udc80" <= char <= "\udcff" for char in text)


@main.command(name="import")
@click.argument("file", type=_READ)
@db_option
@json_option
@_errors
def import_(file: IO[str], db: str, as_json: bool) -> None:
    """Import lessons from FILE (JSONL as `export` writes it; - for stdin), keeping their ids.

    Every line is checked first: if any is bad, nothing is imported. The lessons are then written
    in batches of 1,000, so that other processes using the store are not held up; an import cut
    short (a crash) is completed by running it again. The store is created if it is not there yet."""
    with _open(db, create=True) as memory:
        now = memory.now()
        records: list[Experience] = []
        problems: list[str] = []
        first: dict[tuple[str, str], int] = {}  # (tenant, id) → the line that holds it
        for number, line in _lines(file):
            if _not_utf8(line):
                problems.append(f"line {number}: is not UTF-8 text")
                continue
            try:
                record = Experience.from_dict(json.loads(line), now=now, strict=True)
            except json.JSONDecodeError as exc:
                problems.append(f"line {number}: not JSON ({exc.msg})")
                continue
            except ValidationError as exc:
                problems.append(f"line {number}: {exc}")
                continue
            seen = first.setdefault((record.scope.tenant, record.id), number)
            if seen != number:  # ids are unique in a tenant: the second would be dropped unseen
                problems.append(f"line {number}: id {record.id!r} of tenant {record.scope.tenant!r} is on line {seen}")
            records.append(record)
        if problems:
            raise ValidationError(file.name, "nothing imported:\n  " + "\n  ".join(problems[:20]))
        # written in batches, each its own transaction: another process's runs wait at most one batch for the
        # write lock (one transaction of 150,000 lessons held it ~12 s; a run's finish gives up after 5)
        added = sum(memory.add_many(records[at : at + IMPORT_BATCH]) for at in range(0, len(records), IMPORT_BATCH))
    if as_json:
        click.echo(json.dumps({"read": len(records), "added": added, "existing": len(records) - added}))
    else:
        kept = len(records) - added
        note = " (a lesson of that id was in the tenant already: the stored one is kept)" if kept else ""
        click.echo(f"read {len(records)}, added {added}, already present {kept}{note}")


@main.command()
@click.argument("file", type=click.Path(dir_okay=False, writable=True, allow_dash=True), default="-")
@click.option("--tenant", default=None, help="Only this tenant's lessons.")
@db_option
@_errors
def export(file: str, tenant: str | None, db: str) -> None:
    """Export lessons as JSONL to FILE (default: stdout).

    FILE is replaced only once the whole export is written (empty when there is nothing to
    export); a failed export leaves it as it was."""
    with _open(db) as memory:
        lines = (json.dumps(experience.to_dict(), ensure_ascii=False) + "\n" for experience in memory.export(tenant))
        if file == "-":
            for line in lines:
                click.echo(line, nl=False)
            return
        target = Path(file)
        partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
        try:
            with partial.open("w", encoding="utf-8") as out:
                out.writelines(lines)
            os.replace(partial, target)
        except OSError as exc:  # a folder that is not there, a full disk, no permission: say which, no traceback
            raise ConfigError(f"FILE: cannot write {target}: {exc.strerror or exc}") from None
        finally:
            partial.unlink(missing_ok=True)


@main.command()
@click.argument("file", type=_READ)
@db_option
@json_option
@_errors
def validate(file: IO[str], db: str, as_json: bool) -> None:
    """Validate an events FILE (JSONL, or one JSON array) against AEP 0.2.0.

    Exits 1 when any event is invalid. (--db is accepted for symmetry; nothing is stored.)"""
    text = file.read()
    stripped = text.lstrip()
    items: list[tuple[int, Any, str | None]] = []
    unit = "item" if stripped.startswith("[") else "line"  # a JSON array's events are counted, not its lines
    if stripped.startswith("["):
        if _not_utf8(stripped):
            raise ValidationError(file.name, "is not UTF-8 text")
        try:
            items = [(n, item, None) for n, item in enumerate(json.loads(stripped), start=1)]
        except json.JSONDecodeError as exc:
            raise ValidationError(file.name, f"not JSON ({exc.msg})") from None
    else:
        for number, line in _lines(io.StringIO(text)):
            if _not_utf8(line):
                items.append((number, None, "is not UTF-8 text"))
                continue
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
            click.echo(shown(f"{unit} {r['line']}: {where}{r['error']}"))
        click.echo(f"{len(results)} events, {len(results) - len(bad)} valid, {len(bad)} invalid")
    if bad:
        sys.exit(1)
