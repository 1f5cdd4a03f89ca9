"""Commands that look after the database: ``db status``, ``db upgrade``, ``db index-tenants``, ``db vectors``,
``db drop-vectors`` and ``reindex``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from afteraction.cli.common import (
    _errors,
    _existing,
    _named,
    _open,
    _schema_errors,
    db_option,
    json_option,
    main,
    shown,
)
from afteraction.errors import ConfigError


@main.group()
def db() -> None:
    """Inspect and upgrade the store's schema (SQLite or PostgreSQL).

    `db status` only reads: it exits 0 when the schema is up to date, 1 when migrations are
    pending, 2 when the database cannot be read, is not afteraction's or is newer than this
    afteraction. `db upgrade` applies the pending migrations, forward-only; a second run applies
    nothing. `db index-tenants` gives the largest tenants of a PostgreSQL store their own vector
    index. `db vectors` lists the embedding models with vectors stored, `db drop-vectors` deletes
    a superseded model's. Each takes --db and --json."""


@db.command(name="status")
@db_option
@json_option
@_schema_errors
def db_status(db: str, as_json: bool) -> None:
    """Show the schema version of the database, the version this afteraction expects, and the
    migrations applied and pending. Reads only: nothing is created or migrated.

    Exits 0 when up to date, 1 when migrations are pending (run `afteraction db upgrade`), 2
    when the database cannot be read, is not afteraction's, or is newer than this afteraction.

    An SQLite store in a directory this user cannot write is read only while its -wal and -shm
    files are beside it (SQLite needs them to read a store in WAL mode, and creates them if they
    are missing): a store closed by its last user has none, and cannot be read there; copy it
    somewhere writable, or run the command as a user who can write the directory."""
    from afteraction.store.admin import status

    found = status(db)
    if as_json:
        click.echo(json.dumps(found.to_dict(), ensure_ascii=False))
    elif found.backend == "memory":
        click.echo(":memory: keeps no schema (nothing outlives the process): nothing to migrate")
    else:
        blank = (
            "no file there yet"
            if found.backend == "sqlite" and not Path(found.database).exists()
            else "a blank database"
        )
        state = f"version {found.version}" if found.ours else f"none yet ({blank})"
        click.echo(f"database: {shown(found.database)} ({found.backend})")
        click.echo(f"schema:   {state}; this afteraction expects version {found.expected}")
        for m in found.applied:
            click.echo(f"  applied  {m.name}  {m.applied_at.isoformat(timespec='seconds')}")
        for name in found.pending:
            click.echo(f"  pending  {name}")
        if found.up_to_date:
            click.echo("up to date")
        elif found.backend == "sqlite" and not Path(found.database).exists():  # a mistyped path: say what upgrade does
            click.echo("no store there: `afteraction db upgrade` would create a new one at this path; check it first")
        else:
            click.echo("migrations pending: run `afteraction db upgrade`")
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


@db.command(name="index-tenants")
@db_option
@click.option(
    "--min-vectors",
    default=None,
    type=click.IntRange(1),
    help="Vectors of a model a tenant holds at least to get its own index.  [default: 100,000]",
)
@json_option
@_schema_errors
def db_index_tenants(db: str, min_vectors: int | None, as_json: bool) -> None:
    """Give each tenant of a PostgreSQL store that holds at least MIN_VECTORS vectors of a model
    its own HNSW index, which its searches then walk instead of the model's shared one (in the
    shared index a search reads past the other tenants' vectors: at 1M lessons, a tenant of half
    of them read a third of the pages with its own). Run it as the tables' owner; it migrates
    first. Each index is built without blocking writes (CREATE INDEX CONCURRENTLY: minutes per
    million vectors), once: a second run builds only what is new. Each such tenant's vectors are
    then written to two indexes. SQLite keeps one index per tenant already: nothing to do.

    Exits 0 on success, 2 when the database cannot be opened, the role is not the owner, or the
    database is newer than this afteraction."""
    from afteraction.store.admin import index_tenants

    created = index_tenants(db, min_vectors=min_vectors)
    if as_json:
        click.echo(json.dumps({"indexed": None if created is None else [list(pair) for pair in created]}))
    elif created is None:
        click.echo("SQLite and :memory: keep one vector index per tenant already: nothing to build")
    else:
        for model, tenant in created:
            click.echo(f"indexed  {tenant}  {model}")
        click.echo(f"{len(created)} tenant index(es) built" if created else "nothing to build")


@db.command(name="vectors")
@db_option
@click.option("--tenant", default=None, help="Only this tenant's vectors.")
@json_option
@_schema_errors
@_named(tenant="--tenant")
def db_vectors(db: str, tenant: str | None, as_json: bool) -> None:
    """List the embedding models with vectors in the store: each one's dimension, its vectors and
    how many of them are current (made from their lesson's current revision; the others are
    stale, unused by search), and which is the default embedder's, the model search uses (none
    is marked when the `embed` extra is missing). The vectors of a model that no memory embeds
    with any more (an earlier default, say) can go: `afteraction db drop-vectors MODEL`.

    Exits 0, or 2 when the database cannot be opened, is not afteraction's, or is newer than
    this afteraction."""
    from afteraction.store.admin import vector_models

    _existing(db)
    found = vector_models(db, tenant=tenant)
    default = _default_model()
    if as_json:
        models = [{**m.to_dict(), "default": m.model == default} for m in found]
        click.echo(json.dumps({"default_model": default, "models": models}, ensure_ascii=False))
        return
    if found:
        width = max(len("model"), *(len(shown(m.model)) for m in found))
        click.echo(f"{'model':<{width}}  {'dimension':>9}  {'vectors':>11}  {'current':>11}")
        for m in found:
            mark = "  (default)" if m.model == default else ""
            click.echo(f"{shown(m.model):<{width}}  {m.dimension:>9}  {m.vectors:>11,}  {m.current:>11,}{mark}")
    else:
        click.echo("no vectors stored" + (f" for tenant {tenant!r}" if tenant is not None else ""))
    if default is not None and all(m.model != default for m in found):
        click.echo(f"the default embedder's model {default} has none: `afteraction reindex` embeds the lessons")


@db.command(name="drop-vectors")
@click.argument("model")
@db_option
@click.option("--tenant", default=None, help="Only this tenant's vectors.")
@click.option("--yes", is_flag=True, help="Drop without asking.")
@click.option("--force", is_flag=True, help="Drop even the default embedder's model's vectors.")
@json_option
@_schema_errors
@_named(model="MODEL", tenant="--tenant")
def db_drop_vectors(model: str, db: str, tenant: str | None, yes: bool, force: bool, as_json: bool) -> None:
    """Delete every vector of the embedding model MODEL (of one tenant with --tenant) and what
    serves only them: an SQLite store's index files beside the database; in PostgreSQL, the
    tenant's own index and, with the model's last vector, its HNSW index and recorded dimension
    (run it as the tables' owner). `afteraction db vectors` lists the models.

    It says how many vectors it will drop and asks first, unless --yes. It refuses the default
    embedder's model unless --force too: search would use text alone until `afteraction
    reindex` embeds every lesson again. A memory given another embedder searches that one's
    model (its `model_id`), which this command cannot know: check it is not MODEL.

    Exits 0 when dropped (or there was nothing to drop), 1 when the answer is no, 2 when no
    answer can be read (no terminal: pass --yes), the model is the default one without --force,
    the role is not the tables' owner, or the database cannot be opened."""
    from afteraction.store.admin import drop_vectors, vector_models
    from afteraction.store.base import check_names

    check_names(model, tenant)  # before anything is counted or asked
    _existing(db)
    if not force and model == _default_model():
        raise ConfigError(
            f"{model} is the default embedder's model: without its vectors search uses text alone until "
            "`afteraction reindex` embeds every lesson again; add --force to drop them anyway"
        )
    count = sum(m.vectors for m in vector_models(db, tenant=tenant) if m.model == model)
    where = "every tenant" if tenant is None else f"tenant {tenant!r}"
    click.echo(f"{count:,} vector(s) of {shown(model)} ({where}) to drop", err=as_json)
    if count and not yes:
        try:
            confirmed = click.confirm("drop them?", err=True)
        except click.Abort:
            click.echo("\nerror: no answer read: nothing dropped (pass --yes to drop without asking)", err=True)
            sys.exit(2)
        if not confirmed:
            click.echo("nothing dropped", err=as_json)
            sys.exit(1)
    dropped = drop_vectors(db, model, tenant=tenant)
    if as_json:
        click.echo(json.dumps({"model": model, "tenant": tenant, "dropped": dropped}, ensure_ascii=False))
    else:
        click.echo(f"dropped {dropped:,} vector(s) of {shown(model)}")


def _default_model() -> str | None:
    """The default embedder's model id (building it loads no model), None without the embed extra."""
    from afteraction.embed import default_embedder

    try:
        return default_embedder().model_id
    except ConfigError:
        return None


@main.command()
@db_option
@click.option(
    "--batch", default=64, show_default=True, type=click.IntRange(1, 4096), help="Records embedded at a time."
)
@click.option("--tenant", default=None, help="Only this tenant's lessons.")
@click.option("--rebuild-index", is_flag=True, help="Rebuild the vector index from the stored vectors, even if valid.")
@json_option
@_errors
@_named(tenant="--tenant")
def reindex(db: str, batch: int, tenant: str | None, rebuild_index: bool, as_json: bool) -> None:
    """Embed every lesson that has no vector of the default embedding model yet (the `embed`
    extra), then bring the vector index beside the database up to date.

    Lessons are embedded in (tenant, id) order, BATCH at a time, with a progress bar on stderr. A
    batch the embedder fails on is skipped and listed, and the command exits 1; run it again to
    retry those. A lesson changed while it was being embedded is left for the next run. Vectors
    of other models (an earlier default's) are listed at the end, with the command that drops
    them (`other_models` in --json). Exits 2 when the embed extra is missing or the store keeps
    no vectors."""
    from afteraction.embed import default_embedder
    from afteraction.reindex import count_missing
    from afteraction.reindex import reindex as run
    from afteraction.store.base import VectorStore, check_names

    check_names(None, tenant)  # before the progress bar starts
    embedder = default_embedder()
    with _open(db) as memory:
        total = count_missing(memory.store, embedder.model_id, tenant)
        with click.progressbar(
            length=total or 0, label=f"embedding with {embedder.model_id}", file=sys.stderr, show_pos=True
        ) as bar:
            report = run(memory.store, embedder, batch=batch, tenant=tenant, rebuild_index=rebuild_index,
                         progress=bar.update)  # fmt: skip
        store = memory.store
        listed = store.vector_models(tenant=tenant) if isinstance(store, VectorStore) else []
        others = [info for info in listed if info.model != report.model]
    if as_json:
        click.echo(json.dumps({**report.to_dict(), "other_models": [o.to_dict() for o in others]}, ensure_ascii=False))
    else:
        click.echo(f"embedded {report.embedded} with {report.model}; changed while embedding {report.changed}")
        for failed in report.failed:
            click.echo(shown(f"failed: {failed.records} from {'/'.join(failed.first)} to {'/'.join(failed.last)}: "
                             f"{failed.error}"))  # fmt: skip
        for state in report.indexes:
            how = "built now" if state.built else "up to date"
            why = f" (the saved one was not used: {state.reason})" if state.built and state.reason else ""
            click.echo(f"index {shown(state.tenant)}: {state.kind}, {state.vectors} vectors, {how}{shown(why)}")
        for other in others:  # a superseded model's vectors: search never reads them
            click.echo(f"{other.vectors} vectors of another model are unused: {shown(other.model)} "
                       f"(`afteraction db drop-vectors {shown(other.model)}` removes them)")  # fmt: skip
    if report.failed:
        sys.exit(1)
