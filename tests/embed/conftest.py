"""Fixtures of the embedder tests."""

from __future__ import annotations

import os
from typing import Any

import pytest

from afteraction.embed import MiniLM
from afteraction.errors import ConfigError

SKIP_ENV = "AFTERACTION_SKIP_EMBED"


def bundled_minilm(**options: Any) -> MiniLM:
    """The bundled model with ``options``; skipped (not failed) when it cannot be built and
    ``AFTERACTION_SKIP_EMBED=1``."""
    try:
        return MiniLM(**options)
    except ConfigError as exc:
        if os.environ.get(SKIP_ENV) == "1":
            pytest.skip(f"{SKIP_ENV}=1: {exc}")
        raise


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
