"""Small validators shared by the model's constructors and parsers.

Each raises ``ValidationError`` naming the field (a dotted path) and the rule it broke.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

from afteraction.errors import ValidationError

MAX_ID = 256
MAX_NAME = 200
MAX_TEXT = 16_384
#: Items of a list field (checks, steps, symptoms) and entries of an environment, as an import accepts them.
MAX_ITEMS = 64
#: The last item of a list cut at MAX_ITEMS counts the rest: ``more_items(7)`` is "… and 7 more".
MORE_ITEMS = re.compile(r"… and \d+ more")


def more_items(count: int) -> str:
    return f"… and {count} more"


#: Characters of a refused value an error shows (``echoed``).
ECHO_CHARS = 40
_LAST_WORD = re.compile(r"\s*\S*\Z")


def echoed(value: object, limit: int = ECHO_CHARS) -> str:
    """A refused value as an error shows it (a name, a type, a time, an id): at most ``limit``
    characters, then an ellipsis; a word the cut would split is left out whole, so no error shows
    the first part of a long token. An error goes back to the sender and into its logs: the edges
    that send it out scrub the secrets of what it shows (``server.common.error_body``,
    ``core.otlp_spans``, ``reporting.log_error``), which a cut token would slip past."""
    text = value if isinstance(value, str) else str(value)
    if len(text) <= limit:
        return text
    shown = text[:limit]
    if not text[limit].isspace():
        shown = _LAST_WORD.sub("", shown)
    return shown.rstrip() + "…"


_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})\Z", re.ASCII
)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def text(value: object, field: str, *, limit: int = MAX_TEXT, blank: bool = False) -> str:
    """A string within ``limit`` characters; not blank unless allowed."""
    if not isinstance(value, str):
        if value is None:
            raise ValidationError(field, "is required")
        raise ValidationError(field, f"must be a string, got {kind(value)}")
    if not value.isascii() and _SURROGATE.search(value):
        raise ValidationError(field, "holds a lone surrogate: not Unicode text (decode with errors='replace')")
    if not blank and not value.strip():
        raise ValidationError(field, "must not be blank")
    if len(value) > limit:
        raise ValidationError(field, f"is {len(value)} characters; the limit is {limit}")
    return value


def name(value: object, field: str, *, limit: int = MAX_NAME) -> str:
    """An identifier-like string: not blank, no control characters, within ``limit``."""
    value = text(value, field, limit=limit)
    if _CONTROL.search(value) or "\n" in value or "\r" in value or "\t" in value:
        raise ValidationError(field, "must not contain control characters")
    if value != value.strip():
        raise ValidationError(field, "must not start or end with whitespace")
    return value


def optional_name(value: object, field: str, *, limit: int = MAX_NAME) -> str | None:
    return None if value is None else name(value, field, limit=limit)


def optional_text(value: object, field: str, *, limit: int = MAX_TEXT) -> str | None:
    return None if value is None else text(value, field, limit=limit, blank=True)


def integer(value: object, field: str, *, minimum: int = 0, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        got = repr(value) if isinstance(value, float) else kind(value)  # "got 2.5", not "got a number"
        raise ValidationError(field, f"must be an integer, got {got}")
    if value < minimum:
        raise ValidationError(field, f"must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValidationError(field, f"must be at most {maximum}, got {value}")
    return value


def number(value: object, field: str) -> float:
    """A finite number (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValidationError(field, f"must be a number, got {kind(value)}")
    if not math.isfinite(value):
        raise ValidationError(field, f"must be a finite number, got {value!r}")
    return float(value)


def probability(value: object, field: str) -> float:
    """A finite number in [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValidationError(field, f"must be a number, got {kind(value)}")
    number = float(value)
    if not math.isfinite(number):
        raise ValidationError(field, f"must be a finite number, got {value!r}")
    if not 0.0 <= number <= 1.0:
        raise ValidationError(field, f"must be between 0 and 1, got {value!r}")
    return number


_JSON_NAMES = {type(None): "null", bool: "true or false", str: "a string", int: "a number", float: "a number"}


def kind(value: object) -> str:
    """What ``value`` is, in the words of JSON for what JSON can hold (``null``, not ``NoneType``)."""
    if isinstance(value, (list, tuple)):
        return "an array"
    return _JSON_NAMES.get(type(value)) or type(value).__name__


def known(items: Mapping[str, Any], names: frozenset[str], field: str, what: str) -> None:
    """Refuse a key that is not one of ``names``: a misspelt optional field would otherwise be dropped,
    silently (``expire_at`` for ``expires_at`` imports a lesson that never expires)."""
    for key in items:
        if key not in names:
            name = echoed(key)
            raise ValidationError(f"{field}.{name}" if field else name, f"is not a field of {what}")


def mapping(value: object, field: str) -> Mapping[str, Any]:
    if type(value) is not dict and not isinstance(value, Mapping):  # a dict skips the slower ABC check
        raise ValidationError(field, f"must be an object, got {kind(value)}")
    for key in value:
        if not isinstance(key, str):
            raise ValidationError(field, f"keys must be strings, got {kind(key)}")
    return value


def string_map(value: object, field: str, *, limit: int | None = MAX_ITEMS) -> dict[str, str]:
    """A flat object of string to string (environment, labels); ``limit`` None: any number of entries."""
    if value is None:
        return {}
    items = mapping(value, field)
    if limit is not None and len(items) > limit:
        raise ValidationError(field, f"has {len(items)} entries; the limit is {limit}")
    out: dict[str, str] = {}
    for key, item in items.items():
        name(key, f"{field}.{key}")
        out[key] = text(item, f"{field}.{key}", limit=MAX_NAME * 5, blank=True)
    return out


def strings(value: object, field: str, *, limit: int | None = MAX_ITEMS, item_limit: int = MAX_TEXT) -> tuple[str, ...]:
    """A list of strings; ``limit`` None: any number of them."""
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise ValidationError(field, f"must be a list of strings, got {kind(value)}")
    if limit is not None and len(value) > limit:
        raise ValidationError(field, f"has {len(value)} items; the limit is {limit}")
    return tuple(text(item, f"{field}[{i}]", limit=item_limit) for i, item in enumerate(value))


def parse_time(value: object, field: str) -> datetime:
    """An RFC 3339 date-time with an offset (``Z`` or ``±hh:mm``), as an aware datetime."""
    if isinstance(value, datetime):
        return aware(value, field)
    if not isinstance(value, str):
        raise ValidationError(field, f"must be an RFC 3339 date-time string, got {kind(value)}")
    match = _RFC3339.match(value)
    if not match:
        raise ValidationError(
            field,
            f"must be an RFC 3339 date-time with an offset, like 2026-01-01T10:00:00Z; got {echoed(value)!r}",
        )
    offset = match.group(8)
    parsed = None
    if len(offset) == 1 or (offset[1:3] <= "23" and offset[4:6] <= "59"):  # it would take "+00:60" as +01:00
        with contextlib.suppress(ValueError):  # the C parser reads these as below, or refuses them (a leap second)
            parsed = datetime.fromisoformat(value)
    parsed = parsed or _parse_matched(match, field)
    if not _MIN_UTC <= parsed <= _MAX_UTC:  # stored and ordered in UTC: 9999-12-31T23:59:59-01:00 has no UTC time
        rule = "is outside the years 1 to 9999 in UTC"
        raise ValidationError(field, f"{rule}; got {echoed(value)!r}")
    return parsed


_MIN_UTC = datetime.min.replace(tzinfo=timezone.utc)
_MAX_UTC = datetime.max.replace(tzinfo=timezone.utc)


def _parse_matched(match: re.Match[str], field: str) -> datetime:
    """An RFC 3339 text ``_RFC3339`` matched, read field by field."""
    year, month, day, hour, minute, second, fraction, offset = match.groups()
    micro = int((fraction or "0")[:6].ljust(6, "0"))
    if offset in ("Z", "z"):
        tz = timezone.utc
    else:
        sign = 1 if offset[0] == "+" else -1
        hours, minutes = int(offset[1:3]), int(offset[4:6])
        if hours > 23 or minutes > 59:
            raise ValidationError(field, f"has an invalid offset {offset!r}")
        tz = timezone(sign * timedelta(hours=hours, minutes=minutes))
    try:
        # A leap second (:60) is read as the last microsecond of the minute.
        leap = int(second) == 60
        parsed = datetime(
            int(year),
            int(month),
            int(day),
            int(hour),
            int(minute),
            59 if leap else int(second),
            999_999 if leap else micro,
            tzinfo=tz,
        )
    except ValueError as exc:
        raise ValidationError(field, f"is not a real date-time: {exc}") from None
    return parsed


def aware(value: datetime, field: str) -> datetime:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValidationError(field, "must carry a UTC offset (a timezone-aware datetime)")
    return value


def optional_time(value: object, field: str) -> datetime | None:
    return None if value is None else parse_time(value, field)


def format_time(value: datetime) -> str:
    """The one textual form of a stored instant: UTC, microseconds, ``Z``; the year always four
    digits (``%Y`` gives ``999`` for 999 here, which is not RFC 3339 and which ``parse_time`` refuses)."""
    utc = value.astimezone(timezone.utc)
    return f"{utc.year:04d}" + utc.strftime("-%m-%dT%H:%M:%S.%fZ")
