"""`afteraction serve` with API keys, for real: keys made with `afteraction keys`, a uvicorn
process, httpx and the AEP Python SDK as clients; and what the commands refuse."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from aep import AEPClient
from aep.exceptions import AEPAuthError, AEPRateLimitError
from click.testing import CliRunner

from afteraction.cli import main
from afteraction.store.keys import ServerSecret
from tests.server.test_ingest import event
from tests.server.test_serve import free_port

SECRET = "served-secret-" + "q" * 40
ENV = {"AFTERACTION_SERVER_SECRET": SECRET, "AFTERACTION_SERVER_SECRET_FILE": None}


def cli(*args: str, env: dict[str, str | None] | None = None) -> tuple[int, str]:
    done = CliRunner(env=ENV if env is None else env).invoke(main, list(args))
    return done.exit_code, done.output


def create(db: Path, *options: str) -> dict[str, Any]:
    code, out = cli("keys", "create", "--db", str(db), "--json", *options)
    assert code == 0, out
    found: dict[str, Any] = json.loads(out)
    return found


@dataclass
class Served:
    url: str
    db: Path
    log: Path


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    db, log = tmp_path / "served.db", tmp_path / "server.log"
    port = free_port()
    command = [sys.executable, "-c", "from afteraction.cli import main; main()", "serve"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--db", str(db)]
    env = {**os.environ, "AFTERACTION_SERVER_SECRET": SECRET}
    env.pop("AFTERACTION_SERVER_SECRET_FILE", None)
    url = f"http://127.0.0.1:{port}"
    with log.open("wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + 20
        while True:
            if process.poll() is not None:
                pytest.fail(f"the server exited with {process.returncode}: {log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{url}/sessions", timeout=1).status_code == 401:
                    break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    pytest.fail("the server did not answer within 20 s")
                time.sleep(0.1)
        yield Served(url, db, log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_a_real_server_with_keys(served: Served) -> None:
    writer = create(served.db, "--tenant", "acme", "--scope", "read,write", "--name", "bot")
    other = create(served.db, "--tenant", "globex", "--scope", "read,write")
    limited = create(served.db, "--tenant", "acme", "--scope", "read", "--rate", "0.1/s", "--burst", "1")
    auth = {"authorization": f"Bearer {writer['api_key']}"}
    with httpx.Client(base_url=served.url, timeout=10) as http:
        missing = http.post("/events", json=event())
        assert missing.status_code == 401 and missing.json()["accepted"] is False
        assert http.post("/events", json=event(), headers=auth).status_code == 202
        globex = {"authorization": f"Bearer {other['api_key']}"}
        assert http.post("/events", json=event(), headers=globex).json()["duplicate"] is False
        assert [e["id"] for e in http.get("/sessions/ses-1/events", headers=auth).json()["events"]] == ["evt-1"]

        slow = {"authorization": f"Bearer {limited['api_key']}"}
        assert http.get("/sessions", headers=slow).status_code == 200
        refused = http.get("/sessions", headers=slow)
        assert refused.status_code == 429 and int(refused.headers["retry-after"]) in range(8, 11)
        assert refused.json()["errors"][0]["message"].startswith(f"key {limited['key']['id']} is over its rate")

        assert cli("keys", "revoke", writer["key"]["id"], "--db", str(served.db))[0] == 0
        assert http.get("/sessions", headers=auth).status_code == 401  # at once: no cache to expire
    logged = served.log.read_text()
    assert "API keys required" in logged
    for found in (writer, other, limited):
        assert found["api_key"] not in logged and found["signing_secret"] not in logged
    assert SECRET not in logged


def test_the_aep_sdk_emits_signed_events_with_its_key(served: Served) -> None:
    key = create(served.db, "--tenant", "acme", "--scope", "read,write", "--require-signatures")
    with AEPClient(served.url, api_key=key["api_key"], hmac_secret=key["signing_secret"], max_retries=0) as client:
        assert client.emit(event("sdk-1", payload={"tool": "search", "args": {"q": "refund"}})) == {
            "accepted": True,
            "duplicate": False,
            "id": "sdk-1",
        }
        assert [e["id"] for e in client.get_session_events("ses-1")["events"]] == ["sdk-1"]
    wrong = AEPClient(served.url, api_key=key["api_key"], hmac_secret="afs_not-the-secret", max_retries=0)
    with wrong as client, pytest.raises(AEPAuthError):
        client.emit(event("sdk-2"))
    with AEPClient(served.url, api_key=key["api_key"], max_retries=0) as client, pytest.raises(AEPAuthError):
        client.emit(event("sdk-3"))  # unsigned, and this key requires signatures
    slow = create(served.db, "--tenant", "acme", "--scope", "write", "--rate", "0.1/s", "--burst", "1")
    with AEPClient(served.url, api_key=slow["api_key"], max_retries=0) as client:
        client.emit(event("sdk-4"))
        with pytest.raises(AEPRateLimitError) as caught:
            client.emit(event("sdk-5"))
        assert caught.value.retry_after in range(8, 11)  # 10 s for a token at 0.1/s, less the time taken


# the commands


def test_keys_create_list_revoke(tmp_path: Path) -> None:
    db = str(tmp_path / "k.db")
    code, out = cli("keys", "create", "--db", db, "--tenant", "acme", "--scope", "read,admin", "--rate", "5/s")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("created afa_") and "tenant 'acme'" in lines[0]
    token = lines[1].split(": ", 1)[1]
    signing = lines[2].split(": ", 1)[1].strip()
    key_id = lines[0].split()[1]
    assert token.startswith(key_id + "_") and signing.startswith("afs_")
    for args in (["keys", "list", "--db", db], ["keys", "list", "--db", db, "--json", "--tenant", "acme"]):
        code, listed = cli(*args)
        assert code == 0 and key_id in listed
        secret = token[len(key_id) + 1 :]  # itself may hold "_": base64url
        assert token not in listed and secret not in listed and signing not in listed
    code, listed = cli("keys", "list", "--db", db)
    assert "acme  read,admin  5/s burst 5  active" in listed
    assert cli("keys", "revoke", key_id, "--db", db, "--tenant", "globex")[0] == 1
    assert cli("keys", "revoke", key_id, "--db", db) == (0, f"revoked {key_id} (tenant 'acme')\n")
    assert "revoked 20" in cli("keys", "list", "--db", db)[1]


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--scope", "read,root"], "--scope"), (["--scope", "read", "--rate", "fast"], "--rate"),
     (["--scope", "read", "--burst", "3"], "burst"), (["--scope", ""], "scope")],
)  # fmt: skip
def test_keys_create_refuses_bad_options(tmp_path: Path, args: list[str], message: str) -> None:
    code, out = cli("keys", "create", "--db", str(tmp_path / "k.db"), "--tenant", "acme", *args)
    assert code == 2 and message in out


def test_keys_create_and_serve_need_the_server_secret(tmp_path: Path) -> None:
    db = str(tmp_path / "k.db")
    bare = {"AFTERACTION_SERVER_SECRET": None, "AFTERACTION_SERVER_SECRET_FILE": None}
    for args in (["keys", "create", "--tenant", "a", "--scope", "read"], ["serve"]):
        code, out = cli(*args, "--db", db, env=bare)
        assert code == 2 and "AFTERACTION_SERVER_SECRET" in out and "--dev" in out
    short = {"AFTERACTION_SERVER_SECRET": "tiny", "AFTERACTION_SERVER_SECRET_FILE": None}
    code, out = cli("serve", "--db", db, env=short)
    assert code == 2 and "at least 32" in out and "tiny" not in out
    (tmp_path / "secret").write_text(SECRET + "\n")
    code, out = cli("keys", "create", "--tenant", "a", "--scope", "read", "--db", db, "--json",
                    "--secret-file", str(tmp_path / "secret"), env=bare)  # fmt: skip
    made = json.loads(out)
    assert code == 0 and made["signing_secret"] == ServerSecret(SECRET.encode()).signing_secret(made["key"]["id"])
