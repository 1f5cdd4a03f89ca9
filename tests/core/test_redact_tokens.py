"""Secrets known by their shape (``core/redact_tokens.py``), read through ``scrub_text``."""

from __future__ import annotations

import random

import pytest

from afteraction.core.redact import _may_hold_secret, scrub_text

# found by the third red-team pass: credential formats in wide use that were kept verbatim
PROVIDER_TOKENS = [
    "gsk_4fT9qLm2Xv8RzK1pW7nB3cY6dH0sJ5uE2aG8iO4kMxQzVbNt",  # Groq
    "xai-4fT9qLm2Xv8RzK1pW7nB3cY6dH0sJ5uE2aG8iO4kMxQzVbNt4fT9qLm2Xv8RzK1pW7nB3c",  # xAI
    "r8_4fT9qLm2Xv8RzK1pW7nB3cY6dH0sJ5uE2aG8",  # Replicate
    "pplx-4fT9qLm2Xv8RzK1pW7nB3cY6dH0sJ5uE2aG8iO4kMxQzVb",  # Perplexity
    "lsv2_pt_4fT9qLm2Xv8RzK1pW7nB3cY6dH0sJ5uE_2aG8iO4kMx",  # LangSmith
    "pcsk_4fT9q_Lm2Xv8RzK1pW7nB3cY6dH0sJ5uE2aG8iO4kMxQzVbNt",  # Pinecone
    "ya29.a0AfH6SMBx4fT9qLm2Xv8RzK1pW7nB3cY6dH0sJ5uE2aG8iO4kMxQzVbNt",  # Google OAuth access token
    "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",  # Google OAuth client secret
    "xapp-1-A0123456789-1234567890123-abcdef0123456789abcdef0123456789",  # Slack app token
    "shpat_0123456789abcdef0123456789abcdef",  # Shopify
    "shpss_0123456789abcdef0123456789abcdef",
    "dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",  # DigitalOcean
    "hvs.CAESIAbCdEfGhIjKlMnOpQrStUvWxYz0123456789",  # HashiCorp Vault
    "pypi-AgEIcHlwaS5vcmcCJGFiY2RlZjAxLTIzNDUtNjc4OS1hYmNkLWVmMDEyMzQ1Njc4OQ",  # PyPI
    "glptt-0123456789abcdef0123",  # GitLab trigger, deploy, runner
    "gldt-AbCdEfGhIjKlMnOpQrSt",
    "glrt-AbCdEfGhIjKlMnOpQrSt",
    "whsec_0123456789AbCdEfGhIjKlMnOpQrStUv",  # Stripe webhook secret
    "dapi0123456789abcdef0123456789abcdef",  # Databricks
    "ntn_0123456789AbCdEfGhIjKlMnOpQrStUvWxYz0123456",  # Notion
    "ATATT3xFfGF0AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",  # Atlassian
    "SK0123456789abcdef0123456789abcdef",  # Twilio
    "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0",  # Telegram bot
]


@pytest.mark.parametrize("token", PROVIDER_TOKENS)
def test_provider_tokens_are_redacted(token: str) -> None:
    text = f"auth failed with {token} (see logs)"
    assert _may_hold_secret(text)
    assert scrub_text(text) == "auth failed with [REDACTED:api_key] (see logs)"


@pytest.mark.parametrize(
    ("url", "kept", "secret"),
    [
        ("https://hooks.slack.com/services/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", "services/", "aB3dE5"),
        (
            "https://discord.com/api/webhooks/1234567890/aB3dE5gH7jK9mN1pQ3sT5vX7yZ9bC1dF3hJ5kL7n-_abcdefghijk",
            "webhooks/",
            "aB3dE5",
        ),
        ("https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0/sendMessage", "/bot", "AAHdq"),
    ],
)
def test_webhook_and_bot_urls_lose_their_secret_and_keep_where(url: str, kept: str, secret: str) -> None:
    scrubbed = scrub_text(f"POST {url} failed")
    assert secret not in scrubbed and kept in scrubbed and "[REDACTED:api_key]" in scrubbed


@pytest.mark.parametrize(
    "text",
    [
        "maskgsk_4fT9qLm2Xv8RzK1pW7nB3cY6dH0sJ5uE2aG8iO4kMxQzVbNt",  # inside a longer word
        "the dapi module reads dapiclient",
        "my xai-client-library-for-python-is-great",  # no digit: a name
        "SKU0123456789abcdef0123456789abcdef",
    ],
)
def test_words_that_only_resemble_a_provider_token_are_kept(text: str) -> None:
    assert scrub_text(text) == text


# --- cards ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("card", ["4111.1111.1111.1111", "5500.0000.0000.0004"])
def test_a_card_written_with_dots_is_redacted(card: str) -> None:
    assert scrub_text(f"card {card} declined") == "card [REDACTED:card] declined"


@pytest.mark.parametrize(
    "text",
    [
        "dd.trace_id=5804755971877604743",  # a decimal trace id that passes Luhn (red team, pass three)
        '{"span_id": 4111111111111111}',  # named as an id: an id, whatever its digits
        "traceId: 4111111111111111",
        "order 1000000000000008 shipped",  # passes Luhn, but no brand starts with 1
        "ref 9111111111111111",
    ],
)
def test_numbers_that_are_not_cards_are_kept(text: str) -> None:
    assert scrub_text(text) == text


def test_decimal_trace_ids_are_not_taken_for_cards() -> None:
    draw = random.Random(1)
    ids = [str(draw.getrandbits(63)) for _ in range(2000)]
    assert [i for i in ids if scrub_text(f"dd.trace_id={i}") != f"dd.trace_id={i}"] == []
    # unnamed, a few still look like a card of some brand; far fewer than the 115 in 2000 taken before
    assert sum("REDACTED" in scrub_text(f"x {i}") for i in ids) < 60


@pytest.mark.parametrize(
    "card", ["4111111111111111", "378282246310005", "6011111111111117", "3530111333300000", "5555555555554444"]
)
def test_cards_of_each_brand_are_still_redacted(card: str) -> None:
    assert scrub_text(f"paid with {card}") == "paid with [REDACTED:card]"
