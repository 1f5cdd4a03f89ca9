"""A RemoteMemory opened with credentials in its URL never shows the password (repr, errors, logs)."""

from __future__ import annotations

import logging

import httpx
import pytest

import afteraction as aa
from afteraction.client import RemoteMemory
from afteraction.errors import ConfigError, StoreError

PASSWORD = "Hunter2Sup3rS3cret"
URL = f"http://admin:{PASSWORD}@127.0.0.1:1"
SCOPE = aa.Scope(tenant="acme", app="a", project="p", agent="g")


def refused(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError(f"[Errno 111] Connection refused to {URL}", request=request)


def test_the_repr_masks_the_password() -> None:
    mem = RemoteMemory(URL, transport=httpx.MockTransport(refused))
    assert repr(mem) == "RemoteMemory('http://admin:***@127.0.0.1:1')"


def test_an_unreachable_service_is_named_without_the_password() -> None:
    mem = RemoteMemory(URL, transport=httpx.MockTransport(refused))
    with pytest.raises(StoreError) as caught:
        mem.search("refund", scope=SCOPE)
    assert PASSWORD not in str(caught.value) and "admin:***@127.0.0.1:1" in str(caught.value)


def test_the_default_log_line_masks_the_password(caplog: pytest.LogCaptureFixture) -> None:
    mem = RemoteMemory(URL, transport=httpx.MockTransport(refused))
    with caplog.at_level(logging.WARNING, logger="afteraction"), mem.run("refund stuck", scope=SCOPE) as run:
        run.tool("t", result="ok")
        run.check("c", passed=True)
    assert caplog.records and PASSWORD not in caplog.text and "admin:***@" in caplog.text


def test_a_url_that_is_not_http_is_refused_without_its_password() -> None:
    with pytest.raises(ConfigError) as caught:
        RemoteMemory(f"ftp://admin:{PASSWORD}@host")
    assert PASSWORD not in str(caught.value)


def test_a_token_given_as_the_user_is_not_shown() -> None:
    token = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
    mem = RemoteMemory(f"http://{token}@127.0.0.1:1")
    assert token not in repr(mem) and "127.0.0.1:1" in repr(mem)
    mem.close()
    upper = RemoteMemory("HTTP://127.0.0.1:1")  # a scheme is any case
    assert upper.url == "HTTP://127.0.0.1:1"
    upper.close()
