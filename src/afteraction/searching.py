"""Search behind ``Memory``: one query through both channels, fused and ranked.

The query is embedded while the text search runs (``vector_channel``); the two candidate lists are
fused by record and ranked (``core.fusion``, ``core.rank``). When the vector channel does not run,
the ranking is the text channel's alone. ``ranked`` returns every hit the candidates gave, best
first, so that the block can go past a record too large for its bounds to the next one.
``ChannelNotes`` keeps how the channel fared, per thread, and hands its failures to ``on_error``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from afteraction.core.fusion import cosine_bound, fuse
from afteraction.core.rank import Weights, rank
from afteraction.core.sanitize import scrub_text, trimmed
from afteraction.core.tasktext import MAX_TASK_CHARS
from afteraction.core.text import query_terms
from afteraction.errors import EmbedderError, StoreError
from afteraction.model import Experience, Hit, Scope
from afteraction.store import Store
from afteraction.store.base import Candidate
from afteraction.store.records import settled
from afteraction.vector_channel import ChannelStatus, VectorChannel

__all__ = [
    "CANDIDATES",
    "MAX_K",
    "MAX_QUERY_CHARS",
    "NO_TERMS",
    "REPORT_EVERY",
    "ChannelNotes",
    "query_text",
    "ranked",
    "whole",
]

#: A query longer than this many characters is cut there (never an error); of what is left, the
#: first ``MAX_QUERY_TERMS`` content terms are searched and the embedder reads the first 128 tokens.
MAX_QUERY_CHARS = MAX_TASK_CHARS
#: The most hits one search returns (``k``).
MAX_K = 100
#: Candidates fetched from each channel for ranking (at least 4 per hit asked for).
CANDIDATES = 30
log = logging.getLogger("afteraction")

#: The channel's status for a query with no words to search for: nothing was searched.
NO_TERMS = ChannelStatus("no_terms", "the query holds no words to search for (blank, stop words or filler)")
#: Seconds before ``on_error`` hears the same failure of the vector channel again.
REPORT_EVERY = 60.0


def query_text(query: str) -> str:
    """The part of ``query`` that is searched: its first ``MAX_QUERY_CHARS`` characters, a lone
    surrogate (text decoded with ``surrogateescape``) made U+FFFD, as stored text is, and its
    secrets scrubbed (``scrub_text``) as a recorded task's are: this text is what the embedder
    reads (a third party's, with ``embed-openai``) and what is matched, for every caller (library,
    service, CLI, a remote memory's service). A query far over the limit is trimmed before it is
    scrubbed, back to whitespace, so that the cut cannot leave half of a secret to be read."""
    return scrub_text(trimmed(query, MAX_QUERY_CHARS)[0])[:MAX_QUERY_CHARS]


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
        return _rank(text, candidates, scope=scope, now=now, env=env, weights=weights), status
    merged = fuse(candidates, vector)
    bound = cosine_bound(vector, limit)
    return _rank(text, merged, scope=scope, now=now, env=env, weights=weights, hybrid=True, cosine_bound=bound), status


def _rank(text: str, candidates: list[Candidate], **options: Any) -> list[Hit]:
    """``rank``, past a stored record that cannot be read: ranking decodes a record's JSON only when
    it reads a field the store's columns do not give, and one unreadable row failed the whole search."""
    try:
        return rank(text, candidates, **options)
    except StoreError:
        return rank(text, [c for c in candidates if _readable(c.experience)], **options)


def whole(hits: list[Hit], limit: int) -> list[Hit]:
    """The first ``limit`` of ``hits`` with their records decoded whole (a store may decode its
    candidates only as far as ranking reads them); a record that cannot be read is skipped, and
    the next hit takes its place."""
    found: list[Hit] = []
    for hit in hits:
        if len(found) == limit:
            break
        if _readable(hit.experience):
            found.append(Hit(settled(hit.experience), hit.score, hit.relevance, hit.factors))
    return found


#: Records already said to be unreadable (their ids), so that each is logged once.
_SAID: set[str] = set()


def _readable(experience: Experience) -> bool:
    """Whether the stored record decodes; one that does not is logged (once) and passed over: a
    record stored unreadable, by a bug or a hand, must not cost every search its other lessons."""
    try:
        settled(experience)
    except StoreError as exc:
        if experience.id not in _SAID and len(_SAID) < 4096:
            _SAID.add(experience.id)
            log.warning("afteraction: search passed over stored record %r: %s", experience.id, exc)
        return False
    return True


class ChannelNotes:
    """How the vector channel fared, for ``Memory.channel_status``, and its failures for ``report``.

    ``status`` is kept per thread: a thread reads how its own last search fared, whatever other
    threads searched meanwhile; a thread that has not searched reads the last search of any
    thread. A failing reason is reported when it starts, not again while it lasts (until a search's
    channel runs) nor within ``REPORT_EVERY`` seconds of its last report, however concurrent
    searches interleave; searches that failed so unreported are counted in its next report.
    """

    def __init__(
        self,
        first: ChannelStatus,
        report: Callable[[BaseException, str], None],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._last = first
        self._report = report
        self._clock = clock
        self.every = REPORT_EVERY
        self._local = threading.local()
        self._lock = threading.Lock()
        self._lasting: set[str] = set()
        self._reported_at: dict[str, float] = {}
        self._unreported: dict[str, int] = {}

    @property
    def status(self) -> ChannelStatus:
        """How this thread's last search fared (before its first, any thread's last)."""
        found: ChannelStatus | None = getattr(self._local, "status", None)
        return self._last if found is None else found

    def note(self, status: ChannelStatus) -> None:
        """Keep ``status`` as this thread's and the last; report it if it is a failure that starts."""
        self._local.status = self._last = status
        if status.reason in ("not_configured", "no_terms"):  # the channel did not fail: it had nothing to do
            return
        with self._lock:
            if status.reason == "ok":
                self._lasting.clear()
                return
            reason, now = status.reason, self._clock()
            last = self._reported_at.get(reason)
            if reason in self._lasting or (last is not None and now - last < self.every):
                self._lasting.add(reason)
                self._unreported[reason] = self._unreported.get(reason, 0) + 1
                return
            self._lasting.add(reason)
            self._reported_at[reason] = now
            missed = self._unreported.pop(reason, 0)
        more = f" ({missed} more searches failed so since it was last reported)" if missed else ""
        self._report(
            EmbedderError(f"vector channel {reason}: {status.detail}; searching by text only{more}"),
            f"search.vector.{reason}",
        )
