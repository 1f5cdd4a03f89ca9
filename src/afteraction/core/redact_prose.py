"""Messages about a credential, told from its value: after ``password:`` a message (``password: must be 8
characters``, ``secret: not found``, ``passwd: password updated successfully``) is kept, a value (a passphrase of
ordinary words too: ``password: correct horse battery staple``) is redacted by ``core.redact``.

A message is told by its shape, never by its words being ordinary (a passphrase's are): its first word says what is
wrong (``must``, ``is``, ``missing``), or it opens with a closed phrase of status (``not found``, ``updated
successfully``), after the credential's own noun at most (``password updated successfully``), or it names the
credential and then its failure (``token mismatch``, ``token refresh failed``). Anything else after a secret's name
is its value, a word before the status phrase too (``password: swordfish not valid``, ``secret: db-credentials not
found``): when in doubt, secrets win.
"""

from __future__ import annotations

import re

from afteraction.core.secret_names import name_words

__all__ = ["MESSAGE_GOES_ON", "is_message", "names_a_failure", "opens_a_message"]

# the first word of a message, not a value (``password: must be 8 characters``, ``token: is required``)
_PROSE = frozenset(
    """must is was are should cannot can can't does doesn't did didn't has have had needs need not too will
    contains required missing expired invalid incorrect wrong mismatch for of the a an to in on""".split()
)
# The first word of an error's name that says what is wrong with a credential (``ExpiredToken``, ``InvalidApiKey``,
# ``missing_password``): such a name followed by a plain word is an error and its message, not an assignment.
_FAILURES = frozenset(
    "expired invalid missing bad wrong revoked unknown malformed incorrect unrecognized rejected empty stale".split()
)
#: after the first word of an error's message, more words: a sentence, not a one-word value
MESSAGE_GOES_ON = re.compile(r" [A-Za-z]+(?:[ .,;]|$)")

# a run of plain lower-case words (inner hyphens allowed: ``db-credentials``) up to the line's end or punctuation
_WORDS = re.compile(r"[a-z]+(?:-[a-z]+)*(?:[ \t]+[a-z]+(?:-[a-z]+)*){1,11}(?=[ \t]*(?:[.,;:!)\]\n\r]|\Z))")
_LEADING_WORDS = re.compile(r"[a-z]+(?:[ \t]+[a-z]+(?:-[a-z]+)*){1,2}(?![\w-])")
# how a status message ends: the two words, in this order
_NOT = frozenset("found set configured provided available allowed supported valid present loaded".split())
_DONE = frozenset(
    """updated changed created deleted removed saved reset set sent stored rotated revoked refreshed verified
    accepted generated applied renewed issued""".split()
)
# a credential named first, then what went wrong with it: ``token mismatch``, ``token refresh failed``
_NOUNS = frozenset("token password passphrase secret key credentials cookie session".split())
_WENT_WRONG = frozenset("failed mismatch expired invalid missing required rejected revoked refused denied".split())
_ACTIONS = frozenset("refresh renewal rotation validation verification check exchange lookup decode signature".split())


def names_a_failure(name: str) -> bool:
    """Whether ``name`` is an error's name that says what is wrong with a credential (``ExpiredToken``)."""
    words = name_words(name)
    return len(words) > 1 and words[0].lower() in _FAILURES


def opens_a_message(word: str) -> bool:
    """Whether ``word``, first after a secret's name, opens a message about it (``must``, ``is``, ``missing``)."""
    return word.lower() in _PROSE


def is_message(text: str, start: int) -> bool:
    """Whether the words at ``start`` (just after ``name: ``) are a message about the credential, not its value:
    plain lower-case words opening with a status phrase (``not found``), or with the credential's own noun and
    then one (``password updated successfully``) or its failure (``token mismatch on /checkout``)."""
    run = _WORDS.match(text, start)
    if run is not None:
        words = run.group(0).split()
        at = 1 if words[0] in _NOUNS else 0  # the phrase opens the message, or follows the credential's noun
        first, second = words[at : at + 2] + [""] * (at + 2 - len(words))
        if (first == "not" and second in _NOT) or (first in _DONE and second == "successfully"):
            return True
    lead = _LEADING_WORDS.match(text, start)
    if lead is None:
        return False
    noun, second, *third = lead.group(0).split()
    failed = second in _WENT_WRONG or (second in _ACTIONS and third[:1] != [] and third[0] in _WENT_WRONG)
    return noun in _NOUNS and failed
