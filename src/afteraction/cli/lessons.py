"""Commands over stored lessons: search, block, outcome, set-status, forget, forget-user, lessons."""

from __future__ import annotations

import json

import click

from afteraction.cli.common import (
    _errors,
    _named,
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
from afteraction.model import Scope

#: The largest page `lessons` lists (`export` writes every lesson), and the most it skips: bounds that every store
#: takes (an SQLite or PostgreSQL integer is 64 bits; the store is asked for one lesson more than the page).
MAX_LIMIT = 10_000
MAX_OFFSET = 1_000_000_000


@main.command()
@click.argument("queries", nargs=-1, required=True)
@scope_option
@env_option
@click.option("-k", "k", default=5, show_default=True, help="Hits per query.")
@db_option
@json_option
@_errors
@_named(k="-k", env="--env")
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
            click.echo(f"  {h.score:.3f}  {shown(h.id)}  {shown(h.experience.task)}")


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
@_named(env="--env", max_records="--max-records", max_bytes="--max-bytes", max_tokens="--max-tokens")
def block(task: str, scope_pairs: tuple[str, ...], env_pairs: tuple[str, ...], layout: str | None,
          max_records: int | None, max_bytes: int | None, max_tokens: int | None, db: str,
          as_json: bool) -> None:  # fmt: skip
    """Print the reference block for TASK exactly as an agent receives it (nothing when no
    lesson qualifies). --json: {"block", "lessons": [the ids in it]}, the ids to report an
    outcome for (`afteraction outcome`)."""
    scope = _scope(scope_pairs)
    with _open(db, search=True) as memory:
        text, given = memory.block_with_hits(
            task,
            scope=scope,
            env=_pairs(env_pairs, "--env"),
            layout="verbose" if layout == "verbose" else "compact" if layout else None,
            max_records=max_records,
            max_bytes=max_bytes,
            max_tokens=max_tokens,
        )
    if as_json:
        click.echo(json.dumps({"block": text, "lessons": [hit.id for hit in given]}, ensure_ascii=False))
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
@_named(id="LESSON_ID", key="--key", task="--task")
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
        f"{shown(updated.id)}  {updated.status.label}  confidence {updated.confidence:.2f}  "
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
@_named(id="LESSON_ID", reason="--reason")
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
    why = f"  ({shown(updated.status_reason)})" if updated.status_reason else ""
    click.echo(f"{shown(updated.id)}  {updated.status.label}  confidence {updated.confidence:.2f}{why}")


@main.command()
@click.argument("lesson_id")
@scope_option
@db_option
@json_option
@_errors
@_named(id="LESSON_ID")
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
    said = shown(lesson_id)
    click.echo(f"{said}  forgotten" if deleted else f"{said}  not found in this scope: nothing deleted")


@main.command("forget-user")
@click.argument("user")
@click.option("--tenant", required=True, help="The tenant whose lessons of USER go.")
@db_option
@json_option
@_errors
@_named(user="USER", tenant="--tenant")
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
        click.echo(f"{shown(id)}  forgotten")
    click.echo(f"{len(gone)} lesson{'' if len(gone) == 1 else 's'} of {user!r} in tenant {tenant!r} forgotten")


@main.command()
@scope_option
@click.option(
    "--limit", default=50, show_default=True, type=click.IntRange(1, MAX_LIMIT), help="At most this many lessons."
)
@click.option(
    "--offset", default=0, show_default=True, type=click.IntRange(0, MAX_OFFSET), help="Skip this many first."
)
@click.option("--status", default=None, help="Only lessons with this status.")
@db_option
@json_option
@_errors
@_named(status="--status")
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
        state = "eligible" if lesson.eligible else f"not eligible: {lesson.reason}"  # a person's reason, as stored
        click.echo(
            f"{e.created_at:%Y-%m-%d %H:%M}  {e.status.label:<11} {e.confidence:.2f}  {shown(e.id)}  ({shown(state)})"
        )
        click.echo(f"    {shown(e.task)}")
        click.echo(f"    {shown(e.lesson)}")
    if more:
        click.echo(f"(more: --offset {offset + limit})")
