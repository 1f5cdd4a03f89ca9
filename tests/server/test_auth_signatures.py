"""Signed events are verified with the sending key's signing secret: canonical v2 always, v1
(legacy) only for a key that allows it, unsigned ones refused by a key that requires signatures;
each refusal a 401 naming the signature field, as the AEP reference server answers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from afteraction.core.canonical import attach_signature
from tests.server.keyed import SECRET, Keyed, bearer, keyed
from tests.server.test_ingest import event


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Keyed]:
    with keyed(tmp_path / "signed.db") as found:
        yield found


def signed(server: Keyed, data: dict[str, Any], signer: str, **options: Any) -> dict[str, Any]:
    return attach_signature(data, SECRET.signing_secret(signer), **options)


def post(server: Keyed, token: str, data: Any) -> tuple[int, dict[str, Any]]:
    answer = server.client.post("/events", json=data, headers=bearer(token))
    return answer.status_code, answer.json()


def test_a_good_v2_signature_is_accepted_and_kept(server: Keyed) -> None:
    key, token = server.key()
    data = signed(server, event(payload={"tool": "search", "n": [1, 2.5, {"b": 1, "a": "é"}]}), key.id)
    assert post(server, token, data) == (202, {"accepted": True, "duplicate": False, "id": "evt-1"})
    stored = server.client.get("/sessions/ses-1/events", headers=bearer(token)).json()["events"][0]
    assert stored["signature"] == data["signature"]


def test_a_signature_made_with_the_aep_sdks_unmarked_key_id_extension_is_accepted(server: Keyed) -> None:
    key, token = server.key()
    assert post(server, token, signed(server, event(), key.id, key_id=key.id))[0] == 202


def test_a_tampered_payload_is_401_naming_the_signature(server: Keyed) -> None:
    key, token = server.key()
    data = signed(server, event(payload={"amount": 10}), key.id)
    data["payload"]["amount"] = 1000
    status, body = post(server, token, data)
    assert status == 401 and body["accepted"] is False
    (error,) = body["errors"]
    assert error["field"] == "signature" and "does not match" in error["message"]


def test_another_keys_secret_does_not_verify(server: Keyed) -> None:
    other, _ = server.key()
    token = server.token()
    status, body = post(server, token, signed(server, event(), other.id))
    assert status == 401 and body["errors"][0]["field"] == "signature"
    status, body = post(server, token, signed(server, event(), other.id, key_id=other.id))
    assert status == 401 and body["errors"][0]["field"] == "signature.key_id"


@pytest.mark.parametrize(
    ("signature", "member"),
    [
        ({"alg": "hmac-sha512", "value": "AAAA", "canon": "v2"}, "alg"),
        ({"alg": "hmac-sha256", "value": "not base64!"}, "value"),
        ({"alg": "hmac-sha256", "value": "", "canon": "v2"}, "value"),
        ({"alg": "hmac-sha256", "value": "AAAA", "canon": "v3"}, "canon"),
    ],
)
def test_a_malformed_signature_is_401(server: Keyed, signature: dict[str, Any], member: str) -> None:
    status, body = post(server, server.token(), event(signature=signature))
    assert status == 401 and body["errors"][0]["field"] == f"signature.{member}"


def test_v1_is_refused_without_legacy_and_accepted_with_it(server: Keyed) -> None:
    # With an empty payload the v1 and v2 forms are the same text (v1 drops only nested keys),
    # so such a "v1" signature is a valid v2 one; a payload with content tells them apart.
    key, token = server.key()
    status, body = post(server, token, signed(server, event(payload={"n": 1}), key.id, version="v1"))
    assert status == 401 and "legacy canonical v1" in body["errors"][0]["message"]
    legacy, legacy_token = server.key(legacy_signatures=True)
    v1 = signed(server, event("evt-2", payload={"n": 1}), legacy.id, version="v1")
    # why legacy is opt-in: v1 leaves the payload uncovered, so a changed payload still verifies
    assert post(server, legacy_token, {**v1, "payload": {"n": 2}})[0] == 202
    assert post(server, legacy_token, {**v1, "id": "evt-2b"})[0] == 401  # the envelope is covered
    assert post(server, legacy_token, signed(server, event("evt-3"), legacy.id))[0] == 202  # v2 still fine
    marked = signed(server, event("evt-4", payload={"n": 1}), legacy.id, version="v1")
    marked["signature"]["canon"] = "v1"
    assert post(server, legacy_token, marked)[0] == 202


def test_a_key_that_requires_signatures_refuses_unsigned_events(server: Keyed) -> None:
    strict, strict_token = server.key(require_signatures=True)
    status, body = post(server, strict_token, event())
    assert status == 401 and body["errors"][0]["field"] == "signature" and "is required" in body["errors"][0]["message"]
    assert post(server, strict_token, signed(server, event(), strict.id))[0] == 202
    assert post(server, server.token(), event("evt-2"))[0] == 202  # a key that does not require them


def test_a_batch_names_each_badly_signed_event_and_keeps_the_rest(server: Keyed) -> None:
    key, token = server.key()
    good = signed(server, event("b-0"), key.id)
    bad = signed(server, event("b-1"), key.id)
    bad["payload"] = {"changed": True}
    answer = server.client.post("/events/batch", json=[good, bad, event("b-2")], headers=bearer(token))
    assert answer.status_code == 202
    body = answer.json()
    assert [r["accepted"] for r in body["results"]] == [True, False, True]
    assert body["results"][1]["errors"][0]["field"] == "events[1].signature"


def test_a_batch_of_only_badly_signed_events_is_401(server: Keyed) -> None:
    _, token = server.key(require_signatures=True)
    lines = "\n".join(json.dumps(event(f"n{i}")) for i in range(3))
    answer = server.client.post(
        "/events/batch", content=lines, headers={**bearer(token), "content-type": "application/x-ndjson"}
    )
    assert answer.status_code == 401
    assert [e["field"] for e in answer.json()["errors"]] == [f"events[{i}].signature" for i in range(3)]


def test_an_invalid_event_is_400_before_its_signature_is_looked_at(server: Keyed) -> None:
    token = server.token(require_signatures=True)
    status, body = post(server, token, event(type="no.such.type"))
    assert status == 400 and body["errors"][0]["field"] == "type"


# -- what a signature covers is what is stored (SQLite and PostgreSQL) -----------------------------


@pytest.fixture
def stored_in(database: str) -> Iterator[Keyed]:
    with keyed(database) as found:
        yield found


def post_raw(server: Keyed, token: str, text: str) -> tuple[int, dict[str, Any]]:
    answer = server.client.post("/events", content=text, headers={**bearer(token), "content-type": "application/json"})
    return answer.status_code, answer.json()


def test_an_integer_past_2_53_in_a_signed_event_is_400_naming_its_path(stored_in: Keyed) -> None:
    key, token = stored_in.key()
    # the tester's case: both integers are the same double, so one signature verified either
    text = json.dumps(signed(stored_in, event(payload={"count": 12345678901234567890}), key.id))
    for sent in (text, text.replace("12345678901234567890", "12345678901234567000")):
        status, body = post_raw(stored_in, token, sent)
        assert status == 400 and body["errors"][0]["field"] == "payload.count", body
        assert "send it as a string" in body["errors"][0]["message"]
    # a signed null, replaced by an integer too large for a double (which the canonical form writes as null)
    text = json.dumps(signed(stored_in, event("evt-2", payload={"limit": None, "n": [1, {"m": None}]}), key.id))
    assert post_raw(stored_in, token, text.replace('"limit": null', '"limit": 1' + "0" * 400))[0] == 400
    status, body = post_raw(stored_in, token, text.replace('"m": null', '"m": -' + "9" * 30))
    assert status == 400 and body["errors"][0]["field"] == "payload.n[1].m"
    batch = [signed(stored_in, event("evt-3", payload={"big": 2**53 + 1}), key.id)]
    answer = stored_in.client.post("/events/batch", json=batch, headers=bearer(token)).json()
    assert answer["results"][0]["errors"][0]["field"] == "events[0].payload.big"


def test_integers_up_to_2_53_are_signed_and_stored_exactly(stored_in: Keyed) -> None:
    key, token = stored_in.key()
    payload = {"top": 2**53, "bottom": -(2**53), "ids": [2**53 - 1, 0, -1], "as_text": "12345678901234567890"}
    assert post(stored_in, token, signed(stored_in, event(payload=payload), key.id))[0] == 202
    stored = stored_in.client.get("/sessions/ses-1/events", headers=bearer(token)).json()["events"][0]
    assert stored["payload"] == payload
    # an unsigned event carries nothing to cover: its integers are taken as they are
    assert post(stored_in, token, event("evt-2", payload={"big": 2**64}))[0] == 202


def test_signature_members_that_verifying_does_not_read_are_not_stored(stored_in: Keyed) -> None:
    key, token = stored_in.key()
    data = signed(stored_in, event(payload={"task": "pay 10"}), key.id, key_id=key.id)
    data["signature"]["injected"] = {"note": '=HYPERLINK("http://evil")', "amount": 1000000}
    data["signature"]["alg_note"] = "x"
    assert post(stored_in, token, data)[0] == 202
    kept = {name: data["signature"][name] for name in ("alg", "value", "canon", "key_id")}
    read = stored_in.client.get("/sessions/ses-1/events", headers=bearer(token)).json()["events"][0]
    assert read["signature"] == kept
    exported = stored_in.client.get("/sessions/ses-1/export", params={"format": "ndjson"}, headers=bearer(token))
    assert "injected" not in exported.text and "alg_note" not in exported.text
    assert json.loads(exported.text)["signature"] == kept
    plain = signed(stored_in, event("evt-2", payload={"task": "pay 10"}), key.id)
    assert post(stored_in, token, plain)[0] == 202
    read = stored_in.client.get("/sessions/ses-1/events", headers=bearer(token)).json()["events"][1]
    assert read["signature"] == plain["signature"]


def test_without_keys_events_are_stored_as_sent(client: TestClient) -> None:
    """Development mode verifies nothing, so it drops and refuses nothing either."""
    data = attach_signature(event(payload={"big": 2**64}), "any secret")
    data["signature"]["note"] = "kept"
    assert client.post("/events", json=data).status_code == 202
    stored = client.get("/sessions/ses-1/events").json()["events"][0]
    assert stored["signature"] == data["signature"] and stored["payload"] == {"big": 2**64}
