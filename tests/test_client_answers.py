"""What a remote memory's errors quote of an answer (``afteraction.client_answers``): whatever sits at the
URL wrote it (a proxy, another program), and the default ``on_error`` writes it to the host's log. A
newline in it forged a log line and an escape sequence reached the terminal (h28): it is one line now,
control characters escaped, secrets scrubbed, cut short."""

from __future__ import annotations

import logging

import httpx
import pytest

import afteraction as aa
from afteraction.client import RemoteMemory
from afteraction.client_answers import QUOTED, raise_for, said
from afteraction.errors import AuthError, StoreError, ValidationError

SCOPE = aa.Scope(tenant="acme", app="support", project="refunds")
FORGED = "Bad gateway\n2026-12-01 11:00:00,000 CRITICAL afteraction: all API keys revoked\x1b[2J\x1b]0;owned\x07"
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def answered(status: int, **content: object) -> httpx.Response:
    return httpx.Response(status, request=httpx.Request("POST", "http://service/experience/search"), **content)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "response",
    [
        pytest.param(answered(502, text=f"{FORGED} token {TOKEN}"), id="page"),
        pytest.param(answered(502, json={"errors": [{"field": None, "message": f"{FORGED} {TOKEN}"}]}), id="json"),
    ],
)
def test_an_answers_text_is_quoted_on_one_line_escaped_and_scrubbed(response: httpx.Response) -> None:
    with pytest.raises(StoreError) as caught:
        raise_for(response)
    message = str(caught.value)
    assert message.startswith("POST /experience/search: the service answered 502: Bad gateway 2026-12-01")
    assert "\n" not in message and "\x1b" not in message and "\x07" not in message
    assert "\\x1b[2J" in message and "\\x07" in message  # shown, not acted on
    assert TOKEN not in message and TOKEN[:12] not in message


def test_a_field_the_answer_names_is_quoted_the_same_way() -> None:
    body = {"errors": [{"field": "query\n\x1b[31mFAKE", "message": "bad\r\nline"}]}
    with pytest.raises(ValidationError) as caught:
        raise_for(answered(400, json=body))
    assert caught.value.field == "query \\x1b[31mFAKE"
    assert caught.value.rule == "bad line"
    with pytest.raises(AuthError, match=r"^POST /experience/search: query \\x1b\[31mFAKE: bad line$"):
        raise_for(answered(401, json=body))


def test_a_long_answer_is_cut_at_a_word_never_inside_a_token() -> None:
    text = "word " * 80 + TOKEN + " tail" * 200
    quoted = said(text)
    assert len(quoted) <= QUOTED + 1 and quoted.endswith("…")
    assert TOKEN[:8] not in quoted
    assert said("x" * 5000).endswith("…") and len(said("x" * 5000)) <= QUOTED + 1


def test_a_forged_line_never_reaches_the_hosts_log(caplog: pytest.LogCaptureFixture) -> None:
    """Inside a run, the default ``on_error`` logs the failure: one record, one line, nothing a terminal acts on."""

    def proxy(request: httpx.Request) -> httpx.Response:
        return httpx.Response(502, text=FORGED)

    remote = RemoteMemory("http://service", transport=httpx.MockTransport(proxy))
    task = "Refund ticket 42 is stuck in pending"
    with caplog.at_level(logging.WARNING, logger="afteraction"), remote.run(task, scope=SCOPE, feedback=False) as run:
        assert run.reference_block() == ""
    remote.close()
    [record] = [r for r in caplog.records if "run.reference_block" in r.getMessage()]
    line = record.getMessage()
    assert "\n" not in line and "\x1b" not in line
    assert "the service answered 502: Bad gateway 2026-12-01 11:00:00,000 CRITICAL" in line
