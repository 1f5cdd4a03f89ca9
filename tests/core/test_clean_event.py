"""clean_event: what the service stores of an ingested event — secrets never, sizes bounded,
the envelope as sent."""

from __future__ import annotations

from typing import Any

import pytest

from afteraction.core.capture import clean_event
from afteraction.core.sanitize import LIMITS, Limits
from afteraction.errors import ValidationError
from afteraction.model import Event


def event(**changes: Any) -> Event:
    return Event.from_dict(
        {
            "specversion": "0.2.0",
            "id": "evt-1",
            "time": "2026-01-01T10:00:00+02:00",
            "source": "agent://deployer",
            "type": "tool.called",
            "session_id": "ses-1",
            "trace_id": "trc-1",
            "payload": {"tool_name": "deploy", "arguments": {"region": "eu"}},
            **changes,
        }
    )


def test_a_clean_event_is_kept_as_it_is() -> None:
    original = event()
    assert clean_event(original, LIMITS) is original


def test_secrets_are_redacted_wherever_they_are() -> None:
    dirty = event(
        payload={
            "tool_name": "deploy",
            "arguments": {"api_key": "sk-live-0123456789abcdef0123", "nested": [{"password": "hunter2"}]},
            "output": "connected with Bearer abcdefghijklmnopqrstuvwxyz0123456789",
        },
        subject="token=ghp_0123456789abcdefghijklmnopqrstuvwxyzAB",
        labels={"env": "prod", "owner": "Authorization: Basic dXNlcjpwYXNzd29yZA=="},
        extensions={"client_secret": "abc123def456"},
        source="https://agent:pw999sourcepass@example.com/deployer",
        tenant="acme password=hunter3tenant",
    )
    clean = clean_event(dirty, LIMITS)
    text = repr(clean.to_dict())
    for secret in (
        "sk-live-0123456789abcdef0123",
        "hunter2",
        "abcdefghijklmnopqrstuvwxyz0123456789",
        "ghp_0123",
        "dXNlcjpw",
        "abc123def456",
        "pw999sourcepass",
        "hunter3tenant",
    ):
        assert secret not in text, secret
    assert clean.payload["arguments"]["api_key"] == "[REDACTED]"
    assert clean.payload["tool_name"] == "deploy"  # ordinary values stay
    assert (clean.id, clean.time, clean.type, clean.session_id) == (dirty.id, dirty.time, dirty.type, dirty.session_id)
    assert clean.instant == dirty.instant


def test_sizes_are_cut_at_the_limits() -> None:
    clean = clean_event(event(payload={"output": "x" * 5000}), Limits(max_string=100))
    assert len(clean.payload["output"]) < 200 and "cut" in clean.payload["output"]


def test_a_value_that_is_not_json_is_named() -> None:
    weird = event()
    object.__setattr__(weird, "payload", {"arguments": {"when": {1, 2}}})
    with pytest.raises(ValidationError) as caught:
        clean_event(weird, LIMITS)
    assert caught.value.field == "payload.arguments.when"


def test_fields_beyond_the_envelope_are_cleaned_too() -> None:
    """AEP allows fields the envelope does not name; the service keeps and returns them, so they are
    cleaned as the payload is (a secret-named field ``[REDACTED]``, a secret in a string redacted)."""
    dirty = event(
        metadata={"api_key": "sk-proj-Extra0123456789abcdefghij", "note": "token sk-proj-Extra0123456789abcdefghij"},
        http_headers={"Authorization": "Bearer abcdefghijklmnopqrstuvwxyz0123456789"},
        access_token="plain-looking-value-7",
        region="eu-west-1",
    )
    clean = clean_event(dirty, LIMITS)
    text = repr(clean.to_dict())
    for secret in ("sk-proj-Extra0123456789", "abcdefghijklmnopqrstuvwxyz0123456789", "plain-looking-value-7"):
        assert secret not in text, secret
    assert clean.extra["metadata"]["api_key"] == "[REDACTED]"
    assert clean.extra["access_token"] == "[REDACTED]"
    assert clean.extra["region"] == "eu-west-1"


def test_a_field_beyond_the_envelope_that_is_not_json_is_named() -> None:
    weird = event(metadata={"ok": 1})
    object.__setattr__(weird, "extra", {"metadata": {"when": {1, 2}}})
    with pytest.raises(ValidationError) as caught:
        clean_event(weird, LIMITS)
    assert caught.value.field == "metadata.when"
