from __future__ import annotations

from afteraction.core.capture import clean_call, clean_env, clean_run, clean_task, clean_text
from afteraction.core.sanitize import CUT, LIMITS, Limits
from afteraction.model import Attempt, Evidence, Run
from tests.builders import ACME, T0, call

KEY = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"


def test_clean_call_scrubs_omits_and_reports() -> None:
    clean, problems = clean_call(
        "deploy\n", {"env": "prod", "token": KEY, "obj": object()}, f"used {KEY}", f"AuthError: {KEY}",
        where="attempts[0].calls[2]", allow=("env", "token"), limits=LIMITS,
    )  # fmt: skip
    assert clean.tool == "deploy"
    assert clean.args["env"] == "prod" and clean.args["token"] == "[REDACTED]"
    assert KEY not in repr(clean)
    assert [p.field for p in problems] == ["attempts[0].calls[2].args.obj"]


def test_task_and_env_are_scrubbed_and_bounded() -> None:
    assert KEY not in clean_task(f"deploy with {KEY} please", LIMITS)
    assert clean_task("a  b\n c", LIMITS) == "a b c"
    assert len(clean_task("x" * 10_000, Limits(max_task=100))) < 130
    assert KEY not in repr(clean_env({"token_hint": f"use {KEY}", "os\n": "linux"}))
    assert clean_env({"os\n": "linux"}) == {"os": "linux"}
    # a plain-looking value is still a secret under a secret-named key, as in sanitize
    assert clean_env({"API_TOKEN": "plainvalue123", "region": "eu"}) == {"API_TOKEN": "[REDACTED]", "region": "eu"}


def test_clean_run_keeps_shape_and_drops_over_the_limits() -> None:
    run = Run(
        id="r",
        task=f"rotate {KEY}",
        scope=ACME,
        started_at=T0,
        state="completed",
        attempts=tuple(Attempt(i, tuple(call("poll", result=KEY) for _ in range(5))) for i in range(4)),
        evidence=(Evidence("done", True, detail=KEY),),
    )
    clean, problems = clean_run(run, limits=Limits(max_calls=3, max_attempts=2))
    assert KEY not in repr(clean)
    assert [len(a.calls) for a in clean.attempts] == [3, 3]
    assert [p.field for p in problems] == ["attempts[0].calls", "attempts[1].calls", "attempts"]


def test_task_lines_are_joined_before_scrubbing() -> None:
    """Found by the third red-team pass: the task was scrubbed line by line, then joined, so a value on the line
    below its name and a card across two lines were stored readable."""
    task = clean_task("Rotate creds. db password:\nHunter2Pass-9, card 4111 1111\n1111 1111", LIMITS)
    assert "Hunter2Pass-9" not in task and "1111 1111" not in task
    assert task == "Rotate creds. db password: [REDACTED:secret_assignment], card [REDACTED:card]"


def test_task_text_keeps_no_control_character() -> None:
    """A person's status reason goes through ``clean_task`` too: ESC and BEL were kept, so an OSC 52
    sequence (``ESC ] 52 ; c ; … BEL``, a terminal's clipboard write) was stored and printed whole."""
    reason = clean_task("ok\x1b]52;c;ZWNobw==\x07\x1b]0;PWNED\x07 done\x9b2J\x00", LIMITS)
    assert reason == "ok ]52;c;ZWNobw== ]0;PWNED done 2J"


def test_text_far_over_its_limit_is_trimmed_before_it_is_scrubbed() -> None:
    """Found by a resources session: a 1 MB task or error was scrubbed whole in the agent's thread (seconds),
    then cut to a few thousand characters. What is kept is the same; the cut counts every character."""
    key = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
    text = f"deploy failed with {key} " + "1234 5678 " * 100_000
    limits = Limits(max_string=500)
    cleaned = clean_text(text, limits)
    assert key not in cleaned and cleaned.startswith("deploy failed with [REDACTED:api_key] 1234 5678")
    went = len(text) + len("[REDACTED:api_key]") - len(key) - 500  # trimmed before scrubbing, or cut after
    assert cleaned.endswith(CUT.chars.format(n=went)) and len(cleaned) == 500 + len(CUT.chars.format(n=went))
    task = clean_task(text, limits)
    assert key not in task and len(task) < limits.max_task + 64
