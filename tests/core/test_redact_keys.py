"""Private keys in text and in structures (``core/redact_keys.py``): a PuTTY key file's private lines and MAC, a
JWK's private members; read through ``scrub_text`` and ``sanitize``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from afteraction.core.redact import _may_hold_secret, scrub_text
from afteraction.core.sanitize import REDACTED, is_clean, sanitize, sanitize_args

# --- PuTTY key files -------------------------------------------------------------------------------------------------

PPK_HEAD = (
    "PuTTY-User-Key-File-3: ssh-ed25519\n"
    "Encryption: none\n"
    "Comment: eddsa-key-20240101\n"
    "Public-Lines: 2\n"
    "AAAAC3NzaC1lZDI1NTE5AAAAIDp7mWz2Jt0nq1XkV4fH8sLr0cE6yB5aT9uG3dK2\n"
    "hQ1f\n"
)
PPK_PRIVATE = "Private-Lines: 1\nAAAAIHmQ8bXv3kT7rN2yW5pL0aF9cZ4sJ6uE1gH3iO8kMx2Q\n"
PPK_MAC = "Private-MAC: 6a5c0e8d7b4f2a91c3e5d7f9b1a3c5e7d9f1b3a5c7e9d1f3b5a7c9e1d3f5b7a9\n"
PPK = PPK_HEAD + PPK_PRIVATE + PPK_MAC
PPK2_RSA = (
    "PuTTY-User-Key-File-2: ssh-rsa\r\nEncryption: aes256-cbc\r\nComment: imported-openssh-key\r\n"
    "Public-Lines: 1\r\nAAAAB3NzaC1yc2EAAAADAQABAAABAQC7vX2Jt0nq1XkV4fH8sLr0cE6yB5aT9uG3dK2hQ1f\r\n"
    "Private-Lines: 2\r\nZk3q9L0xYz7VbN8mK2pQ4rT6sW1uE5fA3gH7jC9dE0aF9cZ4sJ6uE1gH3iO8kMx2Q\r\n"
    "bXv3kT7rN2yW5pL0aF9cZ4sJ6uE1\r\nPrivate-MAC: 0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c\r\n"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"saved key.ppk:\n{PPK}then ran pageant", "saved key.ppk:\n[REDACTED:private_key]\nthen ran pageant"),
        (PPK2_RSA + "done", "[REDACTED:private_key]\r\ndone"),
        # the old ``Private-Hash`` of version 1 files
        (PPK.replace("Private-MAC", "Private-Hash"), "[REDACTED:private_key]\n"),
        # a key cut before its MAC: to the end of the text, as an open PEM block is
        ("key: " + PPK_HEAD + PPK_PRIVATE[:30], "key: [REDACTED:private_key]"),
        # a key inside a JSON string, its line breaks escaped
        (json.dumps({"content": PPK}), '{"content": "[REDACTED:private_key]\\n"}'),
    ],
)
def test_a_putty_key_file_is_redacted_from_its_header_through_its_mac(text: str, expected: str) -> None:
    assert _may_hold_secret(text)
    assert scrub_text(text) == expected
    assert scrub_text(expected) == expected


@pytest.mark.parametrize(
    "text",
    [
        "convert it with puttygen: the file starts with PuTTY-User-Key-File-3: ssh-ed25519",
        "PuTTY-User-Key-File-2 is the older format; Private-Lines: holds the key, Private-MAC: checks it",
        # the public half alone
        PPK_HEAD,
        "set Private-Lines: 4 in the template",
    ],
)
def test_text_about_putty_keys_without_a_private_part_is_kept(text: str) -> None:
    assert scrub_text(text) == text


# --- JWK ---------------------------------------------------------------------------------------------------------

N = "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3okn"
RSA_PRIVATE = {
    "d": "X4cTteJY_gn4FYPsXB8rdXix5vwsg1FLN5E3EaG6RJoVH-HLLKD9M7dx5oo7GURknchnrRweUkC7hT5fJLM0WbFAKNLWY2vv7B6NqXSzU",
    "p": "83i-7IvMGXoMXCskv73TKr8637FiO7Z27zv8oj6pbWUQyLPQBQxtPVnwD20R-60eTDmD2ujnMt5PoqMrm8RfmNhVWDtjjMmCMjOpSXicF",
    "q": "3dfOR9cuYq-0S-mkFLzgItgMEfFzB2q3hWehMuG0oCuqnb3vobLyumqjVZQO1dIrdwgTnCdpYzBcOfW5r370AFXjiWft_NGEiovonizhK",
    "dp": "G4sPXkc6Ya9y8oJW9_ILj4xuppu0lzi_H7VTkS8xj5SdX3coE0oimYwxIi2emTAue0UOa5dpgFGyBJ4c8tQ2VF402XRugKDTP8akYhFo5",
    "dq": "s9lAH9fggBsoFR8Oac2R_E2gw282rT2kGOAhvIllETE1efrA6huUUvMfBcMpn8lqeW6vzznYY5SSQF7pMdC_agI3nG8Ibp1BUb0JUiraR",
    "qi": "GyM_p6JrXySiz1toFgKbWV-JdI3jQ4ypu9rbMWx3rQJBfmt0FoYzgUIZEVFEcOqwemRN81zoDAaa-Bk0KWNGDjJHZDdDmFhW3AN7lI-pu",
}
RSA = {"kty": "RSA", "kid": "2024-01-key", "n": N, "e": "AQAB", **RSA_PRIVATE}
EC = {
    "kty": "EC",
    "crv": "P-256",
    "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
    "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
    "d": "jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI",
}
OKP = {
    "kty": "OKP",
    "crv": "Ed25519",
    "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo",
    "d": "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A",
}
OCT = {
    "kty": "oct",
    "alg": "HS256",
    "k": "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow",
}
PRIVATE = ("d", "p", "q", "dp", "dq", "qi", "k")


def _private_values(jwk: dict[str, str]) -> list[str]:
    return [value for name, value in jwk.items() if name in PRIVATE]


def _public_values(jwk: dict[str, str]) -> list[str]:
    return [value for name, value in jwk.items() if name not in PRIVATE]


@pytest.mark.parametrize("jwk", [RSA, EC, OKP, OCT], ids=["RSA", "EC", "OKP", "oct"])
@pytest.mark.parametrize(
    "render",
    [
        json.dumps,
        lambda jwk: json.dumps(jwk, separators=(",", ":"), sort_keys=True),  # ``d`` before ``kty``
        lambda jwk: json.dumps(jwk, indent=2),
        lambda jwk: json.dumps({"keys": [{"kty": "RSA", "n": N, "e": "AQAB"}, jwk]}),  # a JWKS
        lambda jwk: json.dumps(json.dumps(jwk)),  # JSON in a JSON string: escaped quotes
        repr,  # a Python dict as printed
        lambda jwk: "const key = {" + ", ".join(f'{k}: "{v}"' for k, v in jwk.items()) + "};",  # JavaScript
    ],
    ids=["json", "sorted", "indented", "jwks", "escaped", "repr", "js"],
)
def test_a_jwks_private_members_are_redacted_and_its_public_ones_kept(jwk: dict[str, str], render: Any) -> None:
    _assert_private_members_redacted(jwk, render(jwk))


def test_a_jwk_in_text_keeps_its_names() -> None:
    text = 'loaded {"kty":"EC","crv":"P-256","x":"f83O","y":"x_FE","d":"jpsQnnGQmL-YBIffH1136cspYG6"} ok'
    expected = 'loaded {"kty":"EC","crv":"P-256","x":"f83O","y":"x_FE","d":"[REDACTED:private_key]"} ok'
    assert scrub_text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        '{"d": 4, "p": "page 2", "q": "search terms", "k": "v"}',  # no ``kty``: not a key
        '{"q": "rotate the signing key", "dp": "yes"}',
        json.dumps({"kty": "RSA", "n": N, "e": "AQAB", "kid": "k1"}),  # a public key
        json.dumps({name: value for name, value in EC.items() if name != "d"}),
        "the JWK's kty member names its type; its d member is private",
        '{"kty": "RSA"} then {"d": "not-part-of-the-key", "p": "x"}',  # a later object is another one
        '{"d": "not-part-of-the-key"} and {"kty": "EC", "x": "f83O"}',
        '{"kty":"RSA","d":""}',  # empty: hides nothing
    ],
)
def test_objects_that_are_not_a_private_jwk_are_kept(text: str) -> None:
    assert scrub_text(text) == text


@pytest.mark.parametrize("jwk", [RSA, EC, OKP, OCT], ids=["RSA", "EC", "OKP", "oct"])
def test_a_jwk_passed_as_a_structure_loses_its_private_members(jwk: dict[str, str]) -> None:
    for out in (
        sanitize_args({"key": "ignored", "jwk": jwk}, allow=["*"])["jwk"],
        sanitize({"jwks": {"keys": [jwk]}})["jwks"]["keys"][0],
    ):
        assert out == {name: REDACTED if name in PRIVATE else value for name, value in jwk.items()}
    assert not is_clean({"keys": [jwk]})


@pytest.mark.parametrize(
    "value",
    [
        {"d": 4, "p": "page 2", "q": "search terms", "k": "v"},
        {"kty": "RSA", "n": N, "e": "AQAB"},
        {"kty": "EC", "crv": "P-256", "x": EC["x"], "y": EC["y"], "d": None},  # no value: nothing to hide
        {"kty": "RSA", "d": 4},  # not a key's member: a key's are strings
    ],
)
def test_structures_that_hold_no_private_key_are_kept(value: dict[str, Any]) -> None:
    assert sanitize(value) == value
    assert is_clean(value)


# --- JWK written without JSON: YAML, TOML, Python keywords -----------------------------------------------------------


def _yaml(jwk: dict[str, str]) -> str:
    return "\n".join(f"{name}: {value}" for name, value in jwk.items())


def _toml(jwk: dict[str, str]) -> str:
    return "[signing_key]\n" + "\n".join(f'{name} = "{value}"' for name, value in jwk.items())


@pytest.mark.parametrize("jwk", [RSA, EC, OKP, OCT], ids=["RSA", "EC", "OKP", "oct"])
@pytest.mark.parametrize(
    "render",
    [
        _yaml,
        lambda jwk: "jwks:\n  keys:\n    - " + _yaml(jwk).replace("\n", "\n      ") + "\n    - kty: RSA\n",
        lambda jwk: json.dumps({"stdout": _yaml(jwk) + "\n"}),  # YAML printed inside JSON: escaped line breaks
        lambda jwk: "ParseError in jwk.yaml: " + _yaml(jwk),  # after other words on its first line
        lambda jwk: "jwk: {" + ", ".join(f"{name}: {value}" for name, value in jwk.items()) + "}",  # a flow mapping
        _toml,
        lambda jwk: "key = { " + ", ".join(f'{name} = "{value}"' for name, value in jwk.items()) + " }",
        lambda jwk: "dict(" + ", ".join(f'{name}="{value}"' for name, value in jwk.items()) + ")",
        lambda jwk: "key = jwk.JWK(\n" + "".join(f"    {name}={value!r},\n" for name, value in jwk.items()) + ")",
    ],
    ids=["yaml", "yaml-list", "in-json", "after-words", "yaml-flow", "toml", "toml-inline", "dict-call", "keywords"],
)
def test_a_jwk_written_as_yaml_toml_or_keywords_loses_its_private_members(jwk: dict[str, str], render: Any) -> None:
    _assert_private_members_redacted(jwk, render(jwk))


def test_a_jwk_in_yaml_keeps_its_names_and_public_members() -> None:
    text = f"kty: EC\ncrv: P-256\nx: {EC['x']}\nd: {EC['d']}\n"
    assert scrub_text(text) == f"kty: EC\ncrv: P-256\nx: {EC['x']}\nd: [REDACTED:private_key]\n"


LONG = RSA_PRIVATE["d"][:43]


@pytest.mark.parametrize(
    "text",
    [
        "d: 5\nx: 3\n",  # YAML with no key in it
        f"settings:\n  d: {LONG}\n",
        "kty: RSA\nd: 5\n",  # too short for a key's member
        f"kty: RS256\nd: {LONG}\n",  # not a key type
        f"type: RSA\nd: {LONG}\n",
        f'mode = "fast"\nd = "{LONG}"\n',
        f"kty: RSA\nn: {N}\n\nThen the notes:\nd: {LONG}\n",  # prose ends the mapping
        f"keys:\n  - kty: EC\n    x: {EC['x']}\n  - name: cache\n    d: {LONG}\n",  # the next list item is another
        f'f(kty="RSA", e="AQAB") and g(d="{LONG}")',  # another call
        "the kty: RSA member says it is an RSA key; d: is its private exponent",
    ],
)
def test_yaml_toml_and_keywords_that_hold_no_private_jwk_are_kept(text: str) -> None:
    assert scrub_text(text) == text


def test_a_toml_table_after_a_jwk_is_another_table() -> None:
    text = f'[jwk]\nkty = "EC"\nd = "{EC["d"]}"\n\n[cache]\nd = "{LONG}"\n'
    assert scrub_text(text) == f'[jwk]\nkty = "EC"\nd = "[REDACTED:private_key]"\n\n[cache]\nd = "{LONG}"\n'


def _assert_private_members_redacted(jwk: dict[str, str], text: str) -> None:
    scrubbed = scrub_text(text)
    for value in _private_values(jwk):
        assert value not in scrubbed
    for value in _public_values(jwk):
        assert value in scrubbed
    assert scrubbed.count("[REDACTED:private_key]") == len(_private_values(jwk))
    assert scrub_text(scrubbed) == scrubbed
