"""Commands over the stored events: ``events prune`` (a retention window) and ``events delete``
(sessions removed, a deletion request). Each makes one ``EventStore`` call."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

import click

from afteraction.cli.common import _errors, _existing, _named, db_option, json_option, main
from afteraction.errors import AfterActionError, ConfigError, ValidationError
from afteraction.model._check import parse_time
from afteraction.store.base import check_names

if TYPE_CHECKING:
    from afteraction.store.events import EventStore

_AGE = re.compile(r"([0-9]{1,6})([dh])")


def cutoff(before: str | None, older_than: str | None, now: datetime) -> datetime:
    """The instant ``--before`` names, or ``now`` less ``--older-than`` (``30d``, ``12h``): exactly one."""
    if (before is None) == (older_than is None):
        neither = before is None
        rule = "give --before TIME or --older-than AGE (such as 30d)" if neither else "give one of the two, not both"
        raise ValidationError("--before", rule)
    if before is not None:
        return parse_time(before, "--before")
    assert older_than is not None
    found = _AGE.fullmatch(older_than.strip())
    if found is None:
        raise ValidationError(
            "--older-than",
            f"must be a whole number of days or hours of at most 6 digits, such as 30d or 12h, got {older_than!r}",
        )
    count, unit = int(found[1]), found[2]
    try:
        return now - (timedelta(days=count) if unit == "d" else timedelta(hours=count))
    except OverflowError:  # 800000d: before the year 1, the first a time can name
        raise ValidationError("--older-than", f"reaches back before the year 1, got {older_than!r}") from None


def _opened(db: str) -> EventStore:
    """The event store ``db`` names. Any error opening it (no store there, not afteraction's, newer than this code,
    unreachable) is a ConfigError: the command exits 2, keeping 1 for a deletion that fails."""
    from afteraction.store.events import open_events

    _existing(db)
    try:
        return open_events(db)
    except (ConfigError, ValidationError):
        raise
    except AfterActionError as exc:  # a StoreError: exits 2 as a ConfigError does, with the same message
        raise ConfigError(str(exc)) from exc


@main.group()
def events() -> None:
    """Delete stored sessions and their events (what `afteraction serve` ingested).

    `events prune` keeps a retention window: it deletes every session whose last event is
    older than a time. `events delete` deletes named sessions (a deletion request, a session
    recorded by mistake). A session goes with all its events and its share of the counts of
    /metrics; its child sessions stay. Each takes --db and --json."""


@events.command(name="prune")
@click.option("--before", default=None, metavar="TIME", help="Delete sessions that ended before this RFC 3339 time.")
@click.option(
    "--older-than", default=None, metavar="AGE", help="Delete sessions that ended more than AGE ago: 30d, 12h."
)
@click.option("--tenant", default=None, help="Only this tenant's sessions (default: every tenant's).")
@db_option
@json_option
@_errors
@_named(tenant="--tenant")
def events_prune(before: str | None, older_than: str | None, tenant: str | None, db: str, as_json: bool) -> None:
    """Delete every session whose last event is before --before (or older than --older-than),
    with all its events, of one tenant or (without --tenant) of every tenant, in one
    transaction. It does not ask first: run it from a schedule. An event of a deleted session
    sent again is stored again.

    Exits 0 (also when nothing was old enough), 2 on a bad time or --tenant or when the database
    cannot be opened, 1 when the deletion fails: in PostgreSQL the role needs DELETE on the event
    tables (the error names the GRANT)."""
    end = cutoff(before, older_than, datetime.now(timezone.utc))
    check_names(None, tenant)
    store = _opened(db)
    try:
        deleted = store.prune(tenant, end)
    finally:
        store.close()
    if as_json:
        click.echo(json.dumps({"deleted": deleted, "before": end.isoformat(), "tenant": tenant}, ensure_ascii=False))
    else:
        where = "every tenant" if tenant is None else f"tenant {tenant!r}"
        click.echo(f"deleted {deleted:,} session(s) of {where} that ended before {end.isoformat()}")


@events.command(name="delete")
@click.argument("session_ids", nargs=-1, required=True, metavar="SESSION_ID...")
@click.option("--tenant", required=True, help="The tenant whose sessions these are.")
@db_option
@json_option
@_errors
@_named(tenant="--tenant", ids="SESSION_ID")
def events_delete(session_ids: tuple[str, ...], tenant: str, db: str, as_json: bool) -> None:
    """Delete the sessions SESSION_ID... of --tenant, with all their events, in one transaction.
    Their child sessions stay. Exits 0 whether or not such sessions were stored (deleting again
    is no error; the output says how many went), 2 on a blank SESSION_ID or --tenant or when the
    database cannot be opened, 1 when the deletion fails (as `events prune`)."""
    check_names(None, tenant)
    store = _opened(db)
    try:
        deleted = store.delete_sessions(tenant, list(session_ids))
    finally:
        store.close()
    if as_json:
        click.echo(json.dumps({"deleted": deleted}))
    else:
        click.echo(f"deleted {deleted} of {len(set(session_ids))} session(s)")
