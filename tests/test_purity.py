"""The core is pure: it imports no I/O library and reads no clock, environment or randomness."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import afteraction

SRC = Path(afteraction.__file__).resolve().parent
# Never imported by the core, directly or through anything it imports.
BANNED = [
    "sqlite3", "apsw", "psycopg", "psycopg_pool", "pgvector", "socket", "ssl", "http", "urllib.request",
    "httpx", "requests", "aiohttp", "starlette", "fastapi", "uvicorn", "click", "typer", "opentelemetry",
    "agent_framework", "langgraph", "langchain", "agents", "crewai", "autogen_agentchat", "claude_agent_sdk",
    "pydantic_ai", "onnxruntime", "numpy", "subprocess", "asyncio",
]  # fmt: skip
# Standard modules the core itself must not import (other standard modules may use them).
DIRECT = {"os", "sys", "io", "pathlib", "time", "threading", "logging", "random", "secrets", "uuid", "tempfile",
          "shutil", "socket", "subprocess", "asyncio", "sqlite3", "urllib", "http"}  # fmt: skip

PROBE = """
import importlib, importlib.abc, pkgutil, sys, types
banned = set(sys.argv[2].split(","))
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name in banned or name.split(".")[0] in banned:
            raise ImportError("the core may not import " + name)
        return None
for name in list(sys.modules):
    if name in banned or name.split(".")[0] in banned:
        del sys.modules[name]
sys.meta_path.insert(0, Block())
pkg = types.ModuleType("afteraction"); pkg.__path__ = [sys.argv[1]]; sys.modules["afteraction"] = pkg
import afteraction.core as core
for info in pkgutil.iter_modules(core.__path__):
    importlib.import_module("afteraction.core." + info.name)
print("ok", len(list(pkgutil.iter_modules(core.__path__))))
"""


def test_core_imports_no_io_library() -> None:
    done = subprocess.run(
        [sys.executable, "-I", "-c", PROBE, str(SRC), ",".join(BANNED)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok")


def test_core_imports_no_clock_environment_or_file_module_itself() -> None:
    found = []
    for path in sorted((SRC / "core").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            found += [f"{path.name}: {n}" for n in names if n.split(".")[0] in DIRECT]
    assert found == []


def test_core_reads_no_clock_environment_or_randomness() -> None:
    pattern = re.compile(r"\b(os\.environ|os\.getenv|datetime\.now|datetime\.utcnow|time\.time\(|uuid\.|random\.)")
    offenders = [
        f"{path.name}:{n}: {line.strip()}"
        for path in sorted((SRC / "core").glob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if pattern.search(line)
    ]
    assert offenders == []
