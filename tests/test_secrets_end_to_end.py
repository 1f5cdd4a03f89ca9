"""No secret planted anywhere in a run survives into any stored field or any block."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import afteraction as aa
from tests.core.test_redact_properties import texts_with_secrets
from tests.core.test_sanitize import structures

SCOPE = aa.Scope(tenant="acme", app="support", project="refunds")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    task=texts_with_secrets(),
    args=structures(),
    result=structures(),
    error=texts_with_secrets(),
    env=texts_with_secrets(),
    allow_all=st.booleans(),
)
def test_no_secret_reaches_the_store_or_the_block(
    task: tuple[str, list[str]],
    args: tuple[Any, list[str]],
    result: tuple[Any, list[str]],
    error: tuple[str, list[str]],
    env: tuple[str, list[str]],
    allow_all: bool,
) -> None:
    planted = task[1] + args[1] + result[1] + error[1] + env[1]
    with aa.Memory.open(":memory:", allow_args=("*",) if allow_all else ()) as mem:
        with mem.run("refund stuck " + task[0], scope=SCOPE, env={"note": env[0]}) as run:
            run.tool("lookup", args={"query": args[0]}, error="LookupError: " + error[0])
            run.tool("lookup", args={"query": args[0]}, result=result[0])
            run.check("done", passed=True)
        stored = json.dumps([e.to_dict() for e in mem.export()], ensure_ascii=False)
        block = mem.reference_block("refund stuck " + task[0], scope=SCOPE, layout="verbose")
    for secret in planted:
        assert secret not in stored
        assert json.dumps(secret)[1:-1] not in stored
        assert secret not in block


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.lists(texts_with_secrets(), min_size=13, max_size=13),
    args=structures(),
    secret_env=st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=16, max_size=16).map("hidden-".__add__),
    many=st.booleans(),
)
def test_no_secret_in_a_lesson_that_arrives_whole_is_stored(
    text: list[tuple[str, list[str]]], args: tuple[Any, list[str]], secret_env: str, many: bool
) -> None:
    # A lesson imported, added by the host or posted to the service is scrubbed as a recorded run is.
    planted = [secret for _, found in text for secret in found] + args[1] + [secret_env]
    t = [value for value, _ in text]
    lesson = aa.Experience(
        id="imported-1",
        task_id="ticket-1",
        task=t[0],
        lesson=t[1],
        summary=t[2],
        checks=(t[3],),
        wordings=(t[4][:300],),
        status=aa.Status.VALIDATED,
        confidence=0.8,
        scope=SCOPE,
        created_at=datetime(2026, 1, 1, tzinfo=timezone.utc),
        scenario=aa.Scenario(t[5], {"region": t[6], "api_token": secret_env}, (t[7],), t[8]),
        solution=aa.Solution((aa.Tried(0, "lookup", t[9][:200], {"query": args[0]}),), t[10], (t[11],)),
        skill=aa.Skill(t[12], "ops-team"),
    )
    with aa.Memory.open(":memory:", embedder=None) as mem:
        assert (mem.add_many([lesson]) if many else mem.add(lesson)) in (1, True)
        [stored] = mem.export()
    assert (stored.id, stored.scope, stored.created_at) == (lesson.id, lesson.scope, lesson.created_at)
    dumped = json.dumps(stored.to_dict(), ensure_ascii=False)
    for secret in planted:
        assert json.dumps(secret, ensure_ascii=False)[1:-1] not in dumped


def test_a_lesson_with_nothing_to_scrub_is_stored_as_it_is() -> None:
    lesson = aa.Experience(
        id="imported-2",
        task_id="ticket-2",
        task="Refund stuck in pending",
        lesson="Wait for the lock, then retry.",
        status=aa.Status.VALIDATED,
        confidence=0.8,
        scope=SCOPE,
        created_at=datetime(2026, 1, 1, tzinfo=timezone.utc),
        scenario=aa.Scenario("Refund stuck in pending", {"region": "eu"}, ("LockHeldError",)),
    )
    with aa.Memory.open(":memory:", embedder=None) as mem:
        mem.add(lesson)
        [stored] = mem.export()
    assert stored == lesson


def test_no_secret_in_a_hosts_skill_is_stored() -> None:
    key = "sk-proj-" + "abcdefghijklmnopqrstuvwxyz0123456789ABCD"
    skill = aa.Skill(f"Authenticate with {key} first", "ops", applicable_when=(f"the token is {key}",))
    with aa.Memory.open(":memory:", embedder=None) as mem:
        with mem.run("Deploy the billing service", scope=SCOPE, skill=skill) as run:
            run.tool("deploy", result="ok")
            run.check("deployed", passed=True)
        learned = aa.Run(
            id="run-2",
            task="Deploy the search service",
            scope=SCOPE,
            started_at=datetime(2026, 1, 1, tzinfo=timezone.utc),
            state="completed",
            evidence=(aa.Evidence("deployed", True, "check"),),
        )
        mem.learn(learned, skill=skill)
        stored = [e.to_dict() for e in mem.export()]
    assert len(stored) == 2 and all(e["skill"]["statement"].startswith("Authenticate with [REDACTED") for e in stored)
    assert key not in json.dumps(stored)


def test_the_third_red_team_passs_secrets_reach_neither_the_store_nor_the_block() -> None:
    """Each of these reached the store and the block before (``e2e_secrets.py`` of the third red-team pass)."""
    with aa.Memory.open(":memory:", allow_args=("*",), embedder=None) as mem:
        with mem.run(
            "Deploy billing: db password:\nHunter2Pass-9 card 4111 1111\n1111 1111",
            scope=SCOPE,
            env={"DB_PASS": "Hunter2Pass-9", "SECRET_KEY_BASE": "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
                 "PHPSESSID": "q7v1c5k9ab3pmd02r4t6",
                 "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/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"},
        ) as run:  # fmt: skip
            run.tool(
                "call_llm",
                args={"provider": "groq"},
                error="AuthenticationError: bad key gsk_4fT9qLm2Xv8RzK1pW7nB3cY6dH0sJ5uE2aG8iO4kMxQz",
            )
            run.next_attempt()
            run.tool(
                "read_config",
                args={"path": "config/secrets.yml"},
                result="production:\n  secret_key_base: |\n    7d1e5c3a9b8f6e4d2c0b1a9f8e7d6c5b\n  api_key:\n"
                "    AbCdEfGhIjKlMnOpQrStUvWxYz012345\n  smtp_pass: Hunter2Pass-9\n",
            )
            run.tool(
                "login",
                args={"cmd": "mysql -u root -pHunter2Pass-9 -h db", "argv": ["curl", "-u", "admin:Hunter2Pass-9"]},
                result={"note": "password: correct horse battery staple"},
            )
            run.check("deployed", passed=True)
        stored = json.dumps([e.to_dict() for e in mem.export()], ensure_ascii=False)
        block = mem.reference_block("Deploy billing", scope=SCOPE, layout="verbose")
    assert "Deploy billing" in block
    for secret in ("Hunter2Pass-9", "4111 1111 1111 1111", "9f8e7d6c5b4a", "q7v1c5k9ab3pmd02r4t6", "aB3dE5gH7jK9",
                   "gsk_4fT9", "7d1e5c3a9b8f", "AbCdEfGhIjKlMn", "horse battery staple"):  # fmt: skip
        assert secret not in stored and secret not in block


def test_a_jwk_in_yaml_an_oauth_code_and_a_webhooks_signature_reach_neither_the_store_nor_the_block() -> None:
    """Each of these reached the store before: a JWK's private member written as YAML, an OAuth code in a tool's
    arguments, a webhook's signature header in text and in a headers mapping."""
    d = "jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI"
    code = "SplxlOBeZQQYbYSWxSbIA4x9"
    hub = "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    stripe = "5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd"
    with aa.Memory.open(":memory:", allow_args=("*",), embedder=None) as mem:
        with mem.run("Replay the failed GitHub webhook", scope=SCOPE) as run:
            run.tool("load_key", args={"path": "jwk.yaml"}, error=f"ParseError: kty: EC\ncrv: P-256\nd: {d}\n")
            run.tool("exchange_code", args={"code": code, "redirect_uri": "https://a.example/"}, error="invalid_grant")
            run.next_attempt()
            run.tool("post", args={"headers": {"Stripe-Signature": f"t=1492774577,v1={stripe}"}}, result="200")
            run.tool("sh", args={"cmd": f"curl -H 'X-Hub-Signature-256: sha256={hub}' localhost/hook"}, result="ok")
            run.check("replayed", passed=True)
        stored = json.dumps([e.to_dict() for e in mem.export()], ensure_ascii=False)
        block = mem.reference_block("Replay the failed GitHub webhook", scope=SCOPE, layout="verbose")
    assert "Replay the failed GitHub webhook" in block and "Stripe-Signature" in stored
    for secret in (d, code, hub, stripe):
        assert secret[:16] not in stored and secret[:16] not in block
