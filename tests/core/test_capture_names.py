"""Capture's names and keys: an argument key kept when its value is refused, the names of a lesson
that arrives whole, a webhook's URL, and namespaced tool names (``auth:login``)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from afteraction.core.capture import clean_call, clean_env, clean_experience, clean_name
from afteraction.core.redact import scrub_text
from afteraction.core.sanitize import LIMITS, sanitize, sanitize_args
from afteraction.model import Scope, Skill, Solution, Tried
from afteraction.testing import make_experience

SCOPE = Scope(tenant="acme", app="support", project="refunds")

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
HOOK = "https://hooks.zapier.com/hooks/catch/1234567/3xy9ab2/"


def test_a_key_of_an_argument_whose_value_is_not_json_is_scrubbed_and_cut() -> None:
    call, problems = clean_call(
        "call_api",
        {f"Authorization: Bearer {TOKEN}": b"raw-bytes", "k" * 5000: object(), "n": 1},
        "ok",
        None,
        allow=("*",),
        limits=LIMITS,
    )
    assert len(problems) == 2
    assert TOKEN not in repr(call.args) and "Authorization: Bearer [REDACTED:bearer]" in call.args
    assert max(map(len, call.args)) <= 256 + 20 and call.args["n"] == 1
    assert all(value.startswith("[invalid: ") for key, value in call.args.items() if key != "n")


def test_two_refused_keys_that_read_the_same_once_scrubbed_both_stay() -> None:
    call, _ = clean_call("t", {f"x {TOKEN}": b"a", f"x ghp_{'Z' * 36}": b"b"}, None, None, limits=LIMITS)
    assert len(call.args) == 2 and TOKEN not in repr(call.args)


def test_a_lesson_arriving_whole_has_its_tried_tools_skill_author_and_source_scrubbed() -> None:
    base = make_experience("Deploy the api", scope=SCOPE)
    lesson = replace(
        base,
        source=f"import {TOKEN}",
        solution=Solution(tried=(Tried(0, f"deploy {TOKEN}", "LockHeldError"),), worked="retry"),
        skill=Skill(statement="Wait for the lock.", authored_by=f"by {TOKEN}"),
    )
    clean = clean_experience(lesson)
    assert TOKEN not in repr(clean.to_dict())
    assert clean.source == "import [REDACTED:api_key]"
    assert clean.solution is not None and clean.solution.tried[0].tool == "deploy [REDACTED:api_key]"
    assert clean.skill is not None and clean.skill.authored_by == "by [REDACTED:api_key]"
    assert clean_experience(clean) == clean


def test_a_lesson_with_clean_names_is_returned_as_it_is() -> None:
    lesson = make_experience("Deploy the api", scope=SCOPE)
    assert clean_experience(lesson) is lesson


def test_a_webhook_url_is_redacted_whole_a_database_url_keeps_its_host() -> None:
    teams = "https://acme.webhook.office.com/webhookb2/7a1f0c2e/IncomingWebhook/9c8b7a6d5e4f/0f1e2d3c"
    env = clean_env({"TEAMS_WEBHOOK_URL": teams, "DATABASE_URL": "postgres://app:pw@db:5432/x", "hook_url": HOOK})
    assert env["TEAMS_WEBHOOK_URL"] == "[REDACTED]" and env["hook_url"] == "[REDACTED]"
    assert env["DATABASE_URL"].startswith("postgres://") and "db:5432/x" in env["DATABASE_URL"]
    assert ":pw@" not in env["DATABASE_URL"]


def test_a_webhook_url_argument_is_redacted_whole_wherever_it_stands() -> None:
    args = sanitize_args({"webhook_url": HOOK, "redis_url": "redis://cache:6379/0", "text": "hi"}, allow=("*",))
    assert args == {"webhook_url": "[REDACTED]", "redis_url": "redis://cache:6379/0", "text": "hi"}
    pair = sanitize([{"name": "SLACK_WEBHOOK_URL", "value": HOOK}, {"name": "DATABASE_URL", "value": "sqlite:///x"}])
    assert pair == [
        {"name": "SLACK_WEBHOOK_URL", "value": "[REDACTED]"},
        {"name": "DATABASE_URL", "value": "sqlite:///x"},
    ]
    assert scrub_text(f"WEBHOOK_URL={HOOK}") == "WEBHOOK_URL=[REDACTED:secret_assignment]"
    assert scrub_text("DATABASE_URL=postgres://db:5432/x") == "DATABASE_URL=postgres://db:5432/x"


@pytest.mark.parametrize(
    "name",
    [
        *("auth:login", "secrets:get", "secrets:list", "token:refresh", "password:reset", "auth:whoami", "jwt:decode"),
        # a listed verb and more after ``_``, ``-``, ``.`` or a capital (h20 #2)
        *("auth:get_token", "secrets:getSecret", "secret:list-versions", "token:refresh_all", "apikey:create_key"),
    ],
)
def test_a_namespaced_tool_name_is_kept(name: str) -> None:
    assert clean_name(name) == name
    assert clean_name(f"call {name}(provider=github)") == f"call {name}(provider=github)"


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        (f"token:{TOKEN}", "token:[REDACTED:api_key]"),
        ("secret:Xk9fQ2mZ7pL4wR8tY1", "secret:[REDACTED:secret_assignment]"),
        ("auth:login password=hunter2", "auth:login password=[REDACTED:secret_assignment]"),
        ("password: hunter2", "password: [REDACTED:secret_assignment]"),
        ("password:admin@db.example.com", "password:[REDACTED:secret_assignment]"),
        # a plain word that is not one of the verbs may be the password: secrets win
        ("password:hunter2", "password:[REDACTED:secret_assignment]"),
        ("PASSWORD:Tr0ub4dor", "PASSWORD:[REDACTED:secret_assignment]"),
        ("db_password:letmein", "db_password:[REDACTED:secret_assignment]"),
        ("api_key:abc123xyz", "api_key:[REDACTED:secret_assignment]"),
        ("secret:opensesame", "secret:[REDACTED:secret_assignment]"),
        ("login password:hunter2", "login password:[REDACTED:secret_assignment]"),
    ],
)
def test_a_value_after_a_secrets_colon_in_a_name_is_still_redacted(name: str, shown: str) -> None:
    assert clean_name(name) == shown
