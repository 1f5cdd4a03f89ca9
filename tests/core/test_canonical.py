"""Canonical JSON and HMAC signing, against the AEP known-answer vectors and edge cases."""

from __future__ import annotations

import base64
import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from afteraction.core.canonical import (
    ALGORITHM,
    SAFE_INTEGER,
    attach_signature,
    canonical_v1,
    canonical_v2,
    inexact_integer,
    sign,
    verify,
)
from afteraction.errors import ConfigError
from tests.conftest import CONFORMANCE

AEP = CONFORMANCE / "aep"


def _load(path: Path) -> Any:
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


KAT = _load(AEP / "signature-kat.json")
EDGE = _load(AEP / "canonical-edge-cases.json")
SECRET = KAT["secret"]


def _event(**payload: Any) -> dict[str, Any]:
    return {
        "specversion": "0.2.0",
        "id": "evt_1",
        "time": "2026-01-01T10:00:00Z",
        "source": "agent://x",
        "type": "task.created",
        "session_id": "s",
        "trace_id": "t",
        "payload": payload,
    }


# -- conformance vectors --------------------------------------------------------------------------


@pytest.mark.parametrize("vector", KAT["vectors"], ids=lambda v: v["name"])
def test_known_answer_canonical_forms(vector: dict[str, Any]) -> None:
    assert canonical_v1(vector["event"]) == vector["v1_canonical"]
    assert canonical_v2(vector["event"]) == vector["v2_canonical"]


@pytest.mark.parametrize("vector", KAT["vectors"], ids=lambda v: v["name"])
def test_known_answer_signatures(vector: dict[str, Any]) -> None:
    assert sign(vector["event"], SECRET, version="v1") == vector["expected_v1"]
    assert sign(vector["event"], SECRET, version="v2") == vector["expected_v2"]
    assert sign(vector["event"], SECRET) == vector["expected_v2"]
    assert sign(vector["event"], SECRET.encode()) == vector["expected_v2"]


@pytest.mark.parametrize("vector", KAT["vectors"], ids=lambda v: v["name"])
def test_known_answer_signature_verifies_when_attached(vector: dict[str, Any]) -> None:
    event = dict(vector["event"], signature={"alg": "hmac-sha256", "value": vector["expected_v2"], "canon": "v2"})
    assert verify(event, SECRET)
    legacy = dict(vector["event"], signature={"alg": "hmac-sha256", "value": vector["expected_v1"]})
    assert verify(legacy, SECRET, allow_v1=True)
    assert not verify(legacy, SECRET)


@pytest.mark.parametrize("case", EDGE["cases"], ids=lambda c: c["name"])
def test_canonical_edge_cases(case: dict[str, Any]) -> None:
    assert "v1_canonical" in case or "v2_canonical" in case
    if "v1_canonical" in case:
        assert canonical_v1(case["event"]) == case["v1_canonical"]
    if "v2_canonical" in case:
        assert canonical_v2(case["event"]) == case["v2_canonical"]


def test_signature_field_is_excluded() -> None:
    event = _event(a=1)
    signed = dict(event, signature={"alg": "hmac-sha256", "value": "x"})
    assert canonical_v2(signed) == canonical_v2(event)
    assert canonical_v1(signed) == canonical_v1(event)
    assert '"signature"' not in canonical_v2(signed)


# -- JavaScript formatting details ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1"),
        (-0.0, "0"),
        (0, "0"),
        (1e-7, "1e-7"),
        (1e-6, "0.000001"),
        (1.5e-10, "1.5e-10"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1.5e300, "1.5e+300"),
        (123.456, "123.456"),
        (-2.5, "-2.5"),
        (2**53 - 1, "9007199254740991"),
        (2**60, "1152921504606847000"),
        (10**400, "null"),
        (math.inf, "null"),
        (math.nan, "null"),
        (True, "true"),
        (None, "null"),
    ],
)
def test_numbers_print_as_javascript_does(value: Any, text: str) -> None:
    assert canonical_v2({"x": value}) == '{"x":' + text + "}"


def test_strings_escape_as_json_stringify() -> None:
    assert canonical_v2({"x": 'q"b\\\x00\x1f\x7f\u2028é'}) == '{"x":"q\\"b\\\\\\u0000\\u001f\x7f\u2028é"}'
    assert canonical_v2({"x": "\ud800"}) == '{"x":"\\ud800"}'  # a lone surrogate is escaped
    assert canonical_v2({"x": "\ud83d\ude00"}) == '{"x":"\U0001f600"}'  # a pair is one character


def test_v2_key_order_is_javascripts() -> None:
    payload = {"b": 1, "10": 2, "a": 3, "2": 4, "01": 5, "-1": 6, "4294967295": 7, "4294967294": 8, "": 9}
    assert canonical_v2({"p": payload}) == (
        '{"p":{"2":4,"10":2,"4294967294":8,"":9,"-1":6,"01":5,"4294967295":7,"a":3,"b":1}}'
    )


def test_v1_filters_nested_keys_by_the_top_level_list() -> None:
    event = _event(type="x", id="y", other=1, nested={"time": 1})
    event["extra"] = [{"id": 1, "z": 2}, 3]
    assert canonical_v1(event) == (
        '{"extra":[{"id":1},3],"id":"evt_1","payload":{"id":"y","type":"x"},"session_id":"s",'
        '"source":"agent://x","specversion":"0.2.0","time":"2026-01-01T10:00:00Z","trace_id":"t",'
        '"type":"task.created"}'
    )


@pytest.mark.parametrize("bad", [{"x": {1: 2}}, {"x": {1, 2}}, {"x": b"bytes"}, ["not", "a", "mapping"]])
def test_non_json_values_are_refused(bad: Any) -> None:
    with pytest.raises(TypeError):
        canonical_v2(bad)


# -- sign / verify -------------------------------------------------------------------------------


def test_attach_signature_matches_the_sdk_shape() -> None:
    event = _event(a=1)
    signed = attach_signature(event, SECRET)
    assert signed["signature"] == {"alg": "hmac-sha256", "value": sign(event, SECRET), "canon": "v2"}
    assert "signature" not in event  # the input is not modified
    legacy = attach_signature(event, SECRET, version="v1")
    assert legacy["signature"] == {"alg": ALGORITHM, "value": sign(event, SECRET, version="v1")}
    keyed = attach_signature(event, SECRET, key_id="k1")
    assert keyed["signature"]["key_id"] == "k1"
    assert verify(keyed, SECRET)
    assert len(base64.b64decode(signed["signature"]["value"])) == 32


def test_round_trip_and_resigning() -> None:
    event = _event(nested={"b": [1, 2.5, {"c": None}]})
    signed = attach_signature(event, SECRET)
    assert verify(signed, SECRET)
    assert verify(signed, SECRET.encode())
    assert verify(json.loads(json.dumps(signed)), SECRET)
    again = attach_signature(signed, "other-secret")  # an existing signature is replaced, not signed over
    assert verify(again, "other-secret")
    assert again["signature"]["value"] == sign(event, "other-secret")


def test_key_order_does_not_change_the_signature() -> None:
    event = _event(a=1, b={"y": 1, "x": 2})
    reordered = dict(reversed(list(event.items())))
    reordered["payload"] = {"b": {"x": 2, "y": 1}, "a": 1}
    assert sign(event, SECRET) == sign(reordered, SECRET)


@pytest.mark.parametrize(
    "tamper",
    [
        lambda e: e.update(id="evt_2"),
        lambda e: e["payload"].update(a=2),
        lambda e: e["payload"]["nested"].update(deep="changed"),
        lambda e: e.update(subject="added"),
        lambda e: e["payload"].pop("a"),
    ],
)
def test_tampering_fails(tamper: Any) -> None:
    signed = attach_signature(_event(a=1, nested={"deep": "x"}), SECRET)
    assert verify(signed, SECRET)
    tampered = copy.deepcopy(signed)
    tamper(tampered)
    assert not verify(tampered, SECRET)


def test_wrong_secret_fails() -> None:
    assert not verify(attach_signature(_event(), SECRET), "another-secret")


def test_v1_refused_unless_allowed() -> None:
    signed = attach_signature(_event(a=1), SECRET, version="v1")
    assert signed["signature"].get("canon") is None
    assert not verify(signed, SECRET)
    assert verify(signed, SECRET, allow_v1=True)
    marked = copy.deepcopy(signed)
    marked["signature"]["canon"] = "v1"
    assert not verify(marked, SECRET)
    assert verify(marked, SECRET, allow_v1=True)


def test_v1_signature_does_not_cover_the_payload() -> None:
    signed = attach_signature(_event(a=1), SECRET, version="v1")
    signed["payload"]["a"] = 2
    assert verify(signed, SECRET, allow_v1=True)  # the known weakness of v1, hence refused by default


def test_unmarked_v2_signature_verifies() -> None:
    signed = attach_signature(_event(a=1), SECRET)
    del signed["signature"]["canon"]
    assert verify(signed, SECRET)


def test_marker_is_honoured() -> None:
    v2 = attach_signature(_event(a=1), SECRET)
    v2["signature"]["canon"] = "v1"
    assert not verify(v2, SECRET, allow_v1=True)


@pytest.mark.parametrize(
    "signature",
    [
        None,
        "a string",
        [],
        {},
        {"alg": "hmac-sha512", "value": "AAAA", "canon": "v2"},
        {"alg": "hmac-sha256"},
        {"alg": "hmac-sha256", "value": ""},
        {"alg": "hmac-sha256", "value": 42},
        {"alg": "hmac-sha256", "value": "not base64 !!"},
        {"alg": "hmac-sha256", "value": "AAAA", "canon": "v3"},
        {"alg": "hmac-sha256", "value": "AAAA", "canon": ["v2"]},
    ],
)
def test_bad_signature_objects_return_false(signature: Any) -> None:
    event = _event()
    if signature is not None:
        event["signature"] = signature
    assert verify(event, SECRET, allow_v1=True) is False


def test_verify_never_raises() -> None:
    value = sign(_event(), SECRET)
    assert verify({**_event(), "payload": {1: 2}, "signature": {"alg": ALGORITHM, "value": value}}, SECRET) is False
    assert verify([], SECRET) is False  # type: ignore[arg-type]
    assert verify(attach_signature(_event(), SECRET), "") is False
    assert verify(attach_signature(_event(), SECRET), None) is False  # type: ignore[arg-type]


def test_misuse_raises() -> None:
    with pytest.raises(ConfigError):
        sign(_event(), "")
    with pytest.raises(ConfigError):
        sign(_event(), SECRET, version="v3")  # type: ignore[arg-type]


# -- properties ------------------------------------------------------------------------------------

_keys = st.text(max_size=8)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=4),
    max_leaves=20,
)
_events = st.dictionaries(_keys, _json, max_size=6).map(lambda d: {**d, "signature": {"alg": "x"}})


def _normalize(value: Any) -> Any:
    """JavaScript's number model: every number is a double (so -0.0 == 0 and 1.0 == 1 either way)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, dict):
        return {key: _normalize(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_normalize(item) for item in value]
    return value


def _reverse_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _reverse_keys(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [_reverse_keys(item) for item in value]
    return value


@given(_events)
def test_canonical_v2_parses_back_to_the_event(event: dict[str, Any]) -> None:
    text = canonical_v2(event)
    expected = {key: value for key, value in event.items() if key != "signature"}
    assert _normalize(json.loads(text)) == _normalize(expected)
    assert text.encode("utf-8")  # always encodable: lone surrogates are escaped


@given(_events)
def test_canonical_forms_ignore_key_insertion_order(event: dict[str, Any]) -> None:
    shuffled = _reverse_keys(event)
    assert canonical_v2(shuffled) == canonical_v2(event)
    assert canonical_v1(shuffled) == canonical_v1(event)


@given(_events, st.text(min_size=1, max_size=20))
def test_sign_verify_round_trip(event: dict[str, Any], secret: str) -> None:
    signed = attach_signature(event, secret)
    assert verify(signed, secret)
    assert not verify(signed, secret + "x")


# -- integers the canonical form cannot write exactly ----------------------------------------------


def test_integers_past_2_53_share_a_canonical_form_so_a_verifier_must_find_them() -> None:
    big, near = _event(n=12345678901234567890), _event(n=12345678901234567000)
    assert canonical_v2(big) == canonical_v2(near)
    assert canonical_v2(_event(n=10**400)) == canonical_v2(_event(n=None))
    assert inexact_integer(big) == inexact_integer(near) == "payload.n"


@pytest.mark.parametrize(
    ("event", "path"),
    [
        (_event(n=SAFE_INTEGER, m=-SAFE_INTEGER, k=[SAFE_INTEGER - 1], f=1e300, t=True), None),
        (_event(n=SAFE_INTEGER + 1), "payload.n"),
        (_event(n=-SAFE_INTEGER - 1), "payload.n"),
        (_event(a=[1, {"b": [2, 10**30]}]), "payload.a[1].b[1]"),
        (_event(a=1, z=2**60, y=2**70), "payload.z"),  # the first in the order given
        ({**_event(), "extensions": {"x.y": 2**64}}, "extensions.x.y"),
        ({**_event(), "signature": {"n": 2**64}}, None),  # the signature is no part of what is signed
    ],
)
def test_inexact_integer_names_the_first_integer_past_2_53(event: dict[str, Any], path: str | None) -> None:
    assert inexact_integer(event) == path


# --- the Python SDK's spelling of v2 (``agent-event-protocol``: json.dumps with sort_keys) ---------------------------

_SDK_PAYLOADS = [
    {"ratio": 1.0, "score": 0.5},  # JavaScript writes 1.0 as 1
    {"10": "ten", "9": "nine"},  # JavaScript puts integer-like keys first, numerically
    {"n": 1e-7, "big": 1e21},
]


@pytest.mark.parametrize("payload", _SDK_PAYLOADS)
def test_an_event_the_python_sdk_signed_verifies(payload: dict[str, Any]) -> None:
    """The SDK's events holding such values were refused (401) by the service, though signed right."""
    from aep import sign_event

    event = sign_event({"id": "evt-sdk", "type": "tool.call", "payload": payload}, "s3cret")
    assert canonical_v2(event) != json.dumps(
        {k: v for k, v in event.items() if k != "signature"}, sort_keys=True, separators=(",", ":")
    )  # the two spellings differ for this payload
    assert verify(event, "s3cret")
    assert not verify(event, "another secret")
    changed = copy.deepcopy(event)
    changed["payload"][next(iter(payload))] = "changed"
    assert not verify(changed, "s3cret")


def test_the_python_spelling_is_only_a_v2_one() -> None:
    from aep import sign_event

    event = sign_event({"id": "evt-sdk", "type": "tool.call", "payload": {"ratio": 1.0}}, "s3cret")
    event["signature"]["canon"] = "v1"  # v1 is the envelope form: the SDK's v2 digest is not one
    assert not verify(event, "s3cret", allow_v1=True)
