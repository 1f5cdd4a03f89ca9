from __future__ import annotations

import pytest

from afteraction.core.errorclass import error_class


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("LockHeldError: refund lock is held", "LockHeldError"),
        (
            "Traceback (most recent call last):\n  File 'x', line 1\nrequests.exceptions.ConnectTimeout: boom",
            "ConnectTimeout",
        ),
        ("agents.exceptions.UserError: Error running tool divide", "UserError"),
        ("ZeroDivisionError", "ZeroDivisionError"),
        ("KeyError: 'x'", "KeyError"),
        ("HTTP 401", "HTTP 401"),
        ("feed answered 401 Unauthorized", "HTTP 401"),
        ("status code 503", "HTTP 503"),
        ("Command failed: exit code 2", "exit 2"),
        ("returned non-zero exit status 1", "exit 1"),
        ("[Errno 2] No such file or directory: 'x'", "ENOENT"),
        ("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED"),
        ("the request timed out after 30s", "Timeout"),
        ("deadline exceeded", "Timeout"),
        ("Note: something odd", "Error"),
        ("", "Error"),
        (None, "Error"),
    ],
)
def test_error_class(text: str | None, expected: str) -> None:
    assert error_class(text) == expected
