"""Secrets in forms other than ``name: value`` and values that only stand where a secret would
(``core/redact_forms.py``), read through ``scrub_text``."""

from __future__ import annotations

import pytest

from afteraction.core.redact import _may_hold_secret, scrub_text

P = "Hunter2Pass-9"
KEY = "a8F3kL9qZ2xW7vB1nM4cT6yR0pE5sD8g"

# (text, expected): found by the third red-team pass, all kept verbatim before
FORMS = [
    ("psql --password Hunter2Pass-9 -h db", "psql --password [REDACTED:secret_assignment] -h db"),
    ('app --api-key "a8F3 kL9q" run', 'app --api-key "[REDACTED:secret_assignment]" run'),
    ("mysql -u root -pHunter2Pass-9 -h db", "mysql -u root -p[REDACTED:secret_assignment] -h db"),
    (
        "curl -u admin:Hunter2Pass-9 https://api.example.com",
        "curl -u admin:[REDACTED:secret_assignment] https://api.example.com",
    ),
    ("curl --user=admin:Hunter2Pass-9 https://x", "curl --user=admin:[REDACTED:secret_assignment] https://x"),
    ("CREATE USER app WITH PASSWORD 'Hunter2Pass-9';", "CREATE USER app WITH PASSWORD '[REDACTED:secret_assignment]';"),
    ("ALTER USER app IDENTIFIED BY 'Hunter2Pass-9';", "ALTER USER app IDENTIFIED BY '[REDACTED:secret_assignment]';"),
    ("<password>Hunter2Pass-9</password>", "<password>[REDACTED:secret_assignment]</password>"),
    (f'<add key="ApiKey" value="{KEY}" />', '<add key="ApiKey" value="[REDACTED:secret_assignment]" />'),
    (f'<input value="{KEY}" name="csrf_token">', '<input value="[REDACTED:secret_assignment]" name="csrf_token">'),
    ('<entry key="password">Hunter2Pass-9</entry>', '<entry key="password">[REDACTED:secret_assignment]</entry>'),
    (
        "machine api.github.com login bob password Hunter2Pass-9",
        "machine api.github.com login bob password [REDACTED:secret_assignment]",
    ),
    (
        "machine h\n  login bob\n  password Hunter2Pass-9\n",
        "machine h\n  login bob\n  password [REDACTED:secret_assignment]\n",
    ),
    ("postgres://app:Hun/ter2#Pass?9@db/app", "postgres://[REDACTED:url_credentials]@db/app"),
    ("postgres://app:p@ss@db:5432/app", "postgres://[REDACTED:url_credentials]@db:5432/app"),
    (
        "https://u:pw@host/cb?email=bob@example.com",
        "https://[REDACTED:url_credentials]@host/cb?email=[REDACTED:email]",
    ),
]


@pytest.mark.parametrize(("text", "expected"), FORMS)
def test_secrets_in_command_sql_xml_netrc_and_url_forms_are_redacted(text: str, expected: str) -> None:
    assert _may_hold_secret(text)
    assert scrub_text(text) == expected
    assert scrub_text(expected) == expected


@pytest.mark.parametrize(
    "text",
    [
        "psql --password -h db",  # the flag alone: psql asks
        "run --verbose --token-count 5",
        "mysql -u root -p -h db",
        "pip install -p 3.11 pkg",  # -p outside mysql
        "curl -u admin https://x",  # no password: curl asks
        "<name>Bob</name> <user>x</user>",
        '<add key="Timeout" value="30" />',
        "the password reset flow works",
        "login works; default password policy applies",
        "-- SQL comment: password rules",
    ],
)
def test_ordinary_commands_and_markup_are_kept(text: str) -> None:
    assert scrub_text(text) == text


# found by the third red-team pass: these lost the fact a lesson needed
@pytest.mark.parametrize(
    "text",
    [
        "set api_key: ${OPENAI_API_KEY} in config.yaml",
        "password: ${DB_PASSWORD}",
        "client = OpenAI(api_key=os.environ['OPENAI_API_KEY'])",
        "conn = connect(password=os.getenv('DB_PASSWORD'))",
        "token = get_token(scope)",
        "api_key=None",
        "password: ********",
        "token: expired",
        "auth: disabled",
        "secret: none",
        "401 Unauthorized (token: missing)",
        '{"token": null, "password": "required"}',
        "api_key: %OPENAI_API_KEY% or {{ secrets.API_KEY }} or $OPENAI_API_KEY",
        "git clone git@github.com:acme/api.git",
        "ssh deploy@bastion.example.com 'systemctl restart api'",
        "scp -P 2222 build.tgz deploy@bastion.example.com:/srv",
        '{"auth": {\n "user": "bob"}}',
    ],
)
def test_references_states_and_ssh_targets_are_not_secrets(text: str) -> None:
    assert scrub_text(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("password=$HUNTERpass9", "HUNTERpass9"),  # not a whole reference
        ('{"password": "a0000[0]{0"}', "a0000[0]{0"),
        ("token = Hunter2Pass-9 # get_token(x)", P),
        ("mail bob@example.com: he knows", "bob@example.com"),
    ],
)
def test_secrets_that_resemble_a_reference_are_still_redacted(text: str, secret: str) -> None:
    assert secret not in scrub_text(text)
