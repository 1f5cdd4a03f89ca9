"""Verification: the host's own checks turn a run into a Verdict, or into none.

A verifier is a callable ``(run) -> tuple[Evidence, ...] | None``; ``None`` abstains, and an
abstention anywhere means *no verdict*: nothing is stored. A failing required piece of
evidence dominates any number of passes. Any other answer is a ValidationError naming the
verifier (``verify[0]``; ``all_of[1]`` or ``any_of[1]`` inside those).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from afteraction.core.errorclass import error_class
from afteraction.errors import ValidationError
from afteraction.model import Evidence, Run, ToolCall, Verdict
from afteraction.model._check import echoed

__all__ = [
    "Verifier",
    "all_of",
    "any_of",
    "approval",
    "check",
    "exit_code",
    "http_status",
    "is_verdict",
    "tool_succeeded",
    "verify",
]

Verifier = Callable[[Run], "tuple[Evidence, ...] | None"]


def _last_call(run: Run, tool: str) -> ToolCall | None:
    for call in reversed(run.calls):
        if call.tool == tool:
            return call
    return None


def tool_succeeded(tool: str) -> Verifier:
    """Passes when the last call of ``tool`` returned without an error (the last call decides)."""

    def verifier(run: Run) -> tuple[Evidence, ...]:
        call = _last_call(run, tool)
        if call is None:
            return (Evidence(f"tool:{tool}", False, "tool", f"{tool} was never called"),)
        detail = "" if call.ok else error_class(call.error)
        return (Evidence(f"tool:{tool}", call.ok, "tool", detail),)

    return verifier


def is_verdict(passed: object) -> bool:
    """Whether a check's answer is True or False: a bool, a numpy bool (``(array == expected).all()``;
    its type is ``numpy.bool`` in numpy 2, ``numpy.bool_`` before), 0 or 1. Not a string: ``"false"`` is
    truthy, and a failed check must not be read as a pass; not an array, whose truth is ambiguous."""
    kind = type(passed)
    return (isinstance(passed, int) and passed in (0, 1)) or (
        kind.__module__ == "numpy" and kind.__name__ in ("bool", "bool_")
    )


def check(id: str, fn: Callable[[Run], bool | None]) -> Verifier:
    """The host's check ``fn``: True passes, False fails, None means *do not store this run*;
    any other answer is a ValidationError (reported; the run is not stored)."""

    def verifier(run: Run) -> tuple[Evidence, ...] | None:
        outcome = fn(run)
        if outcome is None:
            return None
        if not is_verdict(outcome):
            got = echoed(repr(outcome))  # cut between words: a token cut short would slip past the scrubber
            raise ValidationError(f"check {echoed(id, 60)!r}", f"must answer True, False or None, got {got}")
        return (Evidence(id, bool(outcome), "check"),)

    return verifier


def approval(id: str, fn: Callable[[Run], tuple[bool | None, str]]) -> Verifier:
    """A person's decision: ``fn`` returns (approved, approver id). The approver id is opaque
    (never a name or address); None as the decision means nobody decided: do not store."""

    def verifier(run: Run) -> tuple[Evidence, ...] | None:
        decision, approver = fn(run)
        if decision is None:
            return None
        return (Evidence(id, bool(decision), "approval", approver=approver),)

    return verifier


def all_of(*verifiers: Verifier) -> Verifier:
    """Every verifier's evidence; abstains if any abstains."""

    def verifier(run: Run) -> tuple[Evidence, ...] | None:
        found: list[Evidence] = []
        for i, inner in enumerate(verifiers):
            evidence = inner(run)
            if evidence is None:
                return None
            found.extend(_evidence(evidence, f"all_of[{i}]"))
        return tuple(found)

    return verifier


def any_of(*verifiers: Verifier) -> Verifier:
    """Passes when one verifier passes; the others' failures are then kept as not required.
    Abstains when none passes and one abstained."""

    def verifier(run: Run) -> tuple[Evidence, ...] | None:
        answers = [inner(run) for inner in verifiers]
        results = [None if r is None else _evidence(r, f"any_of[{i}]") for i, r in enumerate(answers)]
        if any(r is not None and _passes(r) for r in results):
            return tuple(
                e if e.passed else Evidence(e.id, False, e.method, e.detail, e.approver, required=False)
                for r in results
                if r is not None
                for e in r
            )
        if any(r is None for r in results):
            return None
        return tuple(e for r in results if r is not None for e in r)

    return verifier


def _evidence(found: object, field: str) -> tuple[Evidence, ...]:
    """A verifier's answer that is not None, checked: a tuple (or list) of Evidence."""
    if isinstance(found, (tuple, list)):
        wrong = next((e for e in found if not isinstance(e, Evidence)), None)
        if wrong is None:
            return tuple(found)
        got = f"a {type(found).__name__} holding {type(wrong).__name__}"
    else:
        got = type(found).__name__
    raise ValidationError(field, f"must return a tuple of Evidence or None, got {got}")


def _passes(evidence: Sequence[Evidence]) -> bool:
    return bool(evidence) and all(e.passed for e in evidence if e.required)


_EXIT_TEXT = re.compile(r"\bexit(?:ed)?(?:\s+with)?(?:\s+(?:code|status))?\s*[:=]?\s*(-?\d{1,3})\b", re.IGNORECASE)
_HTTP_TEXT = re.compile(r"\b(?:HTTP(?:/\d(?:\.\d)?)?|status(?:\s*code)?)\s*[:=]?\s*([1-5]\d\d)\b", re.IGNORECASE)


def _field(result: Any, names: Iterable[str]) -> int | None:
    """An integer field of a JSON object result (also when the result is JSON text)."""
    if isinstance(result, str) and result.lstrip().startswith("{"):
        try:
            result = json.loads(result)
        except ValueError:
            return None
    if isinstance(result, dict):
        for name in names:
            value = result.get(name)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
            if isinstance(value, str) and value.strip().lstrip("-").isdigit():
                return int(value)
    return None


def _classifier(
    tools: Sequence[str], id_prefix: str, names: Sequence[str], text: re.Pattern[str], ok: Callable[[int], bool]
) -> Verifier:
    def verifier(run: Run) -> tuple[Evidence, ...] | None:
        found: list[Evidence] = []
        for tool in tools or sorted({c.tool for c in run.calls}):
            call = _last_call(run, tool)
            if call is None:
                continue
            code = _field(call.result, names)
            if code is None:
                match = text.search(call.error or (call.result if isinstance(call.result, str) else "") or "")
                code = int(match.group(1)) if match else None
            if code is not None:
                found.append(Evidence(f"{id_prefix}:{tool}", ok(code), "classifier", f"{id_prefix} {code}"))
        return tuple(found) or None

    return verifier


def exit_code(*tools: str) -> Verifier:
    """Classifies the last call of each tool by its exit code (0 passes): from a JSON object's
    ``exit_code`` / ``returncode`` / ``exit_status`` / ``code`` field, else from the text.
    With no tools named, every tool called. Abstains when no exit code is found."""
    return _classifier(tools, "exit", ("exit_code", "returncode", "exit_status", "code"), _EXIT_TEXT, lambda c: c == 0)


def http_status(*tools: str) -> Verifier:
    """Classifies the last call of each tool by HTTP status (1xx–3xx pass): from a JSON
    object's ``status_code`` / ``status`` / ``http_status`` field, else from the text."""
    return _classifier(
        tools, "http", ("status_code", "status", "http_status", "statusCode"), _HTTP_TEXT, lambda c: c < 400
    )


def verify(run: Run, verifiers: Sequence[Verifier] = ()) -> Verdict | None:
    """The verdict over the run's recorded checks (the last result of each id) and the
    verifiers' evidence.

    None (nothing is stored) when any verifier abstains or there is no evidence at all."""
    # A check recorded again (in a later attempt) supersedes its earlier result.
    latest = {e.id: e for e in run.evidence}
    evidence: list[Evidence] = list(latest.values())
    for i, verifier in enumerate(verifiers):
        found = verifier(run)
        if found is None:
            return None
        evidence.extend(_evidence(found, f"verify[{i}]"))
    if not evidence:
        return None
    return Verdict(passed=_passes(evidence), evidence=tuple(evidence))
