"""What the ``afteraction`` logger writes of an error: scrubbed, and on one line, whether the default ``on_error``
writes it or a host's handler failed on it (at once, or when its coroutine was awaited on a loop)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

import afteraction as aa
from afteraction import reporting
from afteraction.core.verify import check
from afteraction.reporting import deliver, log_error
from tests.test_recorder import SCOPE

DSN = "postgresql://app:S3cretPassw0rd@db.internal:5432/orders"
TOKEN = "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
FORGED = "Bad gateway\n2026-12-01 11:00:00,000 CRITICAL afteraction: all keys revoked\x1b[2J\x1b]0;owned\x07\u202e"


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "afteraction" and r.levelno == logging.WARNING]


def clean(message: str) -> None:
    """``message`` holds neither secret, nor a character that would start a line or drive a terminal."""
    assert "S3cretPassw0rd" not in message and TOKEN not in message
    assert not any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F or c == "\u202e" for c in message), repr(message)


def test_logged_scrubs_then_writes_controls_as_their_escapes() -> None:
    assert reporting.logged(f"POST /x: {FORGED}") == (
        "POST /x: Bad gateway\\n2026-12-01 11:00:00,000 CRITICAL afteraction: all keys revoked\\x1b[2J\\x1b]0;owned"
        "\\x07\\u202e"
    )
    clean(said := reporting.logged(f"POST /x: {FORGED} {TOKEN}\n"))
    assert said.endswith(" [REDACTED:api_key]\\n")
    assert reporting.logged("password:\nhunter2") == "password:\\n[REDACTED:secret_assignment]"  # scrubbed as written
    assert reporting.logged("plain words, 3 of them") == "plain words, 3 of them"


def test_the_default_handler_writes_an_error_on_one_line(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="afteraction"):
        log_error(RuntimeError(f"the service answered 502: {FORGED} ({DSN})"), "run.reference_block")
    [message] = warnings(caplog)
    clean(message)
    assert message.startswith("afteraction: run.reference_block failed, the agent continues without memory: ")
    assert "Bad gateway\\n2026-12-01" in message and "[REDACTED:url_credentials]" in message


def test_a_failing_handler_logs_the_error_it_was_given_scrubbed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def db_has_order(run: aa.Run) -> bool:
        raise ConnectionError(f"could not connect to {DSN} (token {TOKEN})\n{FORGED}")

    def on_error(exc: BaseException, where: str) -> None:
        raise RuntimeError(f"alerting backend down: {DSN}\x1b[2J")

    verify = [check("order-stored", db_has_order)]
    with (
        caplog.at_level(logging.WARNING, logger="afteraction"),
        aa.Memory.open(tmp_path / "m.db", embedder=None, on_error=on_error) as mem,
        mem.run("refund ticket 42", scope=SCOPE, verify=verify) as run,
    ):
        run.tool("refund", args={}, result="ok")
    [message] = warnings(caplog)
    clean(message)
    assert message.startswith("afteraction: on_error failed (RuntimeError(") and "on run.finish: " in message
    assert "alerting backend down" in message and "could not connect to" in message


def test_a_failing_async_handler_logs_the_error_it_was_given_scrubbed(caplog: pytest.LogCaptureFixture) -> None:
    async def on_error(exc: BaseException, where: str) -> None:
        raise RuntimeError(f"alerting backend down: {TOKEN}\n")

    async def main() -> None:
        deliver(on_error, ConnectionError(f"{DSN}\n{FORGED}"), "run.finish")  # scheduled on this loop
        await asyncio.sleep(0.01)

    with caplog.at_level(logging.WARNING, logger="afteraction"):
        asyncio.run(main())
        deliver(on_error, ConnectionError(f"{DSN}\n{FORGED}"), "run.finish")  # run to its end here
    messages = warnings(caplog)
    assert len(messages) == 2
    for message in messages:
        clean(message)
        assert "alerting backend down" in message and "[REDACTED:url_credentials]" in message
