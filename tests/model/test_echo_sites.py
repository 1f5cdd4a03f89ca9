"""Every error that echoes a refused value cuts it between words (``_check.echoed``): a long token cut short at
a fixed length would slip past the scrubber of the edge that sends the error out."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import pytest

from afteraction.core.otlp_spans import decode_traces
from afteraction.core.redact import scrub_text
from afteraction.core.verify import check
from afteraction.errors import ValidationError
from afteraction.model import Run, Scope, Status
from afteraction.store.keys import Key, parse_rate, parse_scopes

# a GitHub token of 93 characters: its first 40 are no secret the scrubber knows
TOKEN = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456"
NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def refused(call: Callable[[], object]) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        call()
    return caught.value


def shows_no_part(text: str) -> None:
    """``text``, scrubbed as an edge sends it, shows no part of ``TOKEN``."""
    assert scrub_text(TOKEN[:32]) == TOKEN[:32]  # why a cut token is a leak
    assert TOKEN[:16] not in scrub_text(text), text


def a_run() -> Run:
    return Run(id="r1", task="t", scope=Scope(tenant="acme", app="a", project="p"), started_at=NOW)


@pytest.mark.parametrize(
    ("field", "call"),
    [
        ("status", lambda: Status.parse(TOKEN)),
        ("id", lambda: Key(id=TOKEN, tenant="acme", scopes=frozenset({"read"}), created_at=NOW)),
        ("scopes", lambda: parse_scopes([TOKEN])),
        ("scopes", lambda: parse_scopes(f"read,{TOKEN}")),
        ("--rate", lambda: parse_rate(TOKEN)),
        ("check 'order-stored'", lambda: check("order-stored", lambda run: TOKEN)(a_run())),  # type: ignore[arg-type,return-value]
    ],
)
def test_a_refused_value_is_echoed_without_part_of_a_token(field: str, call: Callable[[], object]) -> None:
    error = refused(call)
    assert error.field == field
    shows_no_part(str(error))
    assert "…" in error.rule


def test_a_short_refused_value_is_still_echoed_whole() -> None:
    assert "'validatd'" in refused(lambda: Status.parse("validatd")).rule
    assert "'reed'" in refused(lambda: parse_scopes(["reed"])).rule
    assert "got 'ten'" in refused(lambda: parse_rate("ten")).rule
    assert "got 'yes'" in refused(lambda: check("c", lambda run: "yes")(a_run())).rule  # type: ignore[arg-type,return-value]


def test_a_check_with_a_long_id_is_named_without_part_of_a_token() -> None:
    error = refused(lambda: check(TOKEN, lambda run: 2)(a_run()))  # type: ignore[arg-type,return-value]
    shows_no_part(error.field)


def span(**changes: Any) -> dict[str, Any]:
    found = {"traceId": "0123456789abcdef0123456789abcdef", "spanId": "0123456789abcdef", "name": "x"}
    return found | {"startTimeUnixNano": "1", "endTimeUnixNano": "2"} | changes


def request(*spans: dict[str, Any]) -> dict[str, Any]:
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "t"}, "spans": list(spans)}]}]}


@pytest.mark.parametrize("field", ["startTimeUnixNano", "endTimeUnixNano"])
def test_a_span_time_refused_is_echoed_without_part_of_a_token(field: str) -> None:
    batch = decode_traces(request(span(**{field: TOKEN})))
    assert batch.rejected == 1
    [error] = batch.errors
    assert f"{field} must be Unix nanoseconds" in error
    shows_no_part(error)
    assert "got 1.5" in decode_traces(request(span(startTimeUnixNano=1.5))).errors[0]  # a value shown as it is
