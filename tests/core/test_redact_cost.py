"""The secret scrub costs time in proportion to its text, whatever the text (h25 #1-#3).

Each shape here cost the square of its length: read again from every candidate to the end of its run, a 64 KiB text
took 2 to 31 s, a 1 MiB one hours. A test scrubs a text of ``_SIZE`` and one 8 times longer, in the same test, and
asks that the longer one cost less than 20 times as much CPU (linear is 8, quadratic 64); each cost is the least of
three runs, so that a busy machine does not fail it.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

import pytest

from afteraction.core.otlp_pending import dumps
from afteraction.core.otlp_spans import Span
from afteraction.core.redact import scrub_text

_SIZE = 8 * 1024


def _repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _cost(scrub: Callable[[str], object], text: str) -> float:
    """The least CPU time of five scrubs, the garbage collector kept out (a collection of the objects
    earlier tests left made one run of a whole-suite pass look quadratic)."""
    best = float("inf")
    gc.collect()
    gc.disable()
    try:
        for _ in range(5):
            started = time.process_time()
            scrub(text)
            best = min(best, time.process_time() - started)
    finally:
        gc.enable()
    return best


def _assert_linear(make: Callable[[int], str], scrub: Callable[[str], object] = scrub_text) -> None:
    small = _cost(scrub, make(_SIZE))
    large = _cost(scrub, make(8 * _SIZE))
    assert large < 20 * max(small, 1e-4), f"8 times the text cost {large / max(small, 1e-9):.0f} times as much"


@pytest.mark.parametrize("unit", ["sk-", "mask-", "xATATT", "-eyJ", "sk-a-"])
def test_tokens_cost_linear_time(unit: str) -> None:
    """``sk-sk-sk-…``: each ``sk-`` read its body to the end of the run, then was rejected (no digits) and the next
    one read it again (2 s for 16 KiB); ``mask-…``: each ``sk-`` inside a word did the same before it was found to
    be inside a word."""
    _assert_linear(lambda size: _repeat(unit, size))


@pytest.mark.parametrize("unit", ["curl -u ", "curl ", "curl -u a/"])
def test_curl_commands_cost_linear_time(unit: str) -> None:
    """``curl curl curl …`` on one line: each ``curl`` looked for its ``-u`` to the line's end (15 s for 64 KiB)."""
    _assert_linear(lambda size: _repeat(unit, size))


@pytest.mark.parametrize(
    "make",
    [
        lambda size: "pw=x&" * (size // 5 - 1) + "pw=x",
        lambda size: "a=b&token=x&" * (size // 12),
        lambda size: _repeat("&token=", size),
        lambda size: _repeat('?pw=a"x"&', size),
        lambda size: _repeat("DATABASE_URL=postgres://x", size),
    ],
    ids=["pw=x&", "a=b&token=x&", "&token=", "quoted-part", "connection-url"],
)
def test_assignments_cost_linear_time(make: Callable[[int], str]) -> None:
    """A value after ``name=`` was read to the end of its run for every name in it, then cut at the query's ``&``
    (or rejected, as a connection URL is): ``pw=x&…`` cost 5 s for 64 KiB."""
    _assert_linear(make)


def test_url_userinfo_costs_linear_time() -> None:
    """``http://u:p@`` repeated: every ``@`` of the run searched the query from the URL's start (1.8 s for 64 KiB)."""
    _assert_linear(lambda size: _repeat("http://u:p@", size))


@pytest.mark.parametrize("unit", ['}"kty":', "x kty: RSA }"])
def test_jwk_objects_cost_linear_time(unit: str) -> None:
    """Each ``kty`` walked back over every brace before it, up to 64 KiB, for the object around it (6 s for 64 KiB)."""
    _assert_linear(lambda size: _repeat(unit, size))


def test_a_waiting_spans_attributes_cost_linear_time() -> None:
    """A waiting span's attributes are scrubbed whole, not cut (``otlp_pending.dumps``): a ``mask-`` attribute of
    128 KiB took 4.5 s, and one of 1 MiB of ``sk-`` would have taken hours."""

    def span(attribute: str) -> Span:
        return Span(
            trace_id="0af7651916cd43dd8448eb211c80319c",
            span_id="b7ad6b7169203331",
            parent_id="00f067aa0ba902b7",
            name="n",
            kind=1,
            start_ns=1,
            end_ns=2,
            status=0,
            status_message="",
            attributes={"note": attribute},
            events=(),
            resource={},
            scope="s",
            parent_remote=False,
        )

    _assert_linear(lambda size: _repeat("sk-", size), lambda text: dumps(span(text)))


@pytest.mark.parametrize("unit", ["sk-", "curl -u "])
def test_a_small_body_costs_what_ordinary_text_does(unit: str) -> None:
    """A body of 4 KiB or less is scrubbed on the event loop: 3,800 characters of ``sk-`` took 113 ms there (h25 #2).
    Now it costs about what a log of the same size does."""
    ordinary = _cost(scrub_text, _repeat("2024-05-01T12:00:03Z INFO GET /v1/items?page=3 200 12ms user=bob\n", 3800))
    assert _cost(scrub_text, _repeat(unit, 3800)) < 25 * max(ordinary, 1e-3)  # before: 113 and 49 ms


@pytest.mark.parametrize("length", [61, 62, 63, 600, 5000])
def test_a_long_or_odd_base64_pem_is_read_whole_and_never_raises(length: int) -> None:
    """A base64 PEM header of 61 to 63 characters raised ``binascii.Error: Incorrect padding`` out of ``scrub_text``;
    a long one is redacted to its end."""
    text = ("LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0t" + "QUJD" * 2000)[:length]
    assert scrub_text(f"x {text} y") == "x [REDACTED:private_key] y"


@pytest.mark.parametrize("size", [20, 600, 5000, 100_000])
def test_a_token_of_any_length_is_redacted_whole(size: int) -> None:
    """A token's body is read to the end of its run however long it is: none is left half shown."""
    body = ("a" * (size - 1)) + "7"
    assert scrub_text(f"key sk-{body} end") == "key [REDACTED:api_key] end"
    assert scrub_text(f"key sk-{'a' * size} end") == f"key sk-{'a' * size} end"  # no digit: not a key
    jwt = f"eyJhbGciOiJIUzI1NiJ9.{'b' * size}.{'c' * size}"
    assert scrub_text(f"auth {jwt} end") == "auth [REDACTED:jwt] end"
