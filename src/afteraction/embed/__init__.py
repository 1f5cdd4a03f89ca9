"""Embedders: text to vectors, for the vector channel of retrieval.

- ``Embedder``: the protocol (``model_id``, ``dimension``, ``embed(texts)``); ``AsyncEmbedder`` for
  embedders with a native ``aembed``; ``aembed(embedder, texts)`` calls either from async code.
- ``Checked(embedder)``: validates and unit-normalizes every output, and turns any failure into
  ``EmbedderError``; ``check_vectors`` is that check on its own. An async-only embedder's ``embed``
  runs its coroutine on a private event loop (``afteraction.embed.loop``).
- ``MiniLM``: the bundled offline default (all-MiniLM-L6-v2, int8 ONNX, 384 dimensions, re-quantized
  for int8 compute on first use: ``afteraction.embed.quantize``), needing the ``embed`` extra;
  ``default_embedder()`` is one shared, lazily loaded ``Checked(Adapted(MiniLM()))``: MiniLM through
  its learned linear adapter (``afteraction.embed.adapter``).
- Optional, each its own module and extra (import them from there): ``afteraction.embed.openai``
  (``OpenAIEmbedder``, any OpenAI-compatible endpoint; ``embed-openai``),
  ``afteraction.embed.wordllama`` (``WordLlama``, a bundled static model; ``embed-wordllama``),
  ``afteraction.embed.sentence_transformers`` (``SentenceTransformersEmbedder``; ``embed-st``),
  ``afteraction.embed.e5`` (``E5Small``, a bundled 4-bit multilingual-e5-small; ``embed-e5``).
  ``docs/embedders.md`` compares them.

Importing this package imports neither numpy nor onnxruntime: ``MiniLM()`` does, and raises
``ConfigError`` naming the extra when they are missing.
"""

from __future__ import annotations

from afteraction.embed.base import AsyncEmbedder, Checked, Embedder, aembed, check_texts, check_vectors
from afteraction.embed.minilm import MiniLM, default_embedder

__all__ = [
    "AsyncEmbedder",
    "Checked",
    "Embedder",
    "MiniLM",
    "aembed",
    "check_texts",
    "check_vectors",
    "default_embedder",
]
