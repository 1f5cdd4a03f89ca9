"""Golden files: rendered output pinned in tests/golden/. Regenerate on purpose only, with
``AFTERACTION_REGEN_GOLDEN=1 make test``, and review the diff."""

from __future__ import annotations

import os
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent / "golden"


def assert_golden(name: str, actual: str) -> None:
    path = GOLDEN / name
    if os.environ.get("AFTERACTION_REGEN_GOLDEN") == "1":
        path.write_text(actual, encoding="utf-8")
        return
    assert path.exists(), f"no golden file {path}; run with AFTERACTION_REGEN_GOLDEN=1 to create it"
    expected = path.read_text(encoding="utf-8")
    if actual != expected:
        import difflib

        print("".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True))))
    assert actual == expected, f"output differs from {path} (AFTERACTION_REGEN_GOLDEN=1 regenerates it)"
