"""Search behind ``Memory``: one query through both channels, fused and ranked.

The query is embedded while the text search runs (``vector_channel``); the two candidate lists are
fused by record and ranked (``core.fusion``, ``core.rank``). When the vector channel does not run,
the ranking is the text channel's alone. ``ranked`` returns every hit the candidates gave, best
first, so that the block can go past a record too large for its bounds to the next one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime

from afteraction.core.fusion import cosine_bound, fuse
from afteraction.core.rank import Weights, rank
from afteraction.core.tasktext import MAX_TASK_CHARS
from afteraction.core.text import query_terms
from afteraction.model import Hit, Scope
from afteraction.store import Store
from afteraction.store.records import settled
from afteraction.vector_channel import ChannelStatus, VectorChannel

__all__ = ["CANDIDATES", "MAX_QUERY_CHARS", "NO_TERMS", "query_text", "ranked", "whole"]

#: A query longer than this many characters is cut there (never an error); of what is left, the
#: first ``MAX_QUERY_TERMS`` content terms are searched and the embedder reads the first 128 tokens.
MAX_QUERY_CHARS = MAX_TASK_CHARS
#: Candidates fetched from each channel for ranking (at least 4 per hit asked for).
CANDIDATES = 30
_SURROGATE = re.compile("[\ud800-\udfff]")
#: The channel's status for a query with no words to search for: nothing was searched.
NO_TERMS = ChannelStatus("no_terms", "the query holds no words to search for (blank, stop words or filler)")


def query_text(query: str) -> str:
    """The part of ``query`` that is searched: its first ``MAX_QUERY_CHARS`` characters, a lone
    surrogate (text decoded with ``surrogateescape``) made U+FFFD, as stored text is."""
    text = query[:MAX_QUERY_CHARS]
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def ranked(
    store: Store,
    channel: VectorChannel,
    weights: Weights,
    text: str,
    *,
    scope: Scope,
    now: datetime,
    k: int,
    env: Mapping[str, str] | None,
) -> tuple[list[Hit], ChannelStatus]:
    """Every eligible, relevant hit among the candidates fetched for ``k`` hits (best first), and
    how the vector channel fared."""
    terms = query_terms(text)
    if not terms:
        return [], NO_TERMS
    limit = max(CANDIDATES, 4 * k)
    floor = weights.min_confidence
    pending = channel.start(scope, text, now=now, limit=limit, min_confidence=floor)
    try:
        candidates = store.search_text(scope, terms, now=now, limit=limit, min_confidence=floor)
    finally:
        vector, status = pending.result()
    if not status.ok:
        return rank(text, candidates, scope=scope, now=now, env=env, weights=weights), status
    merged = fuse(candidates, vector)
    bound = cosine_bound(vector, limit)
    return rank(text, merged, scope=scope, now=now, env=env, weights=weights, hybrid=True, cosine_bound=bound), status


def whole(hits: list[Hit]) -> list[Hit]:
    """``hits`` with their records decoded whole: a store may decode its candidates only as far as
    ranking reads them."""
    return [Hit(settled(hit.experience), hit.score, hit.relevance, hit.factors) for hit in hits]
