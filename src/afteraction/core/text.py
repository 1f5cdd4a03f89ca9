"""Text for retrieval: tokenize, drop stop words, stem (Snowball English)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

import snowballstemmer

from afteraction.model import Experience

__all__ = [
    "EMBED_CHARS",
    "FILLER",
    "MAX_QUERY_TERMS",
    "STOPWORDS",
    "codes",
    "content_terms",
    "embedding_text",
    "mostly_latin",
    "query_stems",
    "query_terms",
    "search_stems",
    "searchable",
    "stem",
    "stemmed",
    "stems",
    "tokenize",
    "unaccented",
]

#: A record's embedding text is cut at this many characters (the model reads ~128 tokens).
EMBED_CHARS = 512

# Word characters, keeping identifiers such as ``packages.lock.json`` or ``HTTP_401`` apart
# into their parts: retrieval matches on the parts.
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)

STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just let me more
    most my myself no nor not of off on once only or other our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these they this those
    through to too under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves again also please thanks thank hi hello hey can't cannot
    could would should shall may might must
    """.split()
)

#: Words of conversational requests that say nothing about the problem ("can you sort out that
#: thing again, like last time"): dropped from queries (never from records). General English
#: request filler, chosen by what it is, not by any corpus; measured in docs/retrieval.md.
FILLER = frozenset(
    """
    thing things stuff sort look looking fix fixing help take care able possible mind think guess remember
    basically actually really maybe anyway pls plz asap urgent ugh ok okay yeah well want need know seems seem
    try happened happening same problem issue one ones kind somehow fwiw tell
    """.split()
)

#: Query terms beyond this many are ignored.
MAX_QUERY_TERMS = 32

_stemmer = snowballstemmer.stemmer("english")


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens, in order."""
    return [token.casefold() for token in _TOKEN.findall(text)]


def stem(word: str) -> str:
    """The Snowball (Porter 2) English stem of one lower-case word. Numbers are their own
    stem (and are kept out of the cache, where ticket numbers would only churn it)."""
    return word if word.isdigit() else _stem(word)


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return str(_stemmer.stemWord(word))


def content_terms(text: str) -> list[str]:
    """Distinct tokens that are not stop words, in first-seen order (not stemmed). Single
    letters (the ``s`` of "team's") carry no meaning and are dropped; single digits stay."""
    seen: dict[str, None] = {}
    for token in tokenize(text):
        if token not in STOPWORDS and (len(token) > 1 or token.isdigit()):
            seen.setdefault(token, None)
    return list(seen)


def query_terms(text: str) -> list[str]:
    """The terms a query searches for: its content terms without request filler, at most
    ``MAX_QUERY_TERMS``, in first-seen order (not stemmed)."""
    return [term for term in content_terms(text) if term not in FILLER][:MAX_QUERY_TERMS]


def query_stems(text: str) -> frozenset[str]:
    """The stems of ``query_terms(text)``: what a record's relevance is measured against."""
    return frozenset(stem(term) for term in query_terms(text))


def stems(text: str) -> frozenset[str]:
    """The set of stems of the content terms of ``text``."""
    return frozenset(stem(term) for term in content_terms(text))


def searchable(experience: Experience) -> tuple[str, str, str]:
    """The text a record is found by, as (task, summary, lesson): the task field also carries
    the wordings of the verified runs it was given to, and the summary field the scenario's
    symptoms, so a lesson is found by the words it was asked for in and by its error text."""
    summary = experience.summary
    if experience.scenario is not None and experience.scenario.symptoms:
        summary = " ".join((summary, *experience.scenario.symptoms))
    return "\n".join((experience.task, *experience.wordings)), summary, experience.lesson


def stemmed(text: str) -> str:
    """The text as a search index sees it: its tokens' Snowball stems, space separated."""
    return " ".join(map(stem, tokenize(text)))


def search_stems(terms: Sequence[str]) -> list[str]:
    """The distinct stems of the terms' tokens, in first-seen order: what a store searches for."""
    return list(dict.fromkeys(s for term in terms for token in tokenize(term) if (s := stem(token))))


def embedding_text(experience: Experience, limit: int = EMBED_CHARS) -> str:
    """The text a record's vector is made from: its task, then its first symptom (the error it
    met), then the wordings it learned, cut at ``limit`` characters. Queries are task texts, so
    the task leads; the summary (tools and arguments) was measured to blur the vector
    (docs/retrieval.md) and is left out. When the whole is longer, the wordings keep their room
    (newest first, at least half of ``limit`` when they need it) and the task and symptom are cut
    to what is left: cut at the end, they were the first to go, and a lesson with a long task was
    never found by the words it learned. A record without wordings reads as it always has."""
    head = "\n".join(part.strip() for part in _heading(experience) if part.strip())
    wordings = [part.strip() for part in experience.wordings if part.strip()]
    whole = "\n".join(part for part in (head, *wordings) if part)
    if len(whole) <= limit or not wordings:
        return whole[:limit]
    room = max(limit // 2, limit - len(head) - 1)
    tail = "\n".join(reversed(wordings))[:room]
    if len(tail) >= limit - 1 or not head:
        return tail[:limit]
    return f"{head[: limit - len(tail) - 1]}\n{tail}"


def _heading(experience: Experience) -> list[str]:
    """The task, then the first symptom: what a record's embedding text starts with."""
    parts = [experience.task]
    if experience.scenario is not None and experience.scenario.symptoms:
        parts.append(experience.scenario.symptoms[0])
    return parts


def unaccented(terms: frozenset[str]) -> frozenset[str]:
    """The terms with their accents dropped (``facturación`` -> ``facturacion``), as the text index
    matches them: a request typed without accents still covers a lesson written with them."""
    return frozenset(term if term.isascii() else _unaccent(term) for term in terms)


@lru_cache(maxsize=8192)
def _unaccent(term: str) -> str:
    return "".join(char for char in unicodedata.normalize("NFKD", term) if not unicodedata.combining(char))


def codes(terms: frozenset[str]) -> frozenset[str]:
    """The terms that are codes, letters and at least four digits in one token (``NU1004``,
    ``0x80070005``, ``E11000``, ``CS0246``; not ``x509`` or ``sha256``): a record that holds every
    code of a request is about what it names."""
    return frozenset(term for term in terms if _is_code(term))


def _is_code(term: str) -> bool:
    digits = sum(char.isdigit() for char in term)
    return 4 <= digits < len(term) and any(char.isalpha() for char in term)


def mostly_latin(text: str) -> bool:
    """Whether at least half of the letters of ``text`` are Latin (or there are none). The default
    embedder knows English: the cosine of two texts in another script says little."""
    if text.isascii():
        return True
    latin = other = 0
    for char in text:
        if char.isalpha():
            if char.isascii() or unicodedata.name(char, "").startswith("LATIN"):
                latin += 1
            else:
                other += 1
    return latin >= other
