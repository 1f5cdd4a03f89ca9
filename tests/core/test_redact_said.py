"""A secret said in a sentence (``my password is …``) and a password holding ``&`` at a text's start: both were
kept, in a task an OTLP span carried into a lesson and its block (h18 #5, #6)."""

from __future__ import annotations

import pytest

from afteraction.core.redact import scrub_text


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "Book a flight to Lisbon, my password is Tr0ub4dor3horse9Qx",
            "Book a flight to Lisbon, my password is [REDACTED:password]",
        ),
        ("the password was swordfish.", "the password was [REDACTED:password]."),
        ("my password is hunter2, thanks", "my password is [REDACTED:password], thanks"),
        ("the pin is 4821", "the pin is [REDACTED:password]"),
        ("api key is x7Qp2kLm9Zt4", "api key is [REDACTED:secret_said]"),
        ("token is abc123XYZ789def", "token is [REDACTED:secret_said]"),
        (
            "password=Tr0ub&3-horse-9Qx rejected by the portal",
            "password=[REDACTED:secret_assignment] rejected by the portal",
        ),
    ],
)
def test_a_secret_said_is_redacted(text: str, shown: str) -> None:
    assert scrub_text(text) == shown


@pytest.mark.parametrize(
    "text",
    [
        "password is required",
        "the password is expired",
        "my password is not working",
        "password is ${DB_PASSWORD}",
        "the token is refreshed every hour",
        "This key is used for signing",
        "the secret is out",
        "the version pin is 1.2.3",
        "this pin is bent",
        "250001: Incorrect username or password was specified. User LODESTAR_SVC",  # held-out 3's lesson
        "the password is pending rotation",
        # h20 #4: a shell's working directory, a value an error names, a rule about passwords, a dated pin
        "the pwd is /home/alice/project",
        "cwd was /tmp/build and pwd was /workspace/app",
        "The password is case-sensitive.",
        "AttributeError: password is None",
        "the password is optional",
        "Password is 8-64 characters long",
        "the version pin is 20240101",
    ],
)
def test_a_sentence_about_a_credential_is_kept(text: str) -> None:
    assert scrub_text(text) == text


def test_a_form_body_still_ends_its_value_at_the_next_field() -> None:
    assert scrub_text("password=abc&user=bob") == "password=[REDACTED:secret_assignment]&user=bob"
