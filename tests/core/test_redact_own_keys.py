"""afteraction's own credentials are secrets to its scrubber: an API key (``afa_<id>_<secret>``) keeps its id,
which is no secret (``keys list`` shows it), and loses the rest; a signing secret (``afs_…``) goes whole."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

import afteraction as aa
from afteraction.cli import main
from afteraction.core.redact import scrub_text
from afteraction.store.keys import ServerSecret, key_id_of, mint

SECRET = "own-keys-secret-" + "k" * 40
SCOPE = aa.Scope(tenant="acme", app="ops", project="keys")


def created(tmp_path: Path) -> tuple[str, str]:
    """An API key and its signing secret as ``afteraction keys create --json`` prints them."""
    env = {"AFTERACTION_SERVER_SECRET": SECRET, "AFTERACTION_SERVER_SECRET_FILE": None}
    done = CliRunner(env=env).invoke(
        main, ["keys", "create", "--db", str(tmp_path / "keys.db"), "--tenant", "acme", "--scope", "read", "--json"]
    )
    assert done.exit_code == 0, done.output
    found = json.loads(done.output)
    return found["api_key"], found["signing_secret"]


def test_a_key_from_keys_create_is_scrubbed_to_its_id(tmp_path: Path) -> None:
    key, signing = created(tmp_path)
    key_id = key_id_of(key)
    assert key_id is not None
    assert scrub_text(f"the key is {key}") == f"the key is {key_id}_[REDACTED:api_key]"
    assert scrub_text(f"hmac {signing}.") == "hmac [REDACTED:api_key]."
    assert scrub_text(f'{{"api_key": "{key}"}}').count(key[len(key_id) + 1 :]) == 0


def test_every_minted_key_and_signing_secret_is_scrubbed() -> None:
    server = ServerSecret(SECRET.encode())
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    for _ in range(200):  # base64url secrets of every shape: leading ``-`` or ``_``, runs of either
        key, token = mint("acme", "read", now=now)
        signing = server.signing_secret(key.id)
        said = scrub_text(f"using {token} (signing {signing})")
        assert said == f"using {key.id}_[REDACTED:api_key] (signing [REDACTED:api_key])", (token, signing)


@pytest.mark.parametrize(
    "text",
    [
        "afa_3f9c0a1be2d47c55",  # a key id alone: shown by keys list, in errors
        "key afa_3f9c0a1be2d47c55 is over its rate",
        "afteraction keys create prints afa_3f9c0a1be2d47c55_Vn0… and afs_kq3…",  # the docs' shortened forms
        "afs_client_configuration_value",  # a name, not a 43-character secret
        "mount the afs_volume_of_the_cluster_named_backups_here",
    ],
)
def test_what_is_not_a_credential_of_afteraction_is_kept(text: str) -> None:
    assert scrub_text(text) == text


def test_a_recorded_lesson_keeps_no_afteraction_credential(tmp_path: Path) -> None:
    key, signing = created(tmp_path)
    with aa.Memory.open(tmp_path / "m.db", embedder=None) as mem:
        with mem.run(f"Rotate the afteraction key; the old one was {key}", scope=SCOPE) as run:
            run.tool("deploy", args={"note": "x"}, error=f"401 from service using {key} (signing {signing})")
            run.next_attempt()
            run.tool("deploy", args={"note": "y"}, result=f"ok, configured the client with {key} and {signing}")
            run.check("deployed", passed=True, detail=f"used {key}")
        block = mem.reference_block("Rotate the afteraction key", scope=SCOPE)
        lessons = [json.dumps(found.to_dict()) for found in mem.export()]
    assert lessons
    secret = key[len("afa_0123456789abcdef_") :]
    for text in (block, *lessons):
        assert secret not in text and signing not in text
    assert f"{key_id_of(key)}_[REDACTED:api_key]" in lessons[0]
