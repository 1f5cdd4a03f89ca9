"""Indexing: a record's vector, made from its embedding text and stored at its revision.

``index_experiences`` is the one path from records to stored vectors: background indexing
after a write and ``afteraction reindex`` both go through it, so both keep the revision guard
(``VectorStore.put_vectors`` drops a vector whose record has moved on).
"""

from __future__ import annotations

from collections.abc import Sequence

from afteraction.core.text import embedding_text
from afteraction.embed.base import Checked
from afteraction.model import Experience
from afteraction.store.base import StoredVector, VectorStore

__all__ = ["index_experiences"]


def index_experiences(store: VectorStore, embedder: Checked, experiences: Sequence[Experience]) -> int:
    """Embed ``experiences`` and store their vectors at the revisions read; the number stored.
    Raises EmbedderError when the embedder fails (nothing is stored then)."""
    if not experiences:
        return 0
    vectors = embedder.embed([embedding_text(experience) for experience in experiences])
    return store.put_vectors(
        [
            StoredVector(experience.scope.tenant, experience.id, experience.revision, embedder.model_id, vector)
            for experience, vector in zip(experiences, vectors, strict=True)
        ]
    )
