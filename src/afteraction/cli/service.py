"""Commands of the service: ``serve`` and the ``keys`` group."""

from __future__ import annotations

import json
import os

import click

from afteraction.cli.common import (
    _errors,
    _existing,
    _named,
    db_option,
    json_option,
    main,
    secret_file_option,
    shown,
)
from afteraction.core.redact import redact_url
from afteraction.errors import ConfigError, ValidationError
from afteraction.store.keys import ServerSecret


@main.command()
@db_option
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option("--port", default=8787, show_default=True, type=click.IntRange(0, 65535), help="The port.")
@click.option("--dev", is_flag=True, help="Development mode: tenant 'dev', no API keys, loopback only.")
@click.option(
    "--vectors/--no-vectors",
    default=True,
    show_default=True,
    help="Search lessons with the bundled embedder too (the embed extra), or by text only.",
)
@secret_file_option
@_errors
def serve(db: str, host: str, port: int, dev: bool, vectors: bool, secret_file: str | None) -> None:
    """Run the HTTP service (the `server` extra): AEP-compatible ingest, OTLP traces, session
    reads, and experience (search, blocks, lessons, outcomes, verdicts) over HTTP.

    An AEP SDK pointed at http://HOST:PORT sends events unchanged (POST /events, POST
    /events/batch); an OpenTelemetry exporter posts to /v1/traces; GET /sessions, /workflows,
    /export and /metrics read them back; a remote Memory (Memory.open("http://HOST:PORT")) uses
    /experience/*. The routes are described at /openapi.json.

    Every request but /health, /ready and /openapi.json needs an API key (`Authorization: Bearer
    <key>`, from `afteraction keys create`), and a server secret is required (AFTERACTION_SERVER_SECRET, or a file:
    --secret-file / AFTERACTION_SERVER_SECRET_FILE). With --dev there are no keys: every request
    is tenant 'dev', and only a loopback address is allowed. Ctrl-C stops it (exit 0)."""
    from afteraction.server import is_loopback
    from afteraction.server import serve as run
    from afteraction.store.admin import status

    if dev and not is_loopback(host):
        raise ConfigError(f"--dev runs without API keys, so only on a loopback address; got --host {host!r}")
    secret = None if dev else ServerSecret.require(os.environ, secret_file)
    status(db)  # reads only: a database that cannot be served (not afteraction's, newer) is said before "serving"
    mode = "development mode: tenant 'dev', no API keys" if dev else "API keys required"
    click.echo(f"afteraction: serving {shown(redact_url(db))} on http://{shown(host)}:{port} ({mode})")
    try:
        run(db, host=host, port=port, dev=dev, secret=secret, vectors=vectors)
    except KeyboardInterrupt:  # Ctrl-C is how it is stopped: the server has shut down cleanly by now
        return


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
@click.option(
    "--burst",
    type=int,
    default=None,
    help="Requests allowed at once above the rate (default: N, rounded up, at least 1).",
)
@click.option(
    "--event-rate",
    default=None,
    metavar="N/s",
    help="At most N events (or OTLP spans) ingested per second (per server replica), however they are batched.",
)
@click.option(
    "--event-burst",
    type=int,
    default=None,
    help="Events allowed at once above the event rate, and the most in one request (default: 10000, the most "
    "the server takes in one request, or N rounded up when more).",
)
@click.option("--legacy-signatures", is_flag=True, help="Also accept AEP canonical v1 (envelope-only) signatures.")
@click.option(
    "--require-signatures",
    is_flag=True,
    help="Write signed AEP events only: refuse unsigned events, and every other write (OTLP, lessons, runs, "
    "outcomes, verdicts).",
)
@click.option("--name", default=None, help="A label to recognise the key by.")
@secret_file_option
@db_option
@json_option
@_errors
@_named(
    tenant="--tenant", project="--project", name="--name", rate="--rate", burst="--burst",
    event_rate="--event-rate", event_burst="--event-burst",
)  # fmt: skip
def keys_create(tenant: str, project: str | None, scopes: str, rate: str | None, burst: int | None,
                event_rate: str | None, event_burst: int | None, legacy_signatures: bool, require_signatures: bool,
                name: str | None, secret_file: str | None, db: str, as_json: bool) -> None:  # fmt: skip
    """Create a key and print it, and its signing secret, once."""
    from datetime import datetime, timezone

    from afteraction.store import open_store
    from afteraction.store.keys import BOTH_SIGNATURE_FLAGS, hash_token, mint, open_keys, parse_rate, parse_scopes

    if require_signatures and legacy_signatures:
        raise ValidationError("--require-signatures", f"cannot go with --legacy-signatures: {BOTH_SIGNATURE_FLAGS}")
    secret = ServerSecret.require(os.environ, secret_file)
    key, token = mint(
        tenant, parse_scopes(scopes, "--scope"), now=datetime.now(timezone.utc), project=project, name=name,
        rate=None if rate is None else parse_rate(rate), burst=burst,
        event_rate=None if event_rate is None else parse_rate(event_rate, "--event-rate", "events"),
        event_burst=event_burst,
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
@_named(tenant="--tenant")
def keys_list(tenant: str | None, db: str, as_json: bool) -> None:
    """List keys by tenant, oldest first: ids, scopes, limits and state; never a secret."""
    from afteraction.store import open_store
    from afteraction.store.base import check_names
    from afteraction.store.keys import open_keys

    check_names(None, tenant)
    _existing(db)
    store = open_store(db)
    try:
        found = open_keys(store).list(tenant)
    finally:
        store.close()
    if as_json:
        click.echo(json.dumps([key.to_dict() for key in found], ensure_ascii=False))
        return
    if not found:
        click.echo("(no keys" + (f" for tenant {tenant!r})" if tenant is not None else ")"))
    for key in found:
        data = key.to_dict()
        rate = f"{key.rate:g}/s burst {key.burst}" if key.rate else "no rate limit"
        if key.event_rate:
            rate += f"  {key.event_rate:g} events/s burst {key.event_burst}"
        state = f"revoked {data['revoked_at']}" if key.revoked_at else "active"
        where = key.tenant + (f"/{key.project}" if key.project else "")
        click.echo(shown(f"{key.id}  {where}  {','.join(data['scopes'])}  {rate}  {state}  {key.name or ''}".rstrip()))


@keys.command(name="revoke")
@click.argument("key_id")
@click.option("--tenant", default=None, help="Refuse unless the key belongs to this tenant.")
@db_option
@_errors
@_named(tenant="--tenant")
def keys_revoke(key_id: str, tenant: str | None, db: str) -> None:
    """Revoke the key KEY_ID: from now on it authenticates nothing (it stays listed)."""
    from datetime import datetime, timezone

    from afteraction.store import open_store
    from afteraction.store.keys import open_keys

    _existing(db)
    store = open_store(db)
    try:
        key = open_keys(store).revoke(key_id, at=datetime.now(timezone.utc), tenant=tenant)
    finally:
        store.close()
    click.echo(f"revoked {shown(key.id)} (tenant {key.tenant!r})")
