"""Where a secret stands in text other than after ``name: value``: command lines (``--password X``, ``mysql -pX``,
``curl -u user:pw``), SQL (``IDENTIFIED BY '…'``, ``WITH PASSWORD '…'``), XML (``<password>…</password>``,
``<add key="ApiKey" value="…"/>``), ``.netrc`` (``machine h login u password X``), the userinfo of a URL
(``postgres://app:Hun/ter2#Pass?9@db``), a signed URL's signature and an OAuth redirect's code (``?code=…``,
``&X-Amz-Signature=…``); and what is not a secret although it stands where one would: a
placeholder (``${OPENAI_API_KEY}``, ``environ['…']``, ``get_token(scope)``), a state (``missing``,
``expired``, ``none``, ``********``), an ``ssh``/``git`` target (``git@github.com:acme/api.git``) taken for an e-mail.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from afteraction.core.redact_runs import Runs
from afteraction.core.redact_tokens import Hit, apply_hits, redaction
from afteraction.core.secret_names import is_secret_name

__all__ = [
    "CODE_KEYS",
    "PASSWORD_FLAGS",
    "form_hits",
    "is_code",
    "is_placeholder",
    "is_url",
    "looks_generated",
    "may_hold_form",
    "may_hold_signed",
    "not_an_email",
    "signed_hits",
    "url_credentials",
]

# --- values that are not secrets -------------------------------------------------------------------------------------

_STATES = frozenset(
    """missing expired disabled enabled none null nil true false invalid required optional empty unset undefined
    revoked unknown absent present set notset not provided valid redacted hidden masked omitted n/a na yes no ok
    placeholder changeme""".split()
)
# a reference to where the secret is, not the secret: ``${VAR}``, ``$VAR``, ``%VAR%``, ``{{ var }}``, a call or a
# subscript of a (dotted) name (``environ['KEY']``, ``get_token(scope)``), ``process.env.KEY``
# an argument that names where the secret is: a name, a ``name=name`` keyword, or a quoted variable name
# (``getenv('OPENAI_API_KEY')``); a quoted literal is a value (``SecretStr('Tr0ub4dor')`` holds the secret)
_NAMED = r"""(?:[A-Za-z_][\w.]{0,40}|'[A-Za-z_][\w.:-]{0,80}'|"[A-Za-z_][\w.:-]{0,80}")"""
_ARG = rf"""(?:(?:[A-Za-z_]\w{{0,40}}[ \t]*=[ \t]*)?{_NAMED})"""
_REFERENCE = re.compile(
    rf"""\$\{{[A-Za-z_][\w.:-]{{0,80}}\}}|\$[A-Z_][A-Z0-9_]{{1,80}}|%[A-Za-z_]\w{{0,80}}%|\$?\{{\{{[^{{}}\n]{{1,80}}\}}\}}
    |\$\([^()\n]{{1,120}}\)|<[A-Za-z_][\w .-]{{0,40}}>|YOUR_[A-Z0-9_]{{1,60}}|REPLACE[_-]?ME\b|\(sensitive[ \t]value\)
    |[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?:\([ \t]*(?:{_ARG}(?:[ \t]*,[ \t]*{_ARG})*)?[ \t]*\)|\[{_ARG}\])
    |process\.env\.[A-Za-z_]\w*""",
    re.VERBOSE,
)
_AFTER_REFERENCE = frozenset(" \t\r\n),;]}\"'")
_MASK = frozenset("*•·xX")


def is_placeholder(text: str, start: int, end: int) -> bool:
    """Whether the value ``text[start:end]`` (and, for a reference, what follows it) is not a secret: state
    words, a mask (``********``), a reference, or a lone bracket that opens a structure (``"auth": {``)."""
    value = text[start:end]
    if not value or value in "{[(" or value.startswith("[REDACTED"):
        return True
    if all(word.lower() in _STATES for word in value.split()):
        return True
    if len(value) >= 3 and set(value) <= _MASK:
        return True
    reference = _REFERENCE.match(text, start)
    if reference is None or reference.end() < end:
        return False  # the whole value is the reference, and it ends there: ``environ['KEY'])``
    return reference.end() == end or reference.end() == len(text) or text[reference.end()] in _AFTER_REFERENCE


_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{1,30}://")


def is_url(value: str, start: int = 0, end: int | None = None) -> bool:
    """Whether ``value`` (or ``value[start:end]``, read in place) starts as a URL does (``postgres://…``): under a
    secret name it is no secret itself, and its own password is scrubbed as a URL's (``url_credentials``)."""
    return _URL.match(value, start, len(value) if end is None else end) is not None


# --- URL userinfo ------------------------------------------------------------------------------------------------

# the scheme is kept and need not start a word: ``4111…postgres://u:p@h`` and a key glued before it still lose ``u:p``
_URL_USER = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,30}://[^\s/?#@:]*:")
# an ``@`` that ends the userinfo: a host (and port) follows, then the path, query, fragment or the end
_AT_HOST = re.compile(r"@(?=(?:[A-Za-z0-9._~%-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]*)?(?:[/?#\"'<>),;\s]|\Z))")
_QUERY = re.compile(r"[?&][\w%.-]+=")
_NOT_SPACE = re.compile(r"\S*")


def url_credentials(text: str) -> str:
    """``text`` with the userinfo of each URL replaced (``postgres://[REDACTED:url_credentials]@db/app``). The
    password may hold ``/``, ``#``, ``?`` or ``@``: the userinfo ends at the last ``@`` that a host follows, before
    the query starts (``pw@host/?email=bob@example.com`` keeps the e-mail's ``@`` out of it).

    The ``@`` and query names of a run without spaces are found once for all the URLs in it, and each URL's end is
    looked up among them (searched again for each URL and each ``@``, ``http://u:p@`` repeated cost the cube of its
    length)."""
    hits: list[Hit] = []
    runs = Runs(text)
    read = -1  # the end of the run whose ``@`` and query names were found
    ats: list[int] = []
    queries: list[int] = []  # where each query name starts
    query_ends: list[int] = []
    for match in _URL_USER.finditer(text):
        if hits and match.start() < hits[-1][1]:
            continue
        start = match.group(0).index("://") + 3 + match.start()
        run_end = runs.end(_NOT_SPACE, match.end())
        if run_end != read:
            read = run_end
            ats = [at.start() for at in _AT_HOST.finditer(text, match.end(), run_end)]
            found = list(_QUERY.finditer(text, match.end(), run_end))
            queries, query_ends = [query.start() for query in found], [query.end() for query in found]
        first_query = bisect_left(queries, match.end())  # the userinfo ends before the query starts
        before = query_ends[first_query] if first_query < len(queries) else run_end + 1
        last = bisect_left(ats, before) - 1
        if last < 0 or ats[last] < match.end():
            continue
        hits.append((start, ats[last], redaction("url_credentials")))
    return apply_hits(text, hits)


# --- signed URLs and OAuth redirects ------------------------------------------------------------------------------

# Names whose value is a credential in a URL's query or fragment, or in a form body: an OAuth authorization code or
# verifier (``?code=…&state=…``, ``code_verifier=…``, a device flow's ``device_code=…``), a signed URL's signature
# (S3's ``X-Amz-Signature``, GCS's ``X-Goog-Signature``, CloudFront's and GCS v2's ``Signature``, Shopify's ``hmac``,
# OAuth 1's ``oauth_signature``; Azure's ``sig`` is secret everywhere, ``core.redact`` reads it). Elsewhere these are
# ordinary words (``exit code=1``, ``signature=valid``), and a value written by a person is kept even here
# (``?code=python``, ``?code=404``).
_SIGNED = re.compile(
    r"(?<![\w%.-])(?:code|code_verifier|device_code|oauth_verifier|signature|x-amz-signature|x-goog-signature"
    r"|oauth_signature|hmac)=(?P<bare>[^&#;\s\"'<>()\[\]\\]+)",
    re.IGNORECASE,
)
_ALNUM_RUN = re.compile("[A-Za-z0-9]+")


def may_hold_signed(lower: str) -> bool:
    """A quick necessary condition for ``signed_hits`` to find anything (``lower``: the text in lower case)."""
    return "=" in lower and ("code=" in lower or "signature=" in lower or "hmac=" in lower or "verifier=" in lower)


def looks_generated(value: str) -> bool:
    """Whether ``value`` looks generated by a machine (a code, a signature) rather than written: 16 characters at
    least, and its longest alphanumeric run (8 at least) mixes letters with digits, or switches case as no word does
    (``SplxlOBeZQQYbYSWxSbIA``; not ``E11000_duplicate_key``, ``INVALID_REDIRECT_URI``, ``PythonTutorial``)."""
    if len(value) < 16:
        return False
    run: str = max(_ALNUM_RUN.findall(value), key=len, default="")
    if len(run) < 8 or run.isdigit():
        return False
    if not run.isalpha():
        return True  # letters and digits
    upper = sum(map(str.isupper, run))
    return 4 * upper >= len(run) and upper < len(run)


def signed_hits(text: str) -> list[Hit]:
    """The values of ``text``'s authorization codes and URL signatures, as spans to replace: after ``?``, ``&`` or
    ``#``, or first in a form body (``code=…&state=…``), and only a value that looks generated."""
    hits: list[Hit] = []
    for match in _SIGNED.finditer(text):
        before = text[match.start() - 1 : match.start()]
        if before not in ("?", "&", "#") and not (
            (not before or before.isspace() or before in "\"'") and text.startswith("&", match.end())
        ):
            continue  # not in a query: ``exit code=…``; first in a form body only when a field follows
        start, end = match.span("bare")
        if looks_generated(match["bare"]) and not is_placeholder(text, start, end):
            hits.append((start, end, redaction("secret_assignment")))
    return hits


#: The keys that hold an OAuth authorization code or a device flow's code in a mapping (tool arguments, a token
#: request's body), as they are spelled: ``{"code": "SplxlOBe…"}``. A device flow's ``user_code`` is left out: it is
#: short, shown to a person, and grants nothing without that person's login.
CODE_KEYS = frozenset(("code", "Code", "CODE", "device_code", "deviceCode", "DEVICE_CODE"))
# a code as an OAuth server issues it: one run of URL-safe (or base64) characters, padding at the end only; source
# code (``print('hi')``, ``x = compute2024()``) has spaces, quotes, brackets or a ``=`` inside
_CODE_VALUE = re.compile(r"[A-Za-z0-9._~+/-]{16,4096}={0,2}")


def is_code(key: str, value: object) -> bool:
    """Whether ``value``, under ``key`` in a mapping, is an authorization code: ``key`` is one of ``CODE_KEYS`` and
    ``value`` a single token that looks generated (``{"code": 200}``, ``{"code": "E1001"}``, ``{"code": "print('hi')"}``
    and ``{"code": "python"}`` are kept)."""
    return (
        key in CODE_KEYS
        and isinstance(value, str)
        and _CODE_VALUE.fullmatch(value) is not None
        and looks_generated(value)
    )


# --- e-mail look-alikes ----------------------------------------------------------------------------------------------

_SSH_BEFORE = re.compile(
    r"(?:^|[\s;|&(`])(?:ssh|scp|sftp|rsync|mosh|autossh|ssh-copy-id|git(?:[ \t]+\w+)?)"
    r"(?:[ \t]+-{1,2}[\w-]+(?:[ \t]+[^\s@-]\S*)?)*[ \t]+\Z"
)


def not_an_email(text: str, match: re.Match[str]) -> bool:
    """A ``user@host`` that is an ``ssh``/``git`` target, not an address: ``git@github.com:acme/api.git`` (a
    path after ``:``), ``ssh deploy@bastion.example.com``, ``scp -P 22 f bob@host``."""
    end = match.end()
    if text.startswith(":", end) and end + 1 < len(text) and not text[end + 1].isspace():
        return True
    line = text.rfind("\n", 0, match.start()) + 1
    return _SSH_BEFORE.search(text, max(line, match.start() - 160), match.start()) is not None


# --- command lines, SQL, XML, .netrc -------------------------------------------------------------------------------

_VAL = r"(?:\"(?P<dq>[^\"\n]*)\"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s\"'|;&<>]+))"
_FLAG = re.compile(r"(?<![\w-])--(?P<name>[A-Za-z][\w-]{1,40})[ \t]+(?!-)" + _VAL)
_MYSQL = re.compile(r"\bmysql(?:dump|admin|import|check|slap|sh)?\b[^\n|;&]*", re.IGNORECASE)
_MYSQL_P = re.compile(r"(?<![\w-])-p(?![ \t])" + _VAL)
# ``curl … -u user:password`` in one command (up to a ``|``, ``;``, ``&`` or the line's end): see ``_curl_spans``
_CURL = re.compile(r"\bcurl\b")
_COMMAND = re.compile(r"[^\n|;&]*")
_CURL_USER = re.compile(r"(?<![\w-])(?:-u[ \t]*|--user[ \t=][ \t]*)[\"']?")
_USER = re.compile(r"[^\s:\"']*")
_PASSWORD = re.compile(r"[^\s\"']*")
_SQL = re.compile(
    r"(?i:\bidentified[ \t]+(?:with[ \t]+\w+[ \t]+)?by(?:[ \t]+password)?|\bpassword)[ \t]+"
    r"(?:'(?P<sq>(?:[^'\n]|'')*)'|\"(?P<dq>[^\"\n]*)\")"
)
_TAG = re.compile(r"<(?P<name>[A-Za-z_][\w:.-]{0,63})(?:[ \t][^<>]*)?>(?P<bare>[^<\n]{1,512})</(?P=name)>")
_KEY_ATTR = r"\b(?:key|name|id)[ \t]*=[ \t]*(?P<q1>[\"'])(?P<name>[^\"'<>\n]{1,64})(?P=q1)"
_VALUE_ATTR = r"\bvalue[ \t]*=[ \t]*(?P<q2>[\"'])(?P<bare>[^\"'\n]*)(?P=q2)"
_ATTRS = (
    re.compile(r"<[A-Za-z][^<>]*?" + _KEY_ATTR + r"[^<>]*?" + _VALUE_ATTR),
    re.compile(r"<[A-Za-z][^<>]*?" + _VALUE_ATTR + r"[^<>]*?" + _KEY_ATTR),
    re.compile(
        r"<(?P<tag>[A-Za-z][\w:.-]{0,63})[ \t][^<>]*?" + _KEY_ATTR + r"[^<>]*>(?P<bare>[^<\n]{1,512})</(?P=tag)>"
    ),
)
_NETRC = re.compile(
    r"\b(?:machine|login|default[ \t]+login)[ \t]+\S+(?:\s+(?:login|account|port)[ \t]+\S+)*"
    r"\s+password[ \t]+(?P<bare>\S+)"
)


#: Programs whose password is given after a single-dash flag (``docker login -p X``, ``redis-cli -a X``).
PASSWORD_FLAGS: dict[str, frozenset[str]] = {
    **dict.fromkeys(
        ("docker login", "podman login", "nerdctl login", "sshpass", "mongosh", "mongo"), frozenset(("-p",))
    ),
    "redis-cli": frozenset(("-a",)),
    "keytool": frozenset(("-storepass", "-keypass", "-srcstorepass", "-deststorepass")),
    "sqlcmd": frozenset(("-P",)),
    **dict.fromkeys(("ldapsearch", "ldapmodify", "ldapadd", "ldapdelete"), frozenset(("-w",))),
    "zip": frozenset(("-P",)),
    "openssl": frozenset(("-passin", "-passout")),
}
_PROGRAM = re.compile(
    r"(?<![\w-])(?P<program>"
    + "|".join(sorted((re.escape(name).replace("\\ ", "[ \t]+") for name in PASSWORD_FLAGS), key=len, reverse=True))
    + r")\b"
    r"[^\n|;&]*"
)
_SHORT_FLAG = re.compile(r"(?<=[ \t])(?P<flag>-[A-Za-z]+)[ \t]+(?:pass:)?" + _VAL)


def may_hold_form(text: str, lower: str) -> bool:
    """A quick necessary condition for ``form_hits`` to find anything (``lower``: ``text.lower()``): every
    command-line form has a flag (`` -x``, ``--x``, ``-pX``), the others a word of their own."""
    return (
        ("-" in text and (" -" in text or "-p" in text or "--" in text))
        or "</" in text
        or "value" in lower
        or "assword" in lower
        or "identified" in lower
        or "curl" in lower
    )


def _value_span(text: str, match: re.Match[str]) -> tuple[int, int] | None:
    for group in ("dq", "sq", "bare"):
        if group in match.re.groupindex and match.group(group) is not None:
            start, end = match.span(group)
            return None if is_placeholder(text, start, end) else (start, end)
    return None


def _curl_spans(text: str) -> list[tuple[int, int]]:
    """The passwords of ``curl -u user:password`` (``--user``): after each ``curl``, its first ``-u`` in the same
    command that a ``user:password`` follows. A command's ``-u`` flags are read once for all the ``curl`` in it, and
    each flag's user and password runs once for all flags (searched again from each ``curl`` to the end of its line,
    ``curl -u `` repeated on a line cost 15 s for 64 KiB)."""
    runs = Runs(text)
    spans: list[tuple[int, int]] = []
    none_from, none_to = -1, -1  # a span of a command read last where no ``-u`` has a password after it
    at = 0
    while (curl := _CURL.search(text, at)) is not None:
        command_end = runs.end(_COMMAND, curl.end(), "command")
        found = None
        if not (none_from <= curl.end() and none_to == command_end):
            found = _curl_password(text, runs, curl.end(), command_end)
            none_from, none_to = (curl.end(), command_end) if found is None else (-1, -1)
        if found is None:
            at = curl.start() + 1
            continue
        if not is_placeholder(text, *found):
            spans.append(found)
        at = found[1]
    return spans


def _curl_password(text: str, runs: Runs, start: int, end: int) -> tuple[int, int] | None:
    """The password of the first ``-u user:password`` that starts between ``start`` and ``end``."""
    for flag in _CURL_USER.finditer(text, start, end):
        user_end = runs.end(_USER, flag.end(), "user")
        if text.startswith(":", user_end):
            password_end = runs.end(_PASSWORD, user_end + 1, "password")
            if password_end > user_end + 1:
                return user_end + 1, password_end
    return None


def form_hits(text: str, lower: str) -> list[Hit]:
    """The secrets ``text`` holds in these forms, as spans to replace, in order and not overlapping."""
    named: list[re.Pattern[str]] = []  # a secret when the name their match holds is secret
    plain: list[re.Pattern[str]] = []  # a secret by their place alone
    if "--" in text:
        named.append(_FLAG)
    if "</" in text:
        named += (_TAG, _ATTRS[2])
    if "value" in lower:
        named += _ATTRS[:2]
    if "assword" in lower or "identified" in lower:
        plain.append(_SQL)
    if "assword" in lower and ("machine" in lower or "login" in lower):
        plain.append(_NETRC)
    spans: list[tuple[int, int]] = _curl_spans(text) if "curl" in lower else []
    for command in _PROGRAM.finditer(text):  # ``docker login -u deploy -p X``: the program's own flags only
        flags = PASSWORD_FLAGS[" ".join(command["program"].split())]
        for match in _SHORT_FLAG.finditer(text, command.start(), command.end()):
            if match["flag"] in flags and (span := _value_span(text, match)) is not None:
                spans.append(span)
    for pattern in named + plain:
        for match in pattern.finditer(text):
            if pattern in named and not is_secret_name(match["name"]):
                continue
            if (span := _value_span(text, match)) is not None:
                spans.append(span)
    if "mysql" in lower:
        for command in _MYSQL.finditer(text):
            for match in _MYSQL_P.finditer(text, command.start(), command.end()):
                if (span := _value_span(text, match)) is not None:
                    spans.append(span)
    hits: list[Hit] = []
    for start, end in sorted(spans):
        if hits and start < hits[-1][1]:
            continue
        hits.append((start, end, redaction("secret_assignment")))
    return hits
