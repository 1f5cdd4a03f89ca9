"""A record's vector, made from its embedding text and stored at its revision.

``index_experiences`` is the one path from records to stored vectors: background indexing
(``indexing.Indexer``) and ``afteraction reindex`` both go through it, so both keep the revision
guard (``VectorStore.put_vectors`` drops a vector whose record has moved on).
"""

from __future__ import annotations

from collections.abc import Sequence

from afteraction.core.text import embedding_text
from afteraction.embed.base import Checked
from afteraction.embed.recent import RecentVectors
from afteraction.errors import EmbedderError
from afteraction.model import Experience
from afteraction.store.base import StoredVector, VectorStore

__all__ = ["index_experiences", "make_vectors"]


def index_experiences(
    store: VectorStore, embedder: Checked, experiences: Sequence[Experience], recent: RecentVectors | None = None
) -> int:
    """Embed ``experiences`` and store their vectors at the revisions read; the number stored.
    A text ``recent`` holds for this model is not embedded again. Raises EmbedderError when the
    embedder fails (nothing is stored then)."""
    if not experiences:
        return 0
    return store.put_vectors(make_vectors(embedder, experiences, recent))


def make_vectors(
    embedder: Checked, experiences: Sequence[Experience], recent: RecentVectors | None = None
) -> list[StoredVector]:
    """``index_experiences`` up to the store: the vectors of ``experiences``, at the revisions read."""
    texts = [embedding_text(experience) for experience in experiences]
    model = embedder.model_id
    known = [None if recent is None else recent.get(model, text) for text in texts]
    wanted = [text for text, vector in zip(texts, known, strict=True) if vector is None]
    made = iter(embedder.embed(wanted) if wanted else [])
    if (now := _model_now(embedder)) != model:  # vectors of one model are never kept under another's id
        raise EmbedderError(f"the embedder's model is now {now!r}, not {model!r}: its vectors are not stored")
    vectors = []
    for text, vector in zip(texts, known, strict=True):
        if vector is None:
            vector = next(made)
            if recent is not None:
                recent.put(model, text, vector)
        vectors.append(vector)
    return [
        StoredVector(experience.scope.tenant, experience.id, experience.revision, embedder.model_id, vector)
        for experience, vector in zip(experiences, vectors, strict=True)
    ]


def _model_now(embedder: Checked) -> str | None:
    """The model id the wrapped embedder gives now (``Checked`` read it once, when it was wrapped)."""
    try:
        found = getattr(embedder.inner, "model_id", None)
    except Exception:
        return None
    return found if isinstance(found, str) else None
