"""Signature refusals name the member and the rule broken (h17 #2); a key cannot both require
signatures and take legacy v1 ones, and one stored with both takes v2 only (h17 #1); a body holding
a lone surrogate escape is refused naming that rule, not "truncated" (h17 #5)."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from afteraction.core.canonical import attach_signature
from afteraction.errors import ValidationError
from afteraction.store.keys import Key, hash_token, mint
from tests.server.keyed import SECRET, Keyed, bearer, keyed
from tests.server.test_ingest import event

GOOD = base64.b64encode(bytes(32)).decode()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Keyed]:
    with keyed(tmp_path / "rules.db") as found:
        yield found


def post(server: Keyed, token: str, data: Any) -> tuple[int, dict[str, str]]:
    answer = server.client.post("/events", json=data, headers=bearer(token))
    return answer.status_code, answer.json()["errors"][0]


@pytest.mark.parametrize(
    ("signature", "field", "says"),
    [
        ({"alg": "HMAC-SHA256", "value": GOOD, "canon": "v2"}, "signature.alg", "got 'HMAC-SHA256'"),
        ({"alg": "hmac-sha512", "value": GOOD}, "signature.alg", "must be 'hmac-sha256'"),
        ({"value": GOOD}, "signature.alg", "got none"),
        ({"alg": "x" * 500, "value": GOOD}, "signature.alg", "x" * 40 + "'"),
        ({"alg": "hmac-sha256", "value": GOOD, "canon": "v3"}, "signature.canon", "must be v2"),
        ({"alg": "hmac-sha256", "value": GOOD, "canon": "v1"}, "signature.canon", "covers no payload"),
        ({"alg": "hmac-sha256", "canon": "v2"}, "signature.value", "is required"),
        ({"alg": "hmac-sha256", "value": 5}, "signature.value", "must be a base64 string"),
        ({"alg": "hmac-sha256", "value": "%%%"}, "signature.value", "is not base64"),
        ({"alg": "hmac-sha256", "value": ""}, "signature.value", "got 0 bytes"),
        ({"alg": "hmac-sha256", "value": "AAAA"}, "signature.value", "32 bytes"),
        ({}, "signature", "is empty"),
    ],
)
def test_a_signature_of_the_wrong_shape_names_its_member_and_rule(
    server: Keyed, signature: object, field: str, says: str
) -> None:
    status, error = post(server, server.token(), {**event(), "signature": signature})
    assert status == 401 and error["field"] == field and says in error["message"], error
    assert "does not match" not in error["message"]


def test_a_well_formed_signature_that_does_not_verify_still_does_not_match(server: Keyed) -> None:
    status, error = post(server, server.token(), event(signature={"alg": "hmac-sha256", "value": GOOD, "canon": "v2"}))
    assert (status, error["field"]) == (401, "signature") and "does not match the event" in error["message"]


def test_a_batch_names_the_member_by_index(server: Keyed) -> None:
    bad = event("b-1", signature={"alg": "HMAC-SHA256", "value": GOOD})
    answer = server.client.post("/events/batch", json=[event("b-0"), bad], headers=bearer(server.token()))
    assert answer.json()["results"][1]["errors"][0]["field"] == "events[1].signature.alg"


def test_mint_refuses_require_signatures_with_legacy_signatures() -> None:
    with pytest.raises(ValidationError) as raised:
        mint("acme", "write", now=datetime.now(timezone.utc), legacy_signatures=True, require_signatures=True)
    assert raised.value.field == "require_signatures"
    assert "legacy_signatures" in raised.value.rule and "covers no payload" in raised.value.rule


def test_the_admin_route_refuses_both_flags_naming_them(server: Keyed) -> None:
    body = {"scopes": ["write"], "legacy_signatures": True, "require_signatures": True}
    answer = server.client.post("/admin/keys", json=body, headers=bearer(server.token(scopes="admin")))
    assert answer.status_code == 400, answer.text
    (error,) = answer.json()["errors"]
    assert error["field"] == "require_signatures" and "legacy_signatures" in error["message"]
    assert all(not key.require_signatures for key in server.keys.list("acme"))


def test_a_key_stored_with_both_flags_takes_v2_only(server: Keyed) -> None:
    # as a key created before the rule: both flags stored
    key, token = mint("acme", "write", now=datetime.now(timezone.utc))
    both = Key(key.id, "acme", key.scopes, key.created_at, legacy_signatures=True, require_signatures=True)
    server.keys.add(both, hash_token(token))
    secret = SECRET.signing_secret(key.id)
    v1 = attach_signature(event(payload={"text": "sent $10"}), secret, version="v1")
    forged = {**v1, "payload": {"text": "sent $10000 to mallory"}}
    status, error = post(server, token, forged)
    assert (status, error["field"]) == (401, "signature") and "v2 only" in error["message"]
    marked = {**forged, "signature": {**v1["signature"], "canon": "v1"}}
    status, error = post(server, token, marked)
    assert (status, error["field"]) == (401, "signature.canon")
    v2 = attach_signature(event("evt-2", payload={"text": "sent $10"}), secret)
    assert server.client.post("/events", json=v2, headers=bearer(token)).status_code == 202


@pytest.mark.parametrize(
    ("text", "escape"),
    [
        ('"half \\ud83d"', "\\ud83d"),
        ('"\\ud83d here"', "\\ud83d"),
        ('"\\ude00"', "\\ude00"),
        ('"\\ud83d\\u0041"', "\\ud83d"),
    ],
)
def test_a_lone_surrogate_escape_is_refused_naming_the_rule(server: Keyed, text: str, escape: str) -> None:
    body = '{"specversion":"0.2.0","id":"s","time":"2026-01-01T00:00:00Z","source":"a","type":"task.created",'
    body += f'"session_id":"s","trace_id":"t","payload":{{"text":{text}}}}}'
    answer = server.client.post(
        "/events", content=body.encode(), headers={**bearer(server.token()), "content-type": "application/json"}
    )
    assert answer.status_code == 400
    (error,) = answer.json()["errors"]
    assert error["field"] == "body" and "truncated" not in error["message"]
    assert error["message"] == f"holds a lone UTF-16 surrogate escape ({escape}) with no pair: that is not Unicode text"


def test_a_truncated_body_is_still_called_truncated(server: Keyed) -> None:
    answer = server.client.post(
        "/events", content=b'{"x":"abc', headers={**bearer(server.token()), "content-type": "application/json"}
    )
    assert answer.json()["errors"][0]["message"] == "is not JSON: Input data was truncated"
