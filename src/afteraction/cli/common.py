"""What every command shares: the ``main`` group, the common options, opening a memory, and
the mapping of errors to messages and exit codes."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from afteraction.errors import AfterActionError, ConfigError, ValidationError
from afteraction.memory import Memory
from afteraction.model import Scope
from afteraction.settings import DEFAULT_DATABASE
from afteraction.store import locate

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


# C0 and C1 controls, and the bidirectional overrides that reorder what a terminal shows.
_UNSHOWABLE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def shown(text: str) -> str:
    """Stored text for a terminal line: a control character (an escape sequence that would
    retitle or clear the terminal, a newline that would fake a line of the listing) or a
    direction override is written as its escape (``\\x1b``, ``\\n``), the rest as it is."""
    return _UNSHOWABLE.sub(lambda m: m[0].encode("unicode_escape").decode("ascii"), text)


def _pairs(values: Sequence[str], option: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        key, sep, item = value.partition("=")
        if not sep or not key.strip():
            raise ValidationError(option, f"expects KEY=VALUE, got {value!r}")
        if key.strip() in out and out[key.strip()] != item:  # which one was meant cannot be guessed
            raise ValidationError(option, f"gives {key.strip()} twice ({out[key.strip()]!r} and {item!r})")
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
        except AfterActionError as exc:  # each line through shown(): a message may quote a stored or typed value
            click.echo("error: " + "\n".join(shown(line) for line in str(exc).split("\n")), err=True)
            sys.exit(2 if isinstance(exc, (ValidationError, ConfigError)) else failure)

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper  # type: ignore[return-value]


#: A library parameter a ValidationError names: ``k``, or an item of one, ``ids[1]``.
_PARAMETER = re.compile(r"([a-z_]+)(?:\[[0-9]+\])?")


def _named(**options: str) -> Callable[[F], F]:
    """Name the option the user typed in a library's ValidationError, not the parameter it was
    passed as: ``@_named(k="-k")`` turns ``k: must be ...`` into ``-k: must be ...`` (and
    ``ids[1]: ...`` into ``SESSION_ID: ...`` for ``ids="SESSION_ID"``). Goes under ``_errors``."""

    def decorate(fn: F) -> F:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except ValidationError as exc:
                found = _PARAMETER.fullmatch(exc.field)
                if found is None or found[1] not in options:
                    raise
                raise ValidationError(options[found[1]], exc.rule) from None

        wrapper.__name__ = fn.__name__
        wrapper.__doc__ = fn.__doc__
        return wrapper  # type: ignore[return-value]

    return decorate


#: A one-shot command that searches waits this long for the embedding model to load (an agent
#: host's searches keep the library's 0.5 s budget; a command run by hand can wait once).
SEARCH_BUDGET = 30.0


def _existing(db: str) -> None:
    """ConfigError when ``db`` names an SQLite file that is not there, or is empty (0 bytes, no
    write-ahead log: no store has ever been written to it). A command that only reads
    (or changes what is stored) would otherwise create an empty store, and its directories, at a
    mistyped path and report that it found nothing."""
    backend, target = locate(db)
    if backend != "sqlite":
        return
    path = Path(target).expanduser()
    wal = Path(f"{path}-wal")
    if not path.exists():
        where = f"there is no store at {target!r}"
    elif path.is_file() and path.stat().st_size == 0 and (not wal.exists() or wal.stat().st_size == 0):
        where = f"{target!r} is an empty file, not a store"  # SQLite would make it one: a typo would pass unseen
    else:
        return
    raise ConfigError(
        f"--db: {where} (nothing was ever recorded there); check the path or AFTERACTION_DATABASE_URL. A store "
        "is created by the first run recorded into it, or by `afteraction import` or `afteraction db upgrade`"
    )


def _open(db: str, *, search: bool = False, create: bool = False) -> Memory:
    """The memory a command works on; an SQLite file that is not there is an error unless the
    command may ``create`` it. Commands that search use both channels and wait for the model; the
    others run without an embedder, so they start at once and leave embedding to ``afteraction
    reindex`` or the next memory that has one (its backfill)."""
    if not create:
        _existing(db)
    if search:
        return Memory.open(db, vector_budget=SEARCH_BUDGET)
    return Memory.open(db, embedder=None)


secret_file_option = click.option(
    "--secret-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="A file holding the server secret (else AFTERACTION_SERVER_SECRET_FILE, else AFTERACTION_SERVER_SECRET).",
)


class _Commands(click.Group):
    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        for argument in args:  # bytes that are not UTF-8 arrive as lone surrogates, which no store can keep
            if not argument.isascii() and any("\udc80" <= char <= "\udcff" for char in argument):
                readable = argument.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
                raise click.UsageError(f"the argument {shown(readable)!r} is not UTF-8 text", ctx=ctx)
        return super().parse_args(ctx, args)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="afteraction")
def main() -> None:
    """afteraction: verified experience for AI agents."""
