"""Where a run of characters of one class ends, found once per run however many candidates of a scan stand in it.

The scans of ``core.redact`` look for a secret at each candidate (a ``sk-``, a ``curl``, a URL's ``://``), and a
candidate's value runs to the end of a run of characters (a token's, a URL's). Read again from each candidate, a long
run holding many candidates (``sk-sk-sk-…``, ``curl curl curl …`` on one line) cost the square of its length: a 64 KiB
text took seconds, a 1 MiB one hours. A ``Runs`` keeps, for each kind of run, the last one it read: a candidate inside
it gets its end at once, and the scans stay linear in the text.
"""

from __future__ import annotations

import re

__all__ = ["Runs", "TokenRuns", "value_end"]

_OPENERS = {")": "(", "]": "[", "}": "{", ">": "<"}
_BRACKETS = "()[]{}<>"


class Runs:
    """The ends of runs in one text, each kind of run (a pattern matching any run of its class, ``[…]*``, or one
    that stops at its first stop character) read once: a later candidate inside a run read already costs nothing."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._read: dict[object, tuple[int, int]] = {}
        self._counted: tuple[int, int, dict[str, int]] = (-1, -1, {})

    def end(self, run: re.Pattern[str], at: int, role: object = None) -> int:
        """Where the run of ``run`` that starts at ``at`` ends; ``role`` keeps apart runs of one class read from
        different places (a JWT's three parts). ``run`` must match the same end from every place inside the run it
        reads (a class repeated, ``[…]*``), so that one reading answers for all of them."""
        key = run if role is None else role
        read = self._read.get(key)
        if read is not None and read[0] <= at <= read[1]:
            return read[1]
        found = run.match(self.text, at)
        end = at if found is None else found.end()
        self._read[key] = (at, end)
        return end

    def closed_end(self, start: int, end: int) -> int:
        """``end`` moved back over the ``,`` and ``;`` that end the value ``text[start:end]`` and over each closing
        bracket that it closes more often than it opens (``password: x, user: y``, ``(token: missing)``): the
        closer belongs to what holds the value. The brackets are counted once for all the values that end at
        ``end`` (``name=…name=…]``), each character once."""
        text = self.text
        counts: dict[str, int] | None = None
        while end > start:
            last = text[end - 1]
            if last in ",;":
                end -= 1
                continue
            opener = _OPENERS.get(last)
            if opener is None:
                break
            if counts is None:
                counts = self._brackets(start, end)
            if counts[last] <= counts[opener]:
                break
            counts[last] -= 1
            end -= 1
        return end

    def _brackets(self, start: int, end: int) -> dict[str, int]:
        """How many of each bracket ``text[start:end]`` holds: counted on from the last count, when it ended there."""
        read, at, counts = self._counted
        if at == end and read <= start:
            counts = {bracket: count - self.text.count(bracket, read, start) for bracket, count in counts.items()}
        else:
            counts = {bracket: self.text.count(bracket, start, end) for bracket in _BRACKETS}
        self._counted = (start, end, counts)
        return dict(counts)


_TOKEN_BODY = re.compile("[A-Za-z0-9_-]*")  # a ``sk-`` token's body, and each part of a JWT
_BASE64_BODY = re.compile("[A-Za-z0-9+/]*")
_LAST_DIGIT = re.compile("[\\s\\S]*[0-9]")
_LAST_LETTER = re.compile("[\\s\\S]*[A-Za-z]")


class TokenRuns(Runs):
    """What a scan of one text for ``TOKENS`` has read: the runs its bodies end with, and where the last digit and
    the last letter of the last ``sk-`` run stand (a ``sk-`` body is the run's tail: it mixes letters with digits if
    the last of each stands in it)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self._mixed = (-1, -1, -1, -1)  # a ``sk-`` run's start, end, last digit and last letter
        self.unmixed = -1  # where the run of the last ``sk-`` rejected for it ends

    def mixed(self, start: int, end: int) -> bool:
        """Whether ``text[start:end]``, the tail of a run of ``_TOKEN_BODY``, holds a digit and a letter."""
        read, at, digit, letter = self._mixed
        if at != end or start < read:
            text = self.text
            digit = -1 if (found := _LAST_DIGIT.match(text, start, end)) is None else found.end() - 1
            letter = -1 if (found := _LAST_LETTER.match(text, start, end)) is None else found.end() - 1
            self._mixed = (start, end, digit, letter)
        return digit >= start and letter >= start

    def body_end(self, at: int) -> int:
        """Where the run of token characters (``[A-Za-z0-9_-]``) that starts at ``at`` ends."""
        return self.end(_TOKEN_BODY, at)

    def base64_end(self, at: int) -> int:
        """Where the base64 run (``[A-Za-z0-9+/]``, then its ``=`` padding, two at most) from ``at`` ends."""
        end = self.end(_BASE64_BODY, at)
        return end + (2 if self.text.startswith("==", end) else 1 if self.text.startswith("=", end) else 0)

    def jwt_end(self, at: int) -> int | None:
        """Where the JWT whose header's run starts at ``at`` ends (``header.payload.signature``: a header of 13 to
        2,048 characters, a payload of 5 or more, a signature of any length), or None when it is not one."""
        text = self.text
        header = self.end(_TOKEN_BODY, at, "header")
        if not 13 <= header - at <= 2048 or not text.startswith(".", header):
            return None
        payload = self.end(_TOKEN_BODY, header + 1, "payload")
        if payload - header - 1 < 5 or not text.startswith(".", payload):
            return None
        return self.end(_TOKEN_BODY, payload + 1, "signature")


_PLAIN_RUN = re.compile(r"[^\s\"'\\]*")  # an unquoted value's characters
_UNCUT_RUN = re.compile(r"[^\s\"'\\&;#]*")  # the same, up to where a query string's value ends
_QUOTED = {'"': re.compile(r'"[^"\n]*"'), "'": re.compile(r"'[^'\n]*'")}
_CUT = re.compile("[&;#]")


def value_end(runs: Runs, start: int, query: bool) -> int:
    """Where the unquoted value of ``name=value`` that starts at ``start`` ends, as ``core.redact`` reads it: runs of
    characters other than spaces, quotes and backslashes, and the parts quoted whole on their line between them
    (``SecretStr('…')``); in a query string (``query``), at its first ``&``, ``;`` or ``#``. Each run is read once
    for all the names in it."""
    text = runs.text
    at = start
    while True:
        end = runs.end(_PLAIN_RUN, at, "plain")
        if query and (cut := runs.end(_UNCUT_RUN, at, "uncut")) < end:
            return cut
        quoted = _QUOTED.get(text[end : end + 1])
        part = None if quoted is None else quoted.match(text, end)
        if part is None:
            return end
        if query and (cut_in := _CUT.search(text, end, part.end())) is not None:
            return cut_in.start()
        at = part.end()
