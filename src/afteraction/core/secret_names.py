"""Which field names hold secrets: ``is_secret_name`` (``api_key``, ``X-Api-Key``, ``clientSecret``, ``DB_PASSWORD``
are; ``max_tokens``, ``token_count``, ``primary_key`` are not). ``core.redact`` re-exports it and reads text with it.
"""

from __future__ import annotations

import re
from functools import lru_cache

from afteraction.core.lookalike import fold, visible

__all__ = ["is_connection_name", "is_secret_name", "is_signature_name", "name_words"]

# A name is split into lower-case words (camelCase, kebab, snake, dots, spaces). It is secret when some word (or
# word pair) is an *anchor* and every word after the anchor only qualifies the value (``password_hash``,
# ``api_key_value``, ``token2``), never a property of it (``token_count``, ``password_policy``, ``secret_name``).

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def name_words(name: str) -> list[str]:
    """The words of a name, as written (``ExpiredToken`` -> ``Expired``, ``Token``; ``db_password`` -> ``db``, …)."""
    return _WORD.findall(name)


_ANCHORS = frozenset(
    """password passwd pwd pw passphrase passcode secret secrets token bearer csrf xsrf apikey authorization auth
    credential credentials creds cookie cookies dsn otp totp hotp pin cvv cvc ssn jwt privkey""".split()
)
# run-together names: ``dbpassword``, ``xapikey``, ``githubtoken`` is not listed on purpose (``token`` alone
# as a suffix would catch ``maxtoken``-style counters)
_COMPACT = tuple(
    """password passwd passphrase passcode secret apikey accesstoken authtoken apitoken idtoken refreshtoken
    sessiontoken bearertoken csrftoken xsrftoken privatekey secretkey signingkey encryptionkey sshkey accesskey
    sessionkey masterkey connstr connectionstring databaseurl dburl cookie credential credentials cardnumber
    ccnumber creditcard authorization storepass keypass dbpass smtppass sessionid sessid webhookurl""".split()
)
# ``pass`` alone is a verdict (``{"pass": 3}``, ``first_pass``); after one of these it is a password (``DB_PASS``)
_PASS_MODS = frozenset(
    """db database smtp mail email imap pop pop3 ldap redis mysql postgres postgresql pg mongo mongodb ftp sftp proxy
    admin root user login store keystore truststore key wifi vpn bind sasl http basic git registry docker amqp
    rabbitmq mq jdbc sql mssql oracle""".split()
)
_KEY_MODS = frozenset(
    """api private secret signing encryption decryption ssh access session master client auth crypto gpg pgp rsa
    hmac shared account storage license webhook deploy app subscription service admin root""".split()
)
_URL_MODS = frozenset(
    """database db conn connection postgres postgresql pg mysql redis mongo mongodb amqp rabbitmq broker
    sqlalchemy webhook hook""".split()
)
_SUFFIX_OK = frozenset(
    """value val header hash hashed code str string text raw b64 base64 hex enc encrypted plain plaintext data env
    var secret key keys token number num no field param input body bytes bin pem der blob confirm confirmation
    confirmed new old current again repeat verify jar sha""".split()
)
# the senders whose webhook signature header names a credential's proof (``X-Hub-Signature-256``, ``Stripe-Signature``,
# ``X-Slack-Signature``, ``Svix-Signature``, Standard Webhooks' ``Webhook-Signature``); ``signature`` alone is a word
_SIGNATURE_MODS = frozenset("hub stripe slack twilio svix webhook".split())
_SIGNATURE_NAME = re.compile(r"(?:signature|hmac)(?:[-_]?sha)?(?:[-_]?[0-9]+)?\Z", re.IGNORECASE)


def is_signature_name(name: str) -> bool:
    """Whether ``name`` (a secret name) ends as a webhook signature header does (``X-Hub-Signature-256``,
    ``X-Shopify-Hmac-Sha256``): what follows it in text is a signature only when it looks generated."""
    return _SIGNATURE_NAME.search(name) is not None


def _anchor_ends_at(words: list[str], i: int) -> bool:
    word = words[i]
    if word in _ANCHORS or word.endswith(_COMPACT):
        return True
    prev = words[i - 1] if i else ""
    if word in ("key", "keys"):
        return prev in _KEY_MODS
    if word in ("url", "uri"):
        return prev in _URL_MODS
    if word in ("str", "string"):
        return prev in ("conn", "connection")
    if word in ("number", "num", "no"):
        return prev in ("card", "cc")
    if word == "card":
        return prev == "credit"
    if word in ("code", "codes"):
        return prev in ("security", "mfa", "verification", "recovery", "backup")
    if word == "pass":
        return prev in _PASS_MODS
    if word in ("phrase", "words"):
        return prev in ("seed", "recovery", "mnemonic")
    if word == "signature":
        return prev in _SIGNATURE_MODS
    if word == "hmac":  # ``X-Shopify-Hmac-Sha256``
        return prev == "shopify"
    if word == "mnemonic":  # a wallet's; ``mnemonic`` alone is an instruction's (``mnemonic: mov``)
        return prev in ("seed", "wallet", "recovery", "bip39")
    return False


_SHELL = frozenset(("PWD", "OLDPWD"))
# the keys an upper-case ``X_KEY`` names that are no secret (``PRIMARY_KEY``, ``CACHE_KEY``, ``PUBLIC_KEY``)
_PLAIN_KEYS = frozenset(
    """primary foreign sort partition cache idempotency public routing shard hash lookup unique composite
    natural surrogate row object bucket group dedup dedupe message cursor index map hot""".split()
)


@lru_cache(maxsize=8192)
def is_secret_name(name: str) -> bool:
    """Whether a field called ``name`` holds a secret (``api_key``, ``X-Api-Key``, ``clientSecret``, ``DB_PASSWORD``).

    Counts and settings that merely contain such a word are not secret: ``max_tokens``, ``token_count``,
    ``tokenizer``, ``author``, ``keyboard``, ``primary_key``, ``password_policy``, ``session_id`` (an id that
    names a session; the cookies ``PHPSESSID``, ``JSESSIONID``, ``sessionid`` are secret). A name is read as a
    reader sees it, look-alike letters folded: ``pass\u200bword`` and Cyrillic ``pаssword`` are ``password``.
    """
    if not name.isascii():
        name = fold(visible(name))
    if name in _SHELL:
        return False  # ``PWD``, ``OLDPWD``: the shell's working directories
    words = [word.lower() for word in name_words(name)]
    if name.isupper() and len(words) > 1 and words[-1] in ("key", "pat") and words[-2] not in _PLAIN_KEYS:
        return True  # an environment variable: ``OPENAI_KEY``, ``STRIPE_KEY``, ``GITHUB_PAT``
    return _anchor(words) is not None


def _anchor(words: list[str]) -> int | None:
    """The position of the anchor that makes ``words`` (lower case) a secret name, if any."""
    tail_ok = True  # every word after position i qualifies the value
    for i in range(len(words) - 1, -1, -1):
        if tail_ok and _anchor_ends_at(words, i):
            return i
        word = words[i]  # ``SECRET_KEY_BASE``: Rails's secret key, not a base of something
        tail_ok = tail_ok and (word in _SUFFIX_OK or word.isdigit() or (word == "base" and words[i - 1 : i] == ["key"]))
    return None


# the secret names of a connection's URL or string: its own password is the secret, scrubbed as a URL's, and the rest
# (host, database) is kept; a webhook's URL is the credential itself (``SLACK_WEBHOOK_URL``, ``hook_url``)
_CONNECTION_MODS = _URL_MODS - {"webhook", "hook"}
_CONNECTION_COMPACT = ("databaseurl", "dburl", "connstr", "connectionstring")


@lru_cache(maxsize=8192)
def is_connection_name(name: str) -> bool:
    """Whether ``name`` is a secret name for a connection URL or string (``DATABASE_URL``, ``dsn``, ``REDIS_URL``,
    ``conn_str``): a URL under it keeps its host and database, its password scrubbed as a URL's. Under any other
    secret name (``webhook_url``, ``token``) the value, a URL too, is the secret."""
    if not name.isascii():
        name = fold(visible(name))
    words = [word.lower() for word in name_words(name)]
    at = None if name in _SHELL else _anchor(words)
    if at is None:
        return False
    word, prev = words[at], words[at - 1] if at else ""
    return (
        word == "dsn"
        or word.endswith(_CONNECTION_COMPACT)
        or (word in ("url", "uri") and prev in _CONNECTION_MODS)
        or (word in ("str", "string") and prev in ("conn", "connection"))
    )
