"""Commands over files of lessons and events: import, export (JSONL of lessons) and validate (AEP events)."""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, NoReturn

import click

from afteraction.cli.common import _errors, _named, _open, db_option, json_option, main, shown
from afteraction.errors import ConfigError, ValidationError
from afteraction.importing import Imported, import_lessons
from afteraction.model import Event, Experience
from afteraction.store.base import check_names

#: Lessons an import writes in one transaction.
IMPORT_BATCH = 1_000

#: Files are read keeping bytes that are not UTF-8 as lone surrogates, so that such a line is named, not a traceback.
_READ = click.File("r", encoding="utf-8", errors="surrogateescape")


def _lines(handle: IO[str]) -> Iterator[tuple[int, str]]:
    """The non-blank lines of ``handle``, numbered, split on ``\n`` only (``_as_sent``)."""
    for number, line in enumerate(_as_sent(handle), start=1):
        if line.strip():
            yield number, line


def _as_sent(handle: IO[str]) -> IO[str]:
    """``handle`` reading its lines as the service splits NDJSON, at ``\n`` only: a lone ``\r`` (or a U+2028) stays
    inside its line. Text mode's universal newlines made three events of ``{…}\r{…}\r{…}``, which the service
    refuses as one line that is not JSON."""
    reconfigure = getattr(handle, "reconfigure", None)
    if reconfigure is not None:
        with contextlib.suppress(ValueError, io.UnsupportedOperation):  # data already read: it stays as it is
            reconfigure(newline="\n")
    return handle


def _not_utf8(text: str) -> bool:
    """Whether text read through ``_READ`` held bytes that are not UTF-8."""
    return not text.isascii() and any("\udc80" <= char <= "\udcff" for char in text)


class _Unreadable(Exception):
    """A line (or file) whose JSON cannot be read: the message says why, for ``line N: ...``."""


# What the service's strict decoder (msgspec, ``server/ingest.py``) refuses and Python's json takes, in its words
# (a test keeps them equal): the service is an extra, so its decoder is not here.
_NOT_A_NUMBER = "NaN and Infinity are not JSON numbers"
_OUT_OF_RANGE = "a number is beyond ±1.8e308, the range of a double"
_MAX_INTEGER = 4300  # characters, the sign included: the service reads an integer exactly up to that
_TOO_LONG = (
    f"an integer is longer than {_MAX_INTEGER} characters, the most read exactly; send such a number as a string"
)
_LONE_SURROGATE = "holds a lone UTF-16 surrogate escape ({}) with no pair: that is not Unicode text"
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")  # a pre-check: text without one holds no lone surrogate
_SURROGATE = re.compile("[\ud800-\udfff]")


class _Strict(ValueError):
    """A number strict JSON refuses, found while decoding."""


class _Refused(_Unreadable):
    """JSON text that breaks a rule of the service's strict decoding (``_NOT_A_NUMBER`` and the others)."""


def _constant(name: str) -> NoReturn:
    raise _Strict(_NOT_A_NUMBER)


def _integer(text: str) -> int:
    if len(text) > _MAX_INTEGER:  # Python's own limit counts digits, not the sign, and says it in other words
        raise _Strict(_TOO_LONG)
    return int(text)


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _Strict(_OUT_OF_RANGE)
    return value


def _decoded(text: str) -> Any:
    """The JSON value of ``text``, decoded as strictly as the service does (no NaN or Infinity, no number past a
    double's range, no lone surrogate escape); _Unreadable for text that is not such JSON, is nested deeper than
    the parser recurses, or holds a number of more digits than Python converts."""
    try:
        value = json.loads(text, parse_constant=_constant, parse_float=_finite, parse_int=_integer)
    except _Strict as exc:
        raise _Refused(f"not JSON ({exc})") from None
    except json.JSONDecodeError as exc:
        raise _Unreadable(f"not JSON ({exc.msg})") from None
    except RecursionError:
        raise _Unreadable("nested too deeply") from None
    except ValueError as exc:  # int("1" * 5000): "Exceeds the limit (4300 digits) for integer string conversion"
        raise _Unreadable(f"not JSON ({str(exc).split(':')[0]})") from None
    if _ESCAPED_SURROGATE.search(text):  # "\ud83d" alone decodes to a lone surrogate here; the service refuses it
        try:
            found = _SURROGATE.search(json.dumps(value, ensure_ascii=False))
        except RecursionError:
            raise _Unreadable("nested too deeply") from None
        if found is not None:
            raise _Refused(_LONE_SURROGATE.format(f"\\u{ord(found.group()):04x}"))
    return value


@main.command(name="import")
@click.argument("file", type=_READ)
@db_option
@json_option
@_errors
def import_(file: IO[str], db: str, as_json: bool) -> None:
    """Import lessons from FILE (JSONL as `export` writes it; - for stdin), keeping their ids.

    A lesson already stored under its id, in the same scope, takes the copy changed later (outcomes at
    the source since the last import), and a person's revocation (or superseding, or marking stale) made
    on either side holds; a lesson of another scope is kept. Importing the same file twice changes nothing.
    Every line is checked first: if any is bad, nothing is imported. The lessons are then written in
    batches of 1,000, so that other processes using the store are not held up; an import cut short (a
    crash) is completed by running it again. The store is created if it is not there yet."""
    with _open(db, create=True) as memory:
        now = memory.now()
        records: list[Experience] = []
        problems: list[str] = []
        first: dict[tuple[str, str], int] = {}  # (tenant, id) → the line that holds it
        undated: set[tuple[str, str]] = set()  # lines without a time: never newer than a stored copy
        for number, line in _lines(file):
            if _not_utf8(line):
                problems.append(f"line {number}: is not UTF-8 text")
                continue
            try:
                data = _decoded(line)
                record = Experience.from_dict(data, now=now, strict=True)
            except (_Unreadable, ValidationError) as exc:
                problems.append(f"line {number}: {exc}")
                continue
            except RecursionError:
                problems.append(f"line {number}: nested too deeply")
                continue
            seen = first.setdefault((record.scope.tenant, record.id), number)
            if seen != number:  # ids are unique in a tenant: the second would be dropped unseen
                problems.append(f"line {number}: id {record.id!r} of tenant {record.scope.tenant!r} is on line {seen}")
            records.append(record)
            if not (
                isinstance(data, dict) and (data.get("created_at") is not None or data.get("updated_at") is not None)
            ):
                undated.add((record.scope.tenant, record.id))
        if problems:
            raise ValidationError(file.name, "nothing imported:\n  " + "\n  ".join(problems[:20]))
        # written in batches, each its own transaction: another process's runs wait at most one batch for the
        # write lock (one transaction of 150,000 lessons held it ~12 s; a run's finish gives up after 5)
        done = sum(
            (
                import_lessons(memory, records[at : at + IMPORT_BATCH], undated=undated)
                for at in range(0, len(records), IMPORT_BATCH)
            ),
            Imported(),
        )
    if as_json:
        counts = {"read": len(records), "added": done.added, "updated": done.updated, "existing": done.kept}
        click.echo(json.dumps(counts))
    else:
        note = " (the stored copy is as new or newer, or another scope's: kept)" if done.kept else ""
        click.echo(
            f"read {len(records)}, added {done.added}, updated {done.updated} (the file's copy newer), "
            f"already present {done.kept}{note}"
        )


@main.command()
@click.argument("file", type=click.Path(dir_okay=False, writable=True, allow_dash=True), default="-")
@click.option("--tenant", default=None, help="Only this tenant's lessons.")
@db_option
@_errors
@_named(tenant="--tenant")
def export(file: str, tenant: str | None, db: str) -> None:
    """Export lessons as JSONL to FILE (default: stdout).

    FILE is replaced only once the whole export is written (empty when there is nothing to
    export); a failed export leaves it as it was."""
    if os.path.basename(file) in ("", ".", ".."):  # "", "out/": Path() would write a file named "out", or fail
        raise ValidationError("FILE", f"must name a file (such as lessons.jsonl, or - for stdout), got {file!r}")
    check_names(None, tenant)
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
            with contextlib.suppress(OSError):  # a read-only place has no partial file: its error is the one said
                partial.unlink(missing_ok=True)


def _one_object(text: str) -> dict[str, Any] | None:
    """``text`` decoded when it is one JSON object over several lines, else None (JSONL, an array,
    or not JSON: read line by line, each line's error its own). _Refused when it is one such object
    but breaks a rule of strict decoding."""
    if not text.startswith("{") or "\n" not in text.strip() or _not_utf8(text):
        return None
    try:
        found = _decoded(text)
    except _Refused:
        if text.rstrip().endswith("}"):
            raise
        return None
    except _Unreadable:
        return None
    return found if isinstance(found, dict) else None


@main.command()
@click.argument("file", type=_READ)
@db_option
@json_option
@_errors
def validate(file: IO[str], db: str, as_json: bool) -> None:
    """Validate an events FILE (JSONL, one JSON array, or one JSON object) against AEP 0.2.0.

    Exits 1 when any event is invalid. (--db is accepted for symmetry; nothing is stored.)"""
    text = _as_sent(file).read()
    stripped = text.lstrip()
    items: list[tuple[int, Any, str | None]] = []
    unit = "item" if stripped.startswith("[") else "line"  # a JSON array's events are counted, not its lines
    try:
        whole: Any = _one_object(stripped)
    except _Refused as exc:  # such an event, but NaN, 1e400 or a lone surrogate in it: one event, refused
        whole = exc
    if whole is not None:  # one event written over several lines (as AEP's own fixtures are): judged as one
        refused = isinstance(whole, _Refused)
        items, unit = [(1, None if refused else whole, str(whole) if refused else None)], "event"
    elif stripped.startswith("["):
        if _not_utf8(stripped):
            raise ValidationError(file.name, "is not UTF-8 text")
        try:
            items = [(n, item, None) for n, item in enumerate(_decoded(stripped), start=1)]
        except _Unreadable as exc:
            raise ValidationError(file.name, str(exc)) from None
    else:
        for number, line in _lines(io.StringIO(text, newline="\n")):
            if _not_utf8(line):
                items.append((number, None, "is not UTF-8 text"))
                continue
            try:
                items.append((number, _decoded(line), None))
            except _Unreadable as exc:
                items.append((number, None, str(exc)))
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
        except RecursionError:
            results.append({"line": number, "valid": False, "field": None, "error": "nested too deeply"})
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
