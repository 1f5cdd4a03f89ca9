"""``name: <words>``: a message about the credential is kept, a value (a passphrase of ordinary words too) is not."""

from __future__ import annotations

import pytest

from afteraction.core.redact import scrub_text


@pytest.mark.parametrize(
    "text",
    [
        "secret: not found",
        "CreateContainerConfigError: secret: not found",
        "passwd: password updated successfully",
        "token: not set in namespace prod",
        "auth: token refresh failed, retrying",
        "csrf: token mismatch on /checkout",
        "password: password reset successfully.",
    ],
)
def test_a_message_about_a_credential_is_kept(text: str) -> None:
    assert scrub_text(text) == text


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("password: correct horse battery staple", "password: [REDACTED:secret_assignment]"),
        ("password: hunter2 not found", "password: [REDACTED:secret_assignment]"),
        ("password: Correct Horse not found", "password: [REDACTED:secret_assignment]"),
        ("Authorization: Token abcdefghijklmnopqrst", "Authorization: Token [REDACTED:secret_assignment]"),
        ("auth: token secretvalue failed", "auth: token [REDACTED:secret_assignment]"),
        ("secret: db-credentials notfound", "secret: [REDACTED:secret_assignment]"),
        # a word before the status phrase may be the value: secrets win
        ("secret: db-credentials not found", "secret: [REDACTED:secret_assignment]"),
        ("password: swordfish is not valid for user bob", "password: [REDACTED:secret_assignment]"),
        ("password: letmein updated successfully", "password: [REDACTED:secret_assignment]"),
        ("login failed, password: hunter two not found", "login failed, password: [REDACTED:secret_assignment]"),
        ("the api_key: swordfishkey not set in env", "the api_key: [REDACTED:secret_assignment]"),
        ('password: "db-credentials not found"', 'password: "[REDACTED:secret_assignment]"'),
        ("password=db-credentials not found", "password=[REDACTED:secret_assignment] not found"),
    ],
)
def test_a_value_is_still_redacted(text: str, shown: str) -> None:
    assert scrub_text(text) == shown
