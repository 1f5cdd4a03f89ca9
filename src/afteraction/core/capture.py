"""Capture: one place that makes a run (and an ingested event, and a lesson that arrives whole)
safe to keep, whichever way it was recorded (the recorder's calls, a run assembled from events,
an event sent to the service, a lesson imported, added by the host or posted to the service).

Secrets are scrubbed, argument values kept only when allowed, every value cut at the limits.
Problems that lose a value (a tool argument that is not JSON) are returned, not raised, so a
running agent is never interrupted; the value is replaced by a marker saying why.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from afteraction.core.distill import capped, within
from afteraction.core.neutralize import defuse_labels
from afteraction.core.redact_forms import is_url
from afteraction.core.sanitize import (
    LIMITS,
    REDACTED,
    Limits,
    cut_text,
    is_clean,
    is_secret_name,
    sanitize,
    sanitize_args,
    scrub_cut,
    scrub_text,
    trimmed,
)
from afteraction.core.secret_names import is_connection_name
from afteraction.errors import ValidationError
from afteraction.model import Attempt, Event, Experience, Run, Skill, ToolCall, Tried
from afteraction.model._check import MAX_TEXT

__all__ = [
    "clean_call",
    "clean_env",
    "clean_event",
    "clean_experience",
    "clean_name",
    "clean_run",
    "clean_skill",
    "clean_task",
    "clean_text",
]

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_ENV_VALUE = 200


def clean_text(text: str, limits: Limits) -> str:
    """Free text (an error, a detail): scrubbed, then cut at the string limit (text far over it is trimmed
    before it is scrubbed: a megabyte of error output costs the agent's thread no more than the limit)."""
    return scrub_cut(text, limits.max_string)


def clean_task(text: str, limits: Limits) -> str:
    """Task text (a person's status reason too): control characters (a terminal's escape sequences with
    them) and whitespace folded to single spaces, then scrubbed (a value on the line below its name, a card
    across two lines are one line by then), cut at the task limit."""
    head, dropped = trimmed(text, limits.max_task)
    return cut_text(scrub_text(_one_line(head)), limits.max_task, cut=dropped)


def _one_line(text: str) -> str:
    """``text`` as one line: control characters (a terminal's escape sequences with them) and runs of
    whitespace folded to single spaces, the role and field labels that started its lines defused first."""
    return " ".join(_CONTROL.sub(" ", defuse_labels(text)).split())


def clean_name(value: object, limit: int = 200) -> str:
    """A name (a tool's, a check's, a call's id, an environment fact's): secrets scrubbed, control
    characters and runs of whitespace made one space, cut at ``limit``; anything made a string.
    ``ns:verb`` with no space after the colon (``auth:login``, ``secrets:get``, an MCP tool's name)
    is a namespaced name, not ``name:value``, when the verb is one of a fixed list (``_VERBS``); any
    other word there is scrubbed as a value (``password:hunter2``, ``token:ghp_…``)."""
    return _scrub_name(_one_line(trimmed(str(value), limit)[0]))[:limit]


# ``auth:login``, ``secrets:get``, ``token:refresh``: a namespace and a verb, the verb followed by nothing, a space,
# a bracket or another ``:`` (not by ``@``: ``user:pw@host`` is a URL's credentials)
_NAMESPACED = re.compile(r"(?<![\w.:-])([A-Za-z][\w.-]{0,63}):([A-Za-z][\w.-]{0,63})(?=[\s()\[\],;:]|\Z)", re.ASCII)
_HOLDS = "^|`"  # a character that stands for a namespaced name's colon while the name is scrubbed
#: The verbs of a namespaced tool name (``secrets:get``); a word outside them after ``password:`` may be the password.
_VERBS = frozenset(
    """get list set put read write show describe create add new update edit delete remove clear login logout signin
    signout refresh reset rotate revoke renew issue generate exchange introspect verify validate check decode encode
    sign unlock lock status whoami info fetch sync store load save inspect test""".split()
)


_VERB_HEAD = re.compile(r"([a-z]+)(?:[_.-]|(?=[A-Z]))")


def _is_verb(word: str) -> bool:
    """Whether ``word`` is one of ``_VERBS`` or starts with one before ``_``, ``-``, ``.`` or a capital
    (``get_token``, ``getSecret``, ``list-versions``)."""
    head = _VERB_HEAD.match(word)
    return word.lower() in _VERBS or (head is not None and head.group(1).lower() in _VERBS)


def _scrub_name(name: str) -> str:
    """``name`` scrubbed, a namespaced name's colon held out of reach of ``name:value``."""
    hold = next((c for c in _HOLDS if c not in name), None) if ":" in name else None
    if hold is None:
        return scrub_text(name)

    def held(match: re.Match[str]) -> str:
        namespace, verb = match.groups()
        if not is_secret_name(namespace) or not _is_verb(verb):
            return match.group(0)  # no assignment read here, or what may be a value (a password is any word)
        return f"{namespace}{hold}{verb}"

    kept = _NAMESPACED.sub(held, name)
    return scrub_text(name) if kept == name else scrub_text(kept).replace(hold, ":")


def clean_env(env: Mapping[Any, Any] | None) -> dict[str, str]:
    """Environment facts (a run's, a lesson's scenario, an event's labels): names kept, values
    scrubbed and kept short; a value under a secret-named key is ``[REDACTED]``, as ``sanitize``
    does at any depth. ValidationError("env") when ``env`` is not a mapping."""
    if env is not None and not isinstance(env, Mapping):
        raise ValidationError("env", f"must be a mapping of names to values, got {type(env).__name__}")
    out: dict[str, str] = {}
    for key, value in (env or {}).items():
        name = clean_name(key)
        text = str(value)
        # a connection URL's own password is scrubbed as a URL's; under any other secret name the URL is the secret
        secret = is_secret_name(name) and not (is_url(text) and is_connection_name(name))
        out[name] = REDACTED if secret else scrub_text(trimmed(text, _ENV_VALUE)[0])[:_ENV_VALUE]
    return out


def clean_call(
    tool: str,
    args: Any,
    result: Any,
    error: str | None,
    *,
    call_id: str | None = None,
    at: datetime | None = None,
    where: str = "call",
    allow: Collection[str] = (),
    limits: Limits,
) -> tuple[ToolCall, list[ValidationError]]:
    """One tool call made safe, and the problems met (each names the field)."""
    problems: list[ValidationError] = []
    try:
        clean_args = sanitize_args(args or {}, allow=allow, field=f"{where}.args", limits=limits)
    except ValidationError as exc:
        clean_args = _args_one_by_one(args, where, allow, limits, problems) or {"[invalid]": exc.rule}
        problems = problems or [exc]
    try:
        clean_result = sanitize(result, field=f"{where}.result", limits=limits)
    except ValidationError as exc:
        problems.append(exc)
        clean_result = f"[invalid: {exc.rule}]"
    name = clean_name(tool) or "unnamed"
    call = ToolCall(
        tool=name,
        args=clean_args,
        result=clean_result,
        error=None if error is None else clean_text(str(error), limits),
        call_id=None if call_id is None else clean_name(call_id) or None,
        at=at,
    )
    return call, problems


def _args_one_by_one(
    args: Any, where: str, allow: Collection[str], limits: Limits, problems: list[ValidationError]
) -> dict[str, Any]:
    """When some arguments are bad, keep the good ones and mark each bad one."""
    if not isinstance(args, Mapping):
        return {}
    out: dict[str, Any] = {}
    for key, value in list(args.items())[: limits.max_fields]:
        try:
            out.update(sanitize_args({str(key): value}, allow=allow, field=f"{where}.args", limits=limits))
        except ValidationError as exc:
            problems.append(exc)
            name = scrub_cut(str(key), 256)  # scrubbed and cut as ``sanitize`` keeps a key
            while name in out:
                name += "'"
            out[name] = f"[invalid: {exc.rule}]"
    return out


def clean_run(run: Run, *, allow: Collection[str] = (), limits: Limits) -> tuple[Run, list[ValidationError]]:
    """A whole run made safe (e.g. one assembled from events), and the problems met."""
    problems: list[ValidationError] = []
    attempts = []
    for a, attempt in enumerate(run.attempts[: limits.max_attempts]):
        calls = []
        for n, call in enumerate(attempt.calls[: limits.max_calls]):
            clean_one, found = clean_call(
                call.tool,
                call.args,
                call.result,
                call.error,
                call_id=call.call_id,
                at=call.at,
                where=f"attempts[{a}].calls[{n}]",
                allow=allow,
                limits=limits,
            )
            calls.append(clean_one)
            problems.extend(found)
        if len(attempt.calls) > limits.max_calls:
            problems.append(ValidationError(f"attempts[{a}].calls", f"more than {limits.max_calls}; the rest dropped"))
        error = None if attempt.error is None else clean_text(attempt.error, limits)
        attempts.append(Attempt(attempt.index, tuple(calls), error))
    if len(run.attempts) > limits.max_attempts:
        problems.append(ValidationError("attempts", f"more than {limits.max_attempts}; the rest dropped"))
    evidence = tuple(
        replace(e, id=clean_name(e.id) or e.id, detail=clean_text(e.detail, limits)[:500]) for e in run.evidence
    )
    clean = replace(
        run,
        task=clean_task(run.task, limits),
        env=clean_env(run.env),
        attempts=tuple(attempts),
        error=None if run.error is None else clean_text(run.error, limits),
        evidence=evidence,
    )
    return clean, problems


_EVENT_TEXTS = ("source", "tenant", "schema", "content_type")


def clean_event(event: Event, limits: Limits) -> Event:
    """An event as the service stores it: its payload, subject, labels, extensions and the fields
    beyond the envelope's (AEP allows them; they are kept and returned) sanitized
    (secret-named keys ``[REDACTED]`` at any depth, secrets in strings redacted, sizes cut at
    ``limits``), secrets in the envelope's free text (source, tenant, schema, content type)
    redacted, its ids, times and types as sent. Raises ValidationError naming the field
    of a value that is not JSON. The signature is kept as received: it was verified before this
    and no longer matches once something was redacted, which is the point."""
    changes: dict[str, Any] = {}
    if not is_clean(event.payload, limits):  # most payloads are: kept as they are, not copied and compared
        payload = sanitize(dict(event.payload), field="payload", limits=limits)
        if payload != event.payload:
            changes["payload"] = payload
    for name in _EVENT_TEXTS:  # free text of the envelope (a source URI may carry credentials); ids are kept
        value = getattr(event, name)
        if value is not None and (cleaned := scrub_text(value)) != value:
            changes[name] = cleaned
    if event.subject is not None and (subject := clean_text(event.subject, limits)) != event.subject:
        changes["subject"] = subject
    if event.labels is not None and (labels := clean_env(event.labels)) != dict(event.labels):
        changes["labels"] = labels
    if event.extensions is not None and not is_clean(event.extensions, limits):
        extensions = sanitize(dict(event.extensions), field="extensions", limits=limits)
        if extensions != event.extensions:
            changes["extensions"] = extensions
    if event.extra and not is_clean(event.extra, limits):  # fields beyond the envelope's, kept as sent
        extra = sanitize(dict(event.extra), field="", limits=limits)
        if extra != event.extra:
            changes["extra"] = extra
    return replace(event, **changes) if changes else event


def clean_experience(experience: Experience, limits: Limits = LIMITS) -> Experience:
    """A lesson that arrives whole (imported, added by the host, posted to the service) made as
    safe to keep as one distilled here: secrets scrubbed from every text it carries (task, lesson,
    summary, wordings, status reason, checks, scenario, solution, skill), from its names (its
    source, its tried tools', its skill's author) and from its tools' arguments (secret-named
    arguments ``[REDACTED]``, as are environment values under secret-named keys); each text still
    within its field's limit. Its one-line texts (task, wordings, status reason, the scenario's
    task and failure signature, a tried call's error class) are folded to one line first, as
    ``clean_task`` folds a recorded task: a control character (the ESC that starts a terminal's
    escape sequence, a line break) becomes a space. Texts of many lines (lesson, summary, checks,
    symptoms, steps, what worked, the skill's) keep their characters, as a recorded error's text
    does (the block and the CLI neutralize what they show). Ids (``task_id``), scope, counts, times
    and outcome digests are kept as they are; a record with nothing to scrub is returned as it is
    (nothing is rebuilt). Raises ValidationError naming the field of an argument value that is not
    JSON."""
    changes: dict[str, Any] = {}
    _names(changes, experience, ("source",))
    _texts(changes, experience, ("task",), (), fold=True)
    _texts(changes, experience, ("lesson", "summary"), ("checks",))
    _texts(changes, experience, (), ("wordings",), Experience.WORDING_CHARS, fold=True)
    _texts(changes, experience, ("status_reason",), (), Experience.REASON_CHARS, fold=True)
    if (scenario := experience.scenario) is not None:
        found: dict[str, Any] = {}
        _texts(found, scenario, ("task", "failure_signature"), (), fold=True)
        _texts(found, scenario, (), ("symptoms",))
        environment = within(clean_env(scenario.environment))
        if environment != dict(scenario.environment):
            found["environment"] = environment
        if found:
            changes["scenario"] = replace(scenario, **found)
    if (solution := experience.solution) is not None:
        found = {}
        _texts(found, solution, ("worked",), ("steps",))
        tried = tuple(_tried(t, f"solution.tried[{n}].args", limits) for n, t in enumerate(solution.tried))
        if any(new is not old for new, old in zip(tried, solution.tried, strict=True)):
            found["tried"] = tried
        if found:
            changes["solution"] = replace(solution, **found)
    if (skill := clean_skill(experience.skill)) is not experience.skill:
        changes["skill"] = skill
    return replace(experience, **changes) if changes else experience


def clean_skill(skill: Skill | None) -> Skill | None:
    """A host's skill with secrets scrubbed from its statement, conditions and author; itself if unchanged
    (and anything that is not a Skill, which the model's own checks refuse where it is used)."""
    if not isinstance(skill, Skill):
        return skill
    found: dict[str, Any] = {}
    _names(found, skill, ("authored_by",))
    _texts(found, skill, (), ("applicable_when", "not_applicable_when"))
    _texts(found, skill, ("statement",), (), 4096)
    return replace(skill, **found) if found else skill


def _texts(
    changes: dict[str, Any],
    record: object,
    single: Sequence[str],
    many: Sequence[str],
    limit: int = MAX_TEXT,
    *,
    fold: bool = False,
) -> None:
    """Put in ``changes`` each of ``record``'s text fields (``single``) and tuples of texts
    (``many``) that scrubbing and the ``limit`` change; ``fold``: one-line fields, each folded
    to one line first as ``clean_task`` folds a task (a text of a tuple that folds to nothing is
    left out)."""

    def clean(value: str) -> str:
        head = trimmed(value, limit)[0]
        return scrub_text(_one_line(head) if fold else head)[:limit]

    for name in single:
        value = getattr(record, name)
        if (cleaned_one := clean(value)) != value:
            changes[name] = cleaned_one
    for name in many:
        values = getattr(record, name)
        if (cleaned := capped(tuple(item for value in values if (item := clean(value))))) != tuple(values):
            changes[name] = cleaned


def _names(changes: dict[str, Any], record: object, names: Sequence[str]) -> None:
    """Put in ``changes`` each of ``record``'s name fields that ``clean_name`` changes (kept when it leaves
    nothing: the model refuses a blank name)."""
    for name in names:
        value = getattr(record, name)
        if (clean := clean_name(value)) != value and clean:
            changes[name] = clean


def _tried(tried: Tried, field: str, limits: Limits) -> Tried:
    """A tried call with its tool name and error class scrubbed and its arguments sanitized; itself if unchanged."""
    found: dict[str, Any] = {}
    _names(found, tried, ("tool",))
    _texts(found, tried, ("error_class",), (), 200, fold=True)
    if (
        not is_clean(tried.args, limits)
        and (args := sanitize(dict(tried.args), field=field, limits=limits)) != tried.args
    ):
        found["args"] = args
    return replace(tried, **found) if found else tried
