"""An error that echoes a refused value shows it scrubbed and short (``_check.echoed``)."""

from __future__ import annotations

from typing import Any

import pytest

from afteraction.core.otlp_spans import decode_traces
from afteraction.errors import ValidationError
from afteraction.model import Event, _check

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def event(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "specversion": "0.2.0",
        "id": "e1",
        "time": "2026-01-01T00:00:00Z",
        "source": "agent://a",
        "type": "task.created",
        "session_id": "s1",
        "trace_id": "t1",
        "payload": {},
    }
    return data | changes


def refused(data: dict[str, Any]) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        Event.from_dict(data)
    return caught.value


def test_echoed_cuts_short_and_never_shows_part_of_a_long_word() -> None:
    assert _check.echoed("subagnet") == "subagnet"
    assert _check.echoed("x" * 5000) == "…"
    assert _check.echoed("y" * 30 + " " + TOKEN) == "y" * 30 + "…"
    assert _check.echoed("a b c d e f g h i j k l m n o p q r s t u v") == "a b c d e f g h i j k l m n o p q r s t…"
    assert _check.echoed(TOKEN) == TOKEN  # whole and short: the edges that send an error out scrub it


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("agent_role", f"Authorization: Bearer {TOKEN}"),
        ("agent_role", TOKEN + "z" * 5000),
        ("type", f"task.{TOKEN}"),
        ("time", "t" + TOKEN),
        ("specversion", TOKEN + "!"),
    ],
)
def test_an_event_field_refused_is_echoed_short_and_without_a_cut_token(field: str, value: str) -> None:
    error = refused(event(**{field: value}))
    assert error.field == field
    assert TOKEN[:12] not in str(error)
    assert len(error.rule) < 200


def test_an_error_logged_by_default_is_scrubbed(caplog: pytest.LogCaptureFixture) -> None:
    from afteraction.reporting import log_error

    with caplog.at_level("WARNING", logger="afteraction"):
        log_error(ValidationError("agent_role", f"must be one of …; got {TOKEN!r}"), "run.finish")
    assert TOKEN not in caplog.text and "[REDACTED" in caplog.text


@pytest.mark.parametrize("name", ["traceId", "spanId"])
def test_an_otlp_id_refused_is_echoed_scrubbed(name: str) -> None:
    span = {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331", "name": "s"}
    span[name] = TOKEN
    body = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "s"}, "spans": [span]}]}]}
    batch = decode_traces(body)
    assert batch.rejected == 1 and TOKEN not in batch.errors[0] and "[REDACTED:api_key]" in batch.errors[0]
