"""No secret planted anywhere in a run survives into any stored field or any block."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import afteraction as aa
from tests.core.test_redact import texts_with_secrets
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
