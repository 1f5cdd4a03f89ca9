"""Properties of the scrubber over generated text (``core/redact.py``): no planted secret survives, the quick
check changes no output, nothing a store refuses is left."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from afteraction.core.lookalike import fold, may_hide
from afteraction.core.redact import _may_hold_secret, _scrub
from afteraction.core.sanitize import scrub_text
from tests.core.test_redact import SECRET_NAMES, SECRETS_IN_TEXT

# --- property: no planted secret survives ----------------------------------------------------------------------------

ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def _chars(alphabet: str, size: int, *, high: int | None = None) -> st.SearchStrategy[str]:
    return st.text(alphabet, min_size=size, max_size=high or size)


def _mixed(size: int, alphabet: str = ALNUM) -> st.SearchStrategy[str]:
    """Random token text that holds a letter and a digit, as real keys do."""
    return st.tuples(
        _chars(alphabet, size - 2, high=size + 10), st.sampled_from("abcXYZ"), st.sampled_from("0123456789")
    ).map(lambda t: t[1] + t[0] + t[2])


def _luhn_complete(digits: str) -> str:
    total = 0
    for i, char in enumerate(reversed(digits + "0")):
        d = int(char)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return digits + str((10 - total % 10) % 10)


def _grouped(number: str, sep: str) -> str:
    return sep.join(number[i : i + 4] for i in range(0, len(number), 4))


_b64 = st.binary(min_size=30, max_size=30).map(lambda b: base64.b64encode(b).decode())

# (the text to plant, the secret that must not survive)
PLANTED: st.SearchStrategy[tuple[str, str]] = st.one_of(
    _mixed(40, ALNUM + "_-").map(lambda s: ("sk-" + s, "sk-" + s)),
    _mixed(40, ALNUM + "_-").map(lambda s: ("sk-proj-" + s, "sk-proj-" + s)),
    _mixed(40, ALNUM + "_-").map(lambda s: ("sk-ant-api03-" + s, "sk-ant-api03-" + s)),
    st.tuples(st.sampled_from("pousr"), _chars(ALNUM, 36)).map(lambda t: (f"gh{t[0]}_{t[1]}",) * 2),
    _chars(ALNUM + "_", 60).map(lambda s: ("github_pat_" + s,) * 2),
    _chars(ALNUM + "_-", 20).map(lambda s: ("glpat-" + s,) * 2),
    _chars("0123456789", 12).map(lambda s: (f"xoxb-{s}-{s}abc", f"xoxb-{s}-{s}abc")),
    _chars(ALNUM + "_-", 35).map(lambda s: ("AIza" + s,) * 2),
    _mixed(24).map(lambda s: ("sk_live_" + s,) * 2),
    _mixed(24).map(lambda s: ("rk_live_" + s,) * 2),
    _chars(ALNUM, 34).map(lambda s: ("hf_" + s,) * 2),
    _chars(ALNUM, 36).map(lambda s: ("npm_" + s,) * 2),
    st.tuples(_chars(ALNUM, 22), _chars(ALNUM, 43)).map(lambda t: (f"SG.{t[0]}.{t[1]}",) * 2),
    st.tuples(_chars(ALNUM + "_-", 20, high=80), _chars(ALNUM + "_-", 43)).map(
        lambda t: (f"eyJhbGciOiJIUzI1NiJ9.eyJ{t[0]}.{t[1]}",) * 2
    ),
    _mixed(24, ALNUM + "._~+/-").map(lambda s: ("Bearer " + s, s)),
    st.tuples(_chars(ALNUM, 3, high=12), _chars(ALNUM, 6, high=20)).map(
        lambda t: ("Basic " + base64.b64encode(f"{t[0]}:{t[1]}".encode()).decode(),) * 2
    ),
    _b64.map(lambda s: (f"-----BEGIN PRIVATE KEY-----\n{s}\n{s}\n-----END PRIVATE KEY-----", s)),
    _b64.map(lambda s: (f"-----BEGIN EC PRIVATE KEY-----\n{s}", s)),
    _mixed(12).map(lambda s: (f"postgres://admin:{s}@db.internal:5432/app", s)),
    _chars("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16).map(lambda s: ("AKIA" + s,) * 2),
    _b64.map(lambda s: (f"aws secret access key {s[:38]}/A", s[:38] + "/A")),
    _b64.map(lambda s: (f"AccountName=a;AccountKey={s};EndpointSuffix=core.windows.net", s)),
    # a brand's prefix (a card number's IIN), 16 digits in all
    st.sampled_from(["4", "51", "55", "2221", "2720", "6011", "65", "3528", "62", "2200"])
    .flatmap(lambda p: st.tuples(st.just(p), _chars("0123456789", 15 - len(p)), st.sampled_from(["", " ", "-", "."])))
    .map(lambda t: (_grouped(_luhn_complete(t[0] + t[1]), t[2]),) * 2),
    st.tuples(_chars("abcdefghij.", 1, high=12), _chars("abcdefghij", 2, high=10)).map(
        lambda t: (f"x{t[0]}x@{t[1]}.com",) * 2
    ),
    st.tuples(st.sampled_from(SECRET_NAMES[:40]), st.sampled_from(["=", ": ", " = ", ":"]), _mixed(10)).map(
        lambda t: (f"{t[0].replace(' ', '_')}{t[1]}{t[2]}", t[2])
    ),
    st.tuples(st.sampled_from(SECRET_NAMES[:40]), _mixed(10, ALNUM + " !#$%()*+-./:;<=>?@[]^_{|}~")).map(
        lambda t: (json.dumps({t[0]: t[1]}), json.dumps(t[1])[1:-1])
    ),
)
FILLER = st.text(ALNUM + " .,;:!?()-'\"\n", max_size=40)


@st.composite
def texts_with_secrets(draw: st.DrawFn) -> tuple[str, list[str]]:
    pieces: list[str] = []
    secrets: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        text, secret = draw(PLANTED)
        pieces += (draw(FILLER), text)
        secrets.append(secret)
    pieces.append(draw(FILLER))
    return " ".join(pieces), secrets


@settings(max_examples=200, deadline=None)
@given(texts_with_secrets())
def test_no_planted_secret_survives_in_text(planted: tuple[str, list[str]]) -> None:
    text, secrets = planted
    scrubbed = scrub_text(text)
    for secret in secrets:
        assert secret not in scrubbed


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_scrub_never_crashes_and_is_stable(text: str) -> None:
    once = scrub_text(text)
    assert scrub_text(once) == once


# The quick pre-check in ``scrub_text`` only skips work: with it or without it, the same text comes out.
_ANY_TEXT = st.one_of(
    st.text(max_size=200),
    st.text(ALNUM + " .,;:=@-_'\"\n/+", max_size=200),
    texts_with_secrets().map(lambda planted: planted[0]),
)


@settings(max_examples=500, deadline=None)
@given(_ANY_TEXT)
def test_the_quick_check_changes_no_output(text: str) -> None:
    # text a reader could see otherwise (``lookalike.may_hide``) is scrubbed as seen, look-alikes (``fold``) and
    # percent-encoding as read, a NUL made U+FFFD: not here
    assume("\x00" not in text and not may_hide(text) and fold(text) == text and "%" not in text)
    assert scrub_text(text) == _scrub(text)


@settings(max_examples=300, deadline=None)
@given(_ANY_TEXT)
def test_scrubbed_text_holds_no_nul_or_lone_surrogate(text: str) -> None:
    out = scrub_text(text)
    assert "\x00" not in out
    out.encode("utf-8")  # encodable: no lone surrogate (it would raise)


@pytest.mark.parametrize(("text", "secret", "kind"), SECRETS_IN_TEXT)
def test_the_quick_check_sends_every_known_secret_to_the_scan(text: str, secret: str, kind: str) -> None:
    assert _may_hold_secret(text)
