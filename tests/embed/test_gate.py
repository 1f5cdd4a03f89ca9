"""Exiting while the embedder works in a background thread ends the process cleanly, not with
onnxruntime's abort ("terminate called without an active exception", status 134)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from afteraction.embed.gate import ExitGate
from afteraction.errors import EmbedderError

pytest.importorskip("onnxruntime")

EXIT_DURING_LOAD = """
import sys
import afteraction as aa
from afteraction.testing import make_experience
scope = aa.Scope(tenant="acme", app="support", project="refunds")
mem = aa.Memory.open(sys.argv[1])  # the default embedder loads in the background
mem.add(make_experience("Refund ticket 42 is stuck in pending", scope=scope))
mem.reference_block("refund stuck in pending", scope=scope)  # the vector channel times out on the load
"""  # then the process exits while onnxruntime builds the session (seen: exit 134 without the gate)

EXIT_DURING_RUN = """
import threading, time
from afteraction.embed.minilm import MiniLM
model = MiniLM()
texts = ["a lesson about a stuck refund and the lock that held it"] * 2000
threading.Thread(target=model.embed, args=(texts,), daemon=True).start()
time.sleep(0.2)  # exits while onnxruntime runs a batch
"""


@pytest.mark.parametrize("script", [EXIT_DURING_LOAD, EXIT_DURING_RUN], ids=["load", "run"])
def test_exit_waits_for_native_work_in_flight(script: str, tmp_path: Path) -> None:
    command = [sys.executable, "-c", script, str(tmp_path / "memory.db")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "terminate called" not in done.stderr


def test_a_closed_gate_refuses_new_calls_and_waits_for_old_ones() -> None:
    gate = ExitGate()
    with gate.call():
        assert gate.close(timeout=0.05) is False  # one call still in flight
    assert gate.close(timeout=0.05) is True
    with pytest.raises(EmbedderError, match="exiting"), gate.call():
        pass
