"""``error_class``: reduce an error text to its short class."""

from __future__ import annotations

import errno
import re
from functools import lru_cache

__all__ = ["error_class"]

_EXCEPTION = re.compile(
    r"(?:^|\n)\s*(?:[A-Za-z_][\w]*\.)*([A-Z][A-Za-z0-9_]*(?:Error|Exception|Exit|Interrupt|Fault|Failure|Timeout|Warning|Denied|Refused|Conflict|Held|Exceeded|NotFound|Invalid)"
    r"[A-Za-z0-9_]*)\b(?=\s*(?::|\(|$|\n))"
)
# Other CamelCase type names (two capitals at least, so "Note: …" is not one), before a colon.
_EXCEPTION_ANY = re.compile(r"(?:^|\n)\s*(?:[A-Za-z_]\w*\.)*([A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*)\s*:\s")
_HTTP = re.compile(
    r"\b(?:HTTP(?:/\d(?:\.\d)?)?\s*(?:error\s*)?|status(?:\s*code)?\s*[:=]?\s*|response\s*code\s*[:=]?\s*)([1-5]\d\d)\b",
    re.IGNORECASE,
)
_HTTP_PHRASE = re.compile(
    r"\b([45]\d\d)\s+(?:Bad Request|Unauthorized|Forbidden|Not Found|Method Not Allowed|Conflict|Gone|"
    r"Too Many Requests|Internal Server Error|Bad Gateway|Service Unavailable|Gateway Timeout|Payment Required|"
    r"Request Timeout|Unprocessable)",
    re.IGNORECASE,
)
_EXIT = re.compile(
    r"\b(?:exit(?:ed)?(?:\s+with)?(?:\s+(?:code|status))?|exit_code|returncode|return code|"
    r"non-zero exit status)\s*[:=]?\s*(-?\d{1,3})\b",
    re.IGNORECASE,
)
_ERRNO_NAME = re.compile(r"\b(E[A-Z0-9]{2,15})\b")
_ERRNO_NUMBER = re.compile(r"\[Errno (\d+)\]")
_TIMEOUT = re.compile(r"\b(?:timed?\s*out|time-?out|deadline exceeded)\b", re.IGNORECASE)
_KNOWN_ERRNO = frozenset(name for name in dir(errno) if name.startswith("E") and name.isupper())


@lru_cache(maxsize=4096)
def error_class(text: str | None) -> str:
    """The short class of an error: an exception type name (``LockHeldError``),
    ``HTTP 404``, ``exit 2``, an errno name (``ENOENT``), ``Timeout``; else ``Error``."""
    if not text:
        return "Error"
    sample = text[:4096]
    # A traceback names its exception on the last line that looks like one.
    found = _EXCEPTION.findall(sample) or _EXCEPTION_ANY.findall(sample)
    if found and not found[-1].upper().startswith("HTTP"):
        return str(found[-1])
    if match := _HTTP.search(sample) or _HTTP_PHRASE.search(sample):
        return f"HTTP {match.group(1)}"
    if match := _EXIT.search(sample):
        return f"exit {int(match.group(1))}"
    if match := _ERRNO_NUMBER.search(sample):
        return errno.errorcode.get(int(match.group(1)), "OSError")
    for name in _ERRNO_NAME.findall(sample):
        if name in _KNOWN_ERRNO:
            return str(name)
    if _TIMEOUT.search(sample):
        return "Timeout"
    return "Error"
