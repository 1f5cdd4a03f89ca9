"""A lesson that arrives whole (added by the host, imported, posted to the service) keeps no control character in
its one-line texts, as a recorded task does (``clean_task``): an escape sequence planted in its task or status
reason would retitle the terminal, or write the clipboard (OSC 52), of whoever reads the JSON raw."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

import afteraction as aa
from afteraction.cli import main
from afteraction.core.capture import clean_experience, clean_task
from afteraction.core.sanitize import LIMITS
from afteraction.memory import Memory
from afteraction.model import Scenario, Solution, Tried
from afteraction.server import create_app
from afteraction.store.events import open_events
from afteraction.testing import make_experience
from tests.server.conftest import LIMITS as SERVER_LIMITS
from tests.server.conftest import tenant_from_header

SCOPE = aa.Scope(tenant="acme", app="support", project="refunds")
TITLE = "\x1b]0;PWNED\x07\x1b[2J"
CLIPBOARD = "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07"
TASK = f"refund stuck pending {TITLE} task"
REASON = f"revoked by ops {CLIPBOARD} see ticket"


def planted() -> aa.Experience:
    return make_experience(
        TASK,
        f"refund lesson\nline two {TITLE}",
        scope=SCOPE,
        id="exp_esc",
        status=aa.Status.REVOKED,
        summary="first line\nsecond line",
        status_reason=REASON,
        wordings=(f"refund\nstill pending {TITLE}", "\x1b\x07"),
        scenario=Scenario(task=TASK, symptoms=("HTTP 502\nBad gateway",), failure_signature=f"HTTP 502{TITLE}"),
        solution=Solution(tried=(Tried(0, "refund", "Err\x1b[31m"),), worked="attempt 1", steps=("a\nb",)),
    )


def controls(text: str) -> list[str]:
    return [c for c in text if ord(c) < 32 or 0x7F <= ord(c) <= 0x9F]


def test_the_one_line_texts_are_folded_as_a_recorded_task_is() -> None:
    clean = clean_experience(planted())
    assert clean.task == clean_task(TASK, LIMITS) == "refund stuck pending ]0;PWNED [2J task"
    assert clean.status_reason == "revoked by ops ]52;c;Y3VybCBldmlsLnNoIHwgc2g= see ticket"
    assert clean.wordings == ("refund still pending ]0;PWNED [2J",)  # one that folds to nothing is left out
    assert clean.scenario is not None and clean.solution is not None
    assert clean.scenario.task == clean.task
    assert clean.scenario.failure_signature == "HTTP 502 ]0;PWNED [2J"
    assert clean.solution.tried[0].error_class == "Err [31m"


def test_the_texts_of_many_lines_keep_their_lines() -> None:
    clean = clean_experience(planted())
    assert clean.summary == "first line\nsecond line"
    assert clean.lesson.startswith("refund lesson\nline two")
    assert clean.scenario is not None and clean.scenario.symptoms == ("HTTP 502\nBad gateway",)
    assert clean.solution is not None and clean.solution.steps == ("a\nb",)


def test_a_clean_lesson_is_returned_as_it_is() -> None:
    lesson = make_experience("Refund ticket 42 is stuck in pending", scope=SCOPE, status_reason="checked by ops")
    assert clean_experience(lesson) is lesson


def test_a_lesson_the_host_adds_keeps_no_control_character(tmp_path: Path) -> None:
    with aa.Memory.open(tmp_path / "m.db", embedder=None) as mem:
        assert mem.add(planted())
        got = mem.get("exp_esc", scope=SCOPE)
    assert not controls(got.task) and not controls(got.status_reason)
    assert got.task == "refund stuck pending ]0;PWNED [2J task"


def test_an_imported_lesson_keeps_no_control_character(tmp_path: Path) -> None:
    source = tmp_path / "esc.jsonl"
    source.write_text(json.dumps(planted().to_dict()) + "\n")
    db = str(tmp_path / "m.db")
    done = CliRunner().invoke(main, ["import", str(source), "--db", db])
    assert done.exit_code == 0, done.output
    with aa.Memory.open(db, embedder=None) as mem:
        got = mem.get("exp_esc", scope=SCOPE)
    assert not controls(got.task) and not controls(got.status_reason)


@pytest.fixture
def http(tmp_path: Path) -> Iterator[TestClient]:
    events = open_events(str(tmp_path / "server.db"))
    memory = Memory(events.store)
    app = create_app(events, tenant=tenant_from_header, limits=SERVER_LIMITS, memory=memory)
    with TestClient(app, raise_server_exceptions=False, headers={"x-test-tenant": "acme"}) as found:
        yield found
    memory.close()
    events.close()


def test_a_posted_lesson_is_read_back_without_control_characters(http: TestClient) -> None:
    answer = http.post("/experience/lessons", json={"lessons": [planted().to_dict()]})
    assert answer.status_code in (200, 201), answer.text
    params = {"app": "support", "project": "refunds", "status": "revoked"}
    [listed] = http.get("/experience/lessons", params=params).json()["lessons"]
    assert listed["task"] == "refund stuck pending ]0;PWNED [2J task"
    assert listed["status_reason"] == "revoked by ops ]52;c;Y3VybCBldmlsLnNoIHwgc2g= see ticket"
