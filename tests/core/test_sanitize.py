"""Sanitize at capture: secrets never stored, values bounded (``core/sanitize.py``)."""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from enum import Enum
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from afteraction.core.capture import clean_env
from afteraction.core.sanitize import (
    CUT,
    LIMITS,
    OMITTED,
    REDACTED,
    Limits,
    cut_text,
    is_clean,
    is_secret_name,
    sanitize,
    sanitize_args,
)
from afteraction.errors import ConfigError, ValidationError
from tests.core.test_redact import SECRET_NAMES
from tests.core.test_redact_properties import ALNUM, texts_with_secrets

# --- sanitize ------------------------------------------------------------------------------------------------------


def test_sanitize_makes_a_json_compatible_copy() -> None:
    value = {"a": (1, 2.5, None, True), "b": OrderedDict(c="d"), "nan": math.nan, "inf": -math.inf}
    assert sanitize(value) == {"a": [1, 2.5, None, True], "b": {"c": "d"}, "nan": None, "inf": None}
    json.dumps(sanitize(value), allow_nan=False)


def test_enum_members_become_their_values() -> None:
    class Colour(str, Enum):
        RED = "red"

    class Size(int, Enum):
        BIG = 3

    out = sanitize({"c": Colour.RED, "s": Size.BIG})
    assert out == {"c": "red", "s": 3}
    assert type(out["c"]) is str and type(out["s"]) is int


def test_secret_named_keys_are_redacted_at_any_depth() -> None:
    value = {"a": [{"b": {"api_key": {"nested": "x"}, "ok": 1}}], "Password": "hunter2", "max_tokens": 5}
    assert sanitize(value) == {"a": [{"b": {"api_key": REDACTED, "ok": 1}}], "Password": REDACTED, "max_tokens": 5}


def test_strings_are_scrubbed_everywhere_including_keys() -> None:
    out = sanitize({"note": ["call me at bob@example.com"], "sk-abcdefghijklmnopqrstuvwxyz123456": 1})
    assert out == {"note": ["call me at [REDACTED:email]"], "[REDACTED:api_key]": 1}


def test_strings_are_cut_with_a_marker() -> None:
    out = sanitize("x" * 5000)
    assert out == "x" * LIMITS.max_string + CUT.chars.format(n=5000 - LIMITS.max_string)
    assert sanitize("abc", limits=Limits(max_string=2)) == "ab…[cut 1 chars]"
    assert cut_text("abcdef", 4) == "abcd…[cut 2 chars]"


def test_a_cut_never_leaves_half_a_secret() -> None:
    key = "sk-abcdefghijklmnopqrstuvwxyz123456"
    out = sanitize("x" * 90 + " " + key, limits=Limits(max_string=100))
    assert "sk-abcdef" not in out


def test_huge_strings_are_cut_cheaply_and_exactly() -> None:
    text = ("word " * 20_000) + "sk-abcdefghijklmnopqrstuvwxyz123456"
    out = sanitize(text, limits=Limits(max_string=10))
    assert out == "word word " + CUT.chars.format(n=len(text) - 10)


def test_objects_and_lists_are_cut_with_a_marker() -> None:
    limits = Limits(max_fields=2, max_items=3)
    assert sanitize({"a": 1, "b": 2, "c": 3, "d": 4}, limits=limits) == {"a": 1, "b": 2, "…": "[cut 2 more fields]"}
    assert sanitize(list(range(10)), limits=limits) == [0, 1, 2, "[cut 7 more items]"]


def test_deep_values_are_cut() -> None:
    deep: Any = "leaf"
    for _ in range(20):
        deep = [deep]
    out = sanitize(deep, limits=Limits(max_depth=3))
    assert out == [[[CUT.deep]]]


def test_cycles_are_cut_and_shared_values_are_not() -> None:
    loop: dict[str, Any] = {"a": 1}
    loop["self"] = loop
    items: list[Any] = [1]
    items.append(items)
    shared = {"x": 1}
    assert sanitize(loop) == {"a": 1, "self": CUT.cycle}
    assert sanitize(items) == [1, CUT.cycle]
    assert sanitize([shared, shared]) == [{"x": 1}, {"x": 1}]


@pytest.mark.parametrize(
    ("value", "path", "got"),
    [
        ({"nested": [0, 1, {"x": object()}]}, "args.nested[2].x", "object"),
        ({"data": b"bytes"}, "args.data", "bytes"),
        ({"tags": {1, 2}}, "args.tags", "set"),
        ({"a b": [1j]}, "args['a b'][0]", "complex"),
    ],
)
def test_values_that_are_not_json_raise_naming_the_path(value: Any, path: str, got: str) -> None:
    with pytest.raises(ValidationError) as caught:
        sanitize(value, field="args")
    assert caught.value.field == path
    assert caught.value.rule == f"is not JSON-serializable (got {got})"


def test_non_string_keys_raise() -> None:
    with pytest.raises(ValidationError) as caught:
        sanitize({"a": {1: "x"}})
    assert caught.value.field == "value.a"
    assert "not a string" in caught.value.rule


def test_values_under_secret_keys_are_never_inspected() -> None:
    assert sanitize({"password": object()}) == {"password": REDACTED}


def test_limits_must_be_positive() -> None:
    with pytest.raises(ConfigError):
        Limits(max_depth=0)
    assert Limits().max_calls == 100 and LIMITS.max_attempts == 20 and LIMITS.max_task == 4096


# --- sanitize_args -------------------------------------------------------------------------------------------------


def test_arguments_are_omitted_unless_allowed() -> None:
    args = {"strategy": "retry", "ticket": 42, "password": "hunter2"}
    assert sanitize_args(args) == {"strategy": OMITTED, "ticket": OMITTED, "password": REDACTED}
    assert sanitize_args(args, allow=["ticket", "password"]) == {
        "strategy": OMITTED,
        "ticket": 42,
        "password": REDACTED,
    }
    assert sanitize_args(args, allow=["*"]) == {"strategy": "retry", "ticket": 42, "password": REDACTED}


def test_allowed_arguments_are_sanitized() -> None:
    args = {"query": "token sk-abcdefghijklmnopqrstuvwxyz123456", "opts": {"api_key": "x", "n": 1}}
    assert sanitize_args(args, allow=["*"]) == {
        "query": "token [REDACTED:api_key]",
        "opts": {"api_key": REDACTED, "n": 1},
    }


def test_bad_arguments_raise_whether_allowed_or_not() -> None:
    with pytest.raises(ValidationError) as caught:
        sanitize_args({"strategy": object()}, field="attempts[0].calls[1].args")
    assert caught.value.field == "attempts[0].calls[1].args.strategy"
    with pytest.raises(ValidationError):
        sanitize_args(["not", "a", "mapping"])  # type: ignore[arg-type]


# --- property: no planted secret survives ----------------------------------------------------------------------------

KEYS = st.text(ALNUM + "_", min_size=1, max_size=8).filter(lambda k: not is_secret_name(k))


@st.composite
def structures(draw: st.DrawFn, depth: int = 0) -> tuple[Any, list[str]]:
    """A nested value with secrets planted in strings and under secret-named keys; the secrets it holds."""
    kind = draw(st.sampled_from(["text", "secret_key", "dict", "list", "scalar"] if depth < 4 else ["text", "scalar"]))
    if kind == "text":
        text, secrets = draw(texts_with_secrets())
        return text, secrets
    if kind == "secret_key":
        hidden = "hidden-" + draw(st.text(ALNUM, min_size=16, max_size=16))
        inner, _ = draw(structures(depth + 1))
        return {draw(st.sampled_from(SECRET_NAMES)): [hidden, inner]}, [hidden]
    if kind == "scalar":
        return draw(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False))), []
    children = [draw(structures(depth + 1)) for _ in range(draw(st.integers(0, 4)))]
    secrets = [s for _, found in children for s in found]
    if kind == "list":
        return [value for value, _ in children], secrets
    return {draw(KEYS) + str(n): value for n, (value, _) in enumerate(children)}, secrets


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(structures())
def test_no_planted_secret_survives_sanitize(planted: tuple[Any, list[str]]) -> None:
    value, secrets = planted
    dumped = json.dumps(sanitize({"result": value}), allow_nan=False)
    for secret in secrets:
        assert json.dumps(secret)[1:-1] not in dumped


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(KEYS, structures(), max_size=5), st.sampled_from(SECRET_NAMES), st.text(ALNUM, min_size=12))
def test_no_planted_secret_survives_sanitize_args(args: dict[str, Any], name: str, password: str) -> None:
    values = {key: value for key, (value, _) in args.items()}
    values[name] = "pw-" + password
    secrets = [s for _, found in args.values() for s in found] + ["pw-" + password]
    for allow in ((), ("*",), tuple(values)):
        dumped = json.dumps(sanitize_args(values, allow=allow), allow_nan=False)
        for secret in secrets:
            assert json.dumps(secret)[1:-1] not in dumped


# --- is_clean: the quick check that lets a clean value be kept as it is --------------------------------------------

JSON_VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(),
        st.text(max_size=30),
        st.text(ALNUM + " :=@-_", max_size=30),
        texts_with_secrets().map(lambda planted: planted[0]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=6),
        st.dictionaries(st.one_of(KEYS, st.sampled_from(SECRET_NAMES), st.text(max_size=12)), inner, max_size=6),
    ),
    max_leaves=40,
)
SMALL = Limits(max_depth=3, max_fields=4, max_items=4, max_string=24)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(JSON_VALUES, st.sampled_from([LIMITS, SMALL]))
def test_a_value_called_clean_is_exactly_what_sanitize_makes_of_it(value: Any, limits: Limits) -> None:
    if is_clean(value, limits):
        assert sanitize(value, limits=limits) == value


@pytest.mark.parametrize(
    "value",
    [
        {"password": "x"},
        {"note": "key sk-proj-abcdefghijklmnop0123456789"},
        {"a": float("nan")},
        {"a": (1, 2)},
        {"a": b"bytes"},
        {1: "non-string key"},
        {"a": "x" * 5000},
        {"a": list(range(65))},
        {str(n): n for n in range(65)},
        {"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": {"i": 1}}}}}}}}},
    ],
)
def test_values_sanitize_would_change_are_not_clean(value: Any) -> None:
    assert not is_clean(value)


def test_ordinary_payloads_are_clean() -> None:
    assert is_clean({"tool": "lookup_order", "args": {"order": 7, "note": "status pending", "ok": True, "x": None}})
    assert is_clean([1.5, "plain words, nothing secret", {"max_tokens": 512}])


# --- a secret's name in one field, its value in another (found by the third red-team pass) -------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([{"name": "DB_PASSWORD", "value": "Hunter2Pass-9"}], [{"name": "DB_PASSWORD", "value": REDACTED}]),
        ([{"name": "Cookie", "value": "sid=abc"}], [{"name": "Cookie", "value": REDACTED}]),  # a HAR header
        ([{"Key": "api_key", "Value": "x1"}], [{"Key": "api_key", "Value": REDACTED}]),
        ([{"key": "token", "value": "x1"}], [{"key": "token", "value": REDACTED}]),
        (["psql", "--password", "Hunter2Pass-9"], ["psql", "--password", REDACTED]),
        (["curl", "-u", "admin:pw", "https://x"], ["curl", "-u", REDACTED, "https://x"]),
        (["/usr/bin/mysql", "-u", "root", "-pHunter2"], ["/usr/bin/mysql", "-u", "root", REDACTED]),
        (["sudo", "curl", "-u", "admin:pw", "https://x"], ["sudo", "curl", "-u", REDACTED, "https://x"]),  # review
        (["timeout", "30", "mysql", "-pHunter2"], ["timeout", "30", "mysql", REDACTED]),
        ([["X-Api-Key", "a8F3kL9q"], ["DB_PASSWORD", "x"]], [["X-Api-Key", REDACTED], ["DB_PASSWORD", REDACTED]]),
        ([["Authorization", "Token a8F3kL9qZ2xW7vB1nM4cT6yR0pE5sD8g"]], [["Authorization", REDACTED]]),
    ],
)
def test_a_secret_named_in_a_neighbouring_field_is_redacted(value: Any, expected: Any) -> None:
    assert sanitize_args({"args": value}, allow=("*",)) == {"args": expected}
    assert not is_clean({"args": value})


@pytest.mark.parametrize(
    "value",
    [
        [{"name": "Accept", "value": "json"}],
        ["psql", "--password"],  # the flag last: psql asks
        ["ls", "--all", "x"],
        ["curl", "-v", "https://x"],
        ["pip", "-p", "x"],
        [["Accept", "json"]],
        ["reset password", "done"],  # a phrase, not a name
        {"labels": ["auth", "payments"]},  # found by a review: labels, not a header and its value
        ["token", "billing"],
        ["cookie", "banner"],
    ],
)
def test_neighbouring_fields_that_name_no_secret_are_kept(value: Any) -> None:
    assert sanitize_args({"args": value}, allow=("*",)) == {"args": value}
    assert is_clean({"args": value})


def test_flags_nulls_urls_and_the_shells_directory_are_kept_under_secret_names() -> None:
    """Found by a false-positive hunt: ``has_password: true``, ``{"token": null}``, ``PWD`` and a database URL
    without a password lost their value; psql's valueless ``--password`` took the next flag for its value."""
    value = {"has_password": True, "token": None, "DATABASE_URL": "postgres://db:5432/x", "password": "x1"}
    assert sanitize(value, limits=LIMITS) == {**value, "password": REDACTED}
    assert sanitize(["psql", "--password", "-h", "db"], limits=LIMITS) == ["psql", "--password", "-h", "db"]
    assert clean_env({"PWD": "/srv/orders", "DATABASE_URL": "postgres://u:pw@db/o"}) == {
        "PWD": "/srv/orders",
        "DATABASE_URL": "postgres://[REDACTED:url_credentials]@db/o",
    }


def test_a_programs_single_dash_password_flag_in_an_argument_list_is_redacted() -> None:
    login = ["docker", "login", "-u", "deploy", "-p", "Hunter2Pass9", "registry.example.com"]
    assert sanitize(login, limits=LIMITS) == [*login[:5], REDACTED, login[6]]
    assert sanitize(["sudo", "redis-cli", "-a", "x1", "ping"], limits=LIMITS) == [
        "sudo",
        "redis-cli",
        "-a",
        REDACTED,
        "ping",
    ]
    assert sanitize(["docker", "run", "-p", "8080:80", "nginx"], limits=LIMITS) == [
        "docker",
        "run",
        "-p",
        "8080:80",
        "nginx",
    ]


# --- an OAuth code in arguments -------------------------------------------------------------------------------------

GOOGLE_CODE = "4/0AX4XfWh7sK9Qm2LpZr8Tn3VbYcLqJ0pT5vW2xZ8aB"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"code": "SplxlOBeZQQYbYSWxSbIA", "state": "xyz"}, {"code": REDACTED, "state": "xyz"}),  # RFC 6749's
        ({"code": GOOGLE_CODE}, {"code": REDACTED}),
        ({"Code": "e72e16c7e42f292c6912"}, {"Code": REDACTED}),  # GitHub's: 20 hex digits
        (  # RFC 8628's device flow: the device code is the credential; the user code is shown to a person
            {"device_code": "GmRhmhcxhwAzkoEqiMEg_DnyEysNkuNhszIySk9eS", "user_code": "WDJB-MJHT"},
            {"device_code": REDACTED, "user_code": "WDJB-MJHT"},
        ),
        (
            {"body": {"grant_type": "authorization_code", "code": GOOGLE_CODE, "redirect_uri": "https://a.example/cb"}},
            {"body": {"grant_type": "authorization_code", "code": REDACTED, "redirect_uri": "https://a.example/cb"}},
        ),
    ],
)
def test_an_oauth_code_in_arguments_is_redacted(args: dict[str, Any], expected: dict[str, Any]) -> None:
    assert sanitize_args(args, allow=("*",)) == expected
    assert not is_clean(args)


@pytest.mark.parametrize(
    "code",
    [
        200,
        "E1001",
        "print('hi')",
        "python",
        "import os\nprint(os.listdir('data2024'))",
        "df = pd.read_csv('sales2024q1.csv')",
        "E11000_duplicate_key",
        "ERR_CONNECTION_REFUSED",
        "INVALID_REDIRECT_URI",
        "${AUTH_CODE}",
        "<authorization code>",
        "1234567890123456",
    ],
)
def test_a_code_that_is_no_oauth_code_is_kept_in_arguments(code: Any) -> None:
    args = {"code": code, "language": "python"}
    assert sanitize_args(args, allow=("*",)) == args
    assert is_clean(args)
