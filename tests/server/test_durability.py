"""A 202 is durable: a real ``afteraction serve --dev`` killed with SIGKILL while clients post,
right after it acknowledged events, is restarted on the same file and returns every event it
acknowledged (single events and batches)."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.server.test_ingest import event
from tests.serving import started


def post_until_refused(url: str, worker: int, acked: list[str], batch: bool) -> None:
    """Post events until the server is gone; record each id it acknowledged (202 or 200)."""
    with httpx.Client(base_url=url, timeout=5) as http:
        for n in range(100_000):
            try:
                if batch:
                    items = [event(f"w{worker}-{n}-{i}", session_id=f"b{worker}") for i in range(20)]
                    answer = http.post("/events/batch", json=items)
                    ids = [item["id"] for item in items]
                else:
                    answer = http.post("/events", json=event(f"w{worker}-{n}", session_id=f"s{worker}"))
                    ids = [f"w{worker}-{n}"]
            except httpx.TransportError:
                return
            assert answer.status_code in (200, 202), answer.text
            acked.extend(ids)


@pytest.mark.slow
def test_every_acknowledged_event_survives_kill_9(tmp_path: Path) -> None:
    db = tmp_path / "durable.db"
    acked: list[str] = []
    with started(db, "--dev") as (process, url):
        workers = [
            threading.Thread(target=post_until_refused, args=(url, n, acked, n == 0), daemon=True) for n in range(4)
        ]
        for worker in workers:
            worker.start()
        deadline = time.monotonic() + 30
        while len(acked) < 400 and time.monotonic() < deadline:
            time.sleep(0.001)
        os.kill(process.pid, signal.SIGKILL)  # no shutdown, no final checkpoint
        process.wait()
        for worker in workers:
            worker.join(timeout=10)
        assert not any(worker.is_alive() for worker in workers)
    assert len(acked) >= 400
    with started(db, "--dev") as (_, url):
        stored = httpx.get(f"{url}/export", params={"format": "ndjson"}, timeout=30).text.splitlines()
    found = {json.loads(line)["id"] for line in stored}
    missing = set(acked) - found
    assert not missing, f"{len(missing)} acknowledged events lost, e.g. {sorted(missing)[:5]}"
