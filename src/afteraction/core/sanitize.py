"""Sanitize at capture: secrets are never stored, and every value is bounded.

``sanitize`` turns any captured value into a JSON-compatible copy: values under secret-named keys become
``"[REDACTED]"`` at any depth, secrets in strings become ``[REDACTED:<kind>]`` (see ``afteraction.core.redact``),
and strings, objects, lists and nesting are cut at ``Limits`` with a visible marker. ``sanitize_args`` does the
same for tool arguments, keeping a value only when its argument is allow-listed.

Decisions:
- NaN and infinite floats become ``None`` (JSON has no such numbers; ``null`` is what JSON serializers emit).
- Tuples become lists; any other ``Mapping`` becomes a dict. Bytes, sets, objects raise ``ValidationError``
  naming the dotted path (``args.nested[2].x``), as do non-string keys. Values past a cut are not inspected.
- A string keeps its first ``max_string`` characters, then ``…[cut N chars]``; secrets are redacted before the
  cut, so a cut never leaves half a secret behind. Keys are scrubbed too and cut at 256 characters.
- ``allow`` names top-level keys; values it leaves out are still checked, so a bad value raises whether or not
  it is kept (the allow-list decides what is stored, not what is valid).
- A secret's name and value may stand in two fields, and the value is ``"[REDACTED]"`` then too: the ``value``
  of an object whose ``name``/``key``/``header`` is secret (Kubernetes env, HAR headers, ``Key``/``Value`` tags),
  the second item of a ``[name, value]`` pair (``[["Authorization", "Token …"]]``), the item after a secret-named
  flag in an argument list (``["psql", "--password", "…"]``), and ``curl``'s ``-u user:pw``.
- A JWK's private members (``d``, ``p``, ``q``, ``dp``, ``dq``, ``qi``, ``k`` of an object with a ``kty``) are
  ``"[REDACTED]"`` too; its public ones are kept. So is an OAuth code under ``code`` or ``device_code`` when it looks
  generated (``redact_forms.is_code``: ``{"code": 200}``, ``{"code": "E1001"}``, ``{"code": "print('hi')"}`` stay).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Any, TypeAlias

from afteraction.core.redact import REDACTED, is_secret_name, scrub_text
from afteraction.core.redact_forms import CODE_KEYS, PASSWORD_FLAGS, is_code, is_url
from afteraction.core.redact_keys import jwk_private
from afteraction.core.secret_names import is_connection_name
from afteraction.errors import ConfigError, ValidationError

__all__ = [
    "CUT",
    "LIMITS",
    "OMITTED",
    "REDACTED",
    "CutMarkers",
    "Limits",
    "cut_text",
    "is_clean",
    "is_secret_name",
    "sanitize",
    "sanitize_args",
    "scrub_cut",
    "scrub_text",
    "trimmed",
]

OMITTED = "[omitted]"


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds of what is captured. Sizes count characters, fields (keys per object) and items (per list)."""

    max_depth: int = 8
    max_fields: int = 64
    max_items: int = 64
    max_string: int = 4096
    max_attempts: int = 20
    max_calls: int = 100
    max_task: int = 4096

    def __post_init__(self) -> None:
        for spec in fields(self):
            value = getattr(self, spec.name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"Limits.{spec.name} must be a positive integer, got {value!r}")


LIMITS = Limits()


@dataclass(frozen=True, slots=True)
class CutMarkers:
    """The visible markers left where something was cut."""

    chars: str = "…[cut {n} chars]"  # appended to a cut string
    fields: str = "[cut {n} more fields]"  # the value of a last ``"…"`` key
    items: str = "[cut {n} more items]"  # a last list item
    key: str = "…"
    deep: str = "[cut: too deep]"
    cycle: str = "[cut: cycle]"


CUT = CutMarkers()

# Strings far over the limit are trimmed before scrubbing (a cut is coming anyway), back to whitespace so the
# trim cannot leave an unrecognisable half of a secret inside the kept part.
_SCAN_MARGIN = 16_384


def cut_text(text: str, limit: int, *, cut: int = 0) -> str:
    """``text`` cut to ``limit`` characters followed by the cut marker (``cut`` more characters already gone)."""
    over = len(text) - limit
    if over <= 0 and not cut:
        return text
    return text[:limit] + CUT.chars.format(n=max(over, 0) + cut)


def trimmed(text: str, limit: int) -> tuple[str, int]:
    """``text`` trimmed for scrubbing when it is far over ``limit`` (a cut is coming anyway: scrubbing all of
    a megabyte in the agent's thread would cost seconds), back to whitespace, and how many characters went."""
    if len(text) <= limit + _SCAN_MARGIN:
        return text, 0
    head = text[: limit + _SCAN_MARGIN]
    if not text[len(head)].isspace():  # the trim split a word: drop it (up to 4096 characters of it)
        last = head[-4096:].rsplit(None, 1)
        head = head[: len(head) - len(last[-1])] if len(last) == 2 else head[:-4096]
    return head, len(text) - len(head)


def scrub_cut(text: str, limit: int) -> str:
    """``text`` scrubbed and cut at ``limit`` with the cut marker, far-over-limit text trimmed first."""
    head, dropped = trimmed(text, limit)
    return cut_text(scrub_text(head), limit, cut=dropped)


def _string(text: str, limit: int) -> str:
    return scrub_cut(text, limit)


# --- a name in one field, its value in another ---------------------------------------------------------------------

_PAIR_NAMES = frozenset(("name", "key", "header", "field", "param", "variable"))
_CURL_USER = frozenset(("-u", "--user", "--proxy-user", "-U"))


_HEADER_NAMES = frozenset(("Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie"))


def _names_a_secret(item: object) -> bool:
    return type(item) is str and len(item) <= 64 and " " not in item and is_secret_name(item)


def _names_a_header(item: object) -> bool:
    """A secret's name as a header or a variable is written (``Authorization``, ``X-Api-Key``, ``DB_PASSWORD``),
    not an ordinary word that happens to be one: ``["auth", "payments"]`` is a list of labels."""
    return _names_a_secret(item) and (
        item in _HEADER_NAMES or "-" in str(item) or "_" in str(item) or str(item).isupper()
    )


# the spellings of those keys seen in practice (``name``, ``Name``, ``NAME``): a set test at C speed first
_PAIR_KEYS = frozenset(spelling for name in _PAIR_NAMES for spelling in (name, name.title(), name.upper()))


def _no_secret(key: str, item: Any) -> bool:
    """A value under a secret-named key that holds none: a flag, a null, an empty string, or a URL under a
    connection's name (its own password is scrubbed as a URL's: ``DATABASE_URL`` keeps its host and database; a
    ``webhook_url``'s URL is the secret itself)."""
    if item is None or isinstance(item, bool) or item == "":
        return True
    return type(item) is str and is_url(item) and is_connection_name(key)


def _pair_name(value: Mapping[Any, Any]) -> str:
    """The secret's name in a pair (``{"name": "DATABASE_URL", "value": …}``)."""
    return next((str(value[key]) for key in value if key in _PAIR_KEYS and _names_a_secret(value[key])), "")


def _secret_pair(value: Mapping[Any, Any]) -> bool:
    """Whether ``value`` holds a secret's name in one field (``{"name": "DB_PASSWORD", "value": …}``)."""
    if _PAIR_KEYS.isdisjoint(value):
        return False
    return any(key in _PAIR_KEYS and _names_a_secret(value[key]) for key in value)


def _secret_items(items: list[Any] | tuple[Any, ...]) -> frozenset[int]:
    """The positions of ``items`` that hold the value of a secret named by the item before them."""
    found: set[int] = set()
    if len(items) == 2 and _names_a_header(items[0]) and not str(items[0]).startswith("-"):
        found.add(1)  # ``["Authorization", "Token …"]``
    curl = mysql = False  # after the program's name, wherever it stands (``["sudo", "curl", "-u", …]``)
    flags: frozenset[str] = frozenset()  # the single-dash password flags of the programs met (``docker login -p``)
    for n, item in enumerate(items):
        if type(item) is not str:
            continue
        if not item.startswith("-"):
            program = item.rsplit("/", 1)[-1]
            curl, mysql = curl or program == "curl", mysql or program.startswith("mysql")
            following = items[n + 1] if n + 1 < len(items) else None
            for name in (program, f"{program} {following}" if type(following) is str else ""):
                flags |= PASSWORD_FLAGS.get(name, frozenset())
            continue
        if item in flags and n + 1 < len(items) and type(items[n + 1]) is str and not items[n + 1].startswith("-"):
            found.add(n + 1)  # ``["docker", "login", "-u", "deploy", "-p", "…"]``
            continue
        if "=" in item:
            continue
        if mysql and item.startswith("-p") and len(item) > 2:
            found.add(n)  # ``["mysql", "-pHunter2"]``: the password glued to its flag
            continue
        if n + 1 == len(items):
            break
        following = items[n + 1]
        if type(following) is str and following.startswith("-"):
            continue  # a flag that takes no value (``["psql", "--password", "-h", "db"]``: psql asks)
        if (item.startswith("--") and is_secret_name(item[2:])) or (curl and item in _CURL_USER):
            found.add(n + 1)  # ``["psql", "--password", "…"]``, ``["curl", "-u", "admin:pw"]``
    return frozenset(found)


def _type_name(value: object) -> str:
    return type(value).__name__


# A path is built only when an error needs it: the field name, or (parent path, key or index).
_Path: TypeAlias = "str | tuple[_Path, str | int]"


def _dotted(path: _Path) -> str:
    if isinstance(path, str):
        return path
    parent, step = path
    head = _dotted(parent)
    if isinstance(step, int):
        return f"{head}[{step}]"
    if not step.isidentifier():
        return f"{head}[{step!r}]"
    return f"{head}.{step}" if head else step  # under the root "": the top-level key alone


class _Walk:
    """One sanitize pass: the limits, the allow-list of top-level keys, and the containers open on the way down."""

    def __init__(self, limits: Limits, allow: Collection[str] | None) -> None:
        self.limits = limits
        self.allow = None if allow is None or "*" in allow else frozenset(allow)
        self.open: set[int] = set()

    def value(self, value: Any, path: _Path, depth: int, keep: bool = True) -> Any:
        """The sanitized copy of ``value``; with ``keep`` false, only checked (the result is not used)."""
        kind = type(value)
        if kind is str:
            return _string(value, self.limits.max_string) if keep else None
        if value is None or kind is bool or kind is int:
            return value
        if kind is float:
            return value if math.isfinite(value) else None
        if kind is dict or kind is list or kind is tuple:
            return self.container(value, path, depth, keep)
        # subclasses: enum members, named tuples, ordered and other mappings
        if isinstance(value, str):
            return _string(str.__str__(value), self.limits.max_string) if keep else None
        if isinstance(value, (bool, int)):
            return int(value) if not isinstance(value, bool) else bool(value)
        if isinstance(value, float):
            return float(value) if math.isfinite(value) else None
        if isinstance(value, (Mapping, list, tuple)):
            return self.container(value, path, depth, keep)
        raise ValidationError(_dotted(path), f"is not JSON-serializable (got {_type_name(value)})")

    def container(self, value: Any, path: _Path, depth: int, keep: bool) -> Any:
        if depth >= self.limits.max_depth:
            return CUT.deep
        if id(value) in self.open:
            return CUT.cycle
        self.open.add(id(value))
        try:
            if isinstance(value, Mapping):
                return self.mapping(value, path, depth, keep)
            return self.sequence(value, path, depth, keep)
        finally:
            self.open.discard(id(value))

    def mapping(self, value: Mapping[Any, Any], path: _Path, depth: int, keep: bool) -> dict[str, Any]:
        out: dict[str, Any] = {}
        limit = self.limits.max_fields
        allow = self.allow if depth == 0 else None
        paired = _secret_pair(value)
        private = jwk_private(value)
        for n, (key, item) in enumerate(value.items()):
            if n == limit:
                out[CUT.key] = CUT.fields.format(n=len(value) - limit)
                break
            if type(key) is not str:
                if not isinstance(key, str):
                    rule = f"has a key that is not a string (got {_type_name(key)})"
                    raise ValidationError(_dotted(path), rule)
                key = str.__str__(key)
            name = _string(key, 256)
            while name in out:  # two keys that read the same once redacted or cut
                name += "'"
            if (
                is_secret_name(key)
                or (paired and key.lower() == "value")
                or key in private
                or (key in CODE_KEYS and is_code(key, item))
            ) and not _no_secret(_pair_name(value) if paired and key.lower() == "value" else key, item):
                out[name] = REDACTED
            elif allow is not None and key not in allow:
                self.value(item, (path, name), depth + 1, keep=False)  # checked, not kept
                out[name] = OMITTED
            else:
                out[name] = self.value(item, (path, name), depth + 1, keep)
        return out

    def sequence(self, value: list[Any] | tuple[Any, ...], path: _Path, depth: int, keep: bool) -> list[Any]:
        limit = self.limits.max_items
        secret = _secret_items(value[:limit])
        out = [
            REDACTED if n in secret else self.value(item, (path, n), depth + 1, keep)
            for n, item in enumerate(value[:limit])
        ]
        if len(value) > limit:
            out.append(CUT.items.format(n=len(value) - limit))
        return out


def sanitize(value: Any, *, field: str = "value", allow: Collection[str] | None = None, limits: Limits = LIMITS) -> Any:
    """A JSON-compatible copy of ``value`` with secrets redacted and sizes cut at ``limits``.

    ``allow`` lists the top-level keys of a mapping whose values are kept (``"*"``: all; ``None``, the default:
    all); the values of other keys are checked, then replaced by ``"[omitted]"``. Values under secret-named keys
    are ``"[REDACTED]"`` at any depth, allow-listed or not. Raises ``ValidationError`` naming the path (starting
    at ``field``) of a value that is not JSON-serializable or of a mapping with a non-string key.
    """
    return _Walk(limits, allow).value(value, field, 0)


def is_clean(value: Any, limits: Limits = LIMITS) -> bool:
    """Whether ``sanitize(value, limits=limits)`` (no allow-list) would only copy ``value``: plain JSON types all
    the way down, within every limit, no secret-named key, nothing ``scrub_text`` would replace. A quick check
    that builds nothing, so a caller holding a value that is already clean (most ingested payloads) can keep it
    instead of walking it twice (copy, then compare). False says only "not sure": ``sanitize`` decides."""
    return _clean(value, limits, 0)


def _clean_text(text: str, limit: int) -> bool:
    return len(text) <= limit and scrub_text(text) == text


@lru_cache(maxsize=8192)
def _plain_key(key: str) -> bool:
    """A key kept as it is: not secret-named, nothing to redact, within the key limit (keys repeat, so cached);
    not one of ``CODE_KEYS`` either, whose value decides."""
    return not is_secret_name(key) and key not in CODE_KEYS and _clean_text(key, 256)


def _clean(value: Any, limits: Limits, depth: int) -> bool:
    kind = type(value)
    if kind is dict:
        if depth >= limits.max_depth or len(value) > limits.max_fields:
            return False
        items: Any = value.values()
        for key in value:
            if type(key) is not str or not _plain_key(key):
                if key in CODE_KEYS and not is_code(key, value[key]):
                    continue  # ``{"code": 200}``
                return False
        if _secret_pair(value) or jwk_private(value):
            return False
    elif kind is list:
        if depth >= limits.max_depth or len(value) > limits.max_items or _secret_items(value):
            return False
        items = value
    elif kind is str:
        return _clean_text(value, limits.max_string)
    elif kind is float:
        return math.isfinite(value)
    else:
        return value is None or kind is bool or kind is int
    for item in items:
        kind = type(item)
        if kind is str:
            if not _clean_text(item, limits.max_string):
                return False
        elif kind is int or kind is bool or item is None:
            continue
        elif not _clean(item, limits, depth + 1):
            return False
    return True


def sanitize_args(
    args: Mapping[str, Any], *, allow: Collection[str] = (), field: str = "args", limits: Limits = LIMITS
) -> dict[str, Any]:
    """Tool arguments as stored: every key kept, a value kept (sanitized) only when its key is in ``allow``.

    ``"*"`` in ``allow`` keeps every value. Secret-named arguments are ``"[REDACTED]"`` even when allow-listed.
    Every value is checked, kept or not, so a bad argument raises whatever the allow-list says.
    """
    if not isinstance(args, Mapping):
        raise ValidationError(field, f"must be a mapping of argument names to values (got {_type_name(args)})")
    out: dict[str, Any] = _Walk(limits, allow).value(args, field, 0)
    return out
