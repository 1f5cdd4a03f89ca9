"""An adapter for any OpenAI-compatible embeddings endpoint (``POST {base_url}/embeddings``).

OpenAI itself, Azure OpenAI's v1 API, vLLM, Ollama, LM Studio, text-embeddings-inference, LiteLLM,
llama.cpp's server: anything that answers ``{"data": [{"index": i, "embedding": [...]}, ...]}``.

- ``base_url`` is the API root, ``/v1`` included (``https://api.openai.com/v1``); ``model`` the
  model name; ``dimensions`` (optional) asks the endpoint for shorter vectors, for models that
  support it. Without it the dimension is learnt by embedding one probe text when the embedder
  is built, so a wrong URL, key or model raises ``ConfigError`` at set-up, not inside an agent.
- ``model_id`` is ``openai:{base_url}#{model}``, plus ``@{dimensions}`` when given: vectors from
  another endpoint, model or size are never compared.
- A batch is sent ``max_batch`` texts per request (default 128); each text is cut at
  ``max_chars`` characters (default 16,000: about 4,000 tokens, under the usual 8,192-token limit).
- Every failure is an ``EmbedderError`` naming the model and the fault: an HTTP error status (with
  the start of the body), a timeout (``timeout`` seconds per request, default 10), an unreachable
  host, a body that is not JSON or not the expected shape, the wrong number of vectors, a vector
  of the wrong length, NaN or infinite values. The ``api_key`` (sent as a bearer token) never
  appears in ``repr`` or in an error message: it is redacted from anything echoed back.
- ``embed`` blocks (an ``httpx.Client`` reused across calls, thread-safe); ``aembed`` is a native
  coroutine (an ``httpx.AsyncClient`` per call). ``close()`` (or a ``with`` block) closes the
  connections.

Needs the ``embed-openai`` extra: ``pip install 'afteraction[embed-openai]'``.
"""

from __future__ import annotations

import importlib
import json
import math
from collections.abc import Sequence
from typing import Any

from afteraction.embed.base import check_texts, check_vectors
from afteraction.errors import ConfigError, EmbedderError

__all__ = ["OpenAIEmbedder"]

INSTALL_HINT = "pip install 'afteraction[embed-openai]'"
PROBE_TEXT = "dimension probe"
BODY_CHARS = 200


def _positive(name: str, value: object, kind: type = int) -> Any:
    number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if number is None or (kind is int and not isinstance(number, int)) or not math.isfinite(number) or number <= 0:
        raise ConfigError(f"OpenAIEmbedder {name} must be a positive {kind.__name__}, got {value!r}")
    return number


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible HTTP endpoint; see the module docstring."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        dimensions: int | None = None,
        timeout: float = 10.0,
        max_batch: int = 128,
        max_chars: int = 16_000,
    ) -> None:
        try:
            self._httpx: Any = importlib.import_module("httpx")
        except ImportError as exc:
            raise ConfigError(f"the OpenAI-compatible embedder needs httpx: {INSTALL_HINT}") from exc
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"OpenAIEmbedder base_url must be an http:// or https:// URL, got {base_url!r}")
        if not isinstance(model, str) or not model.strip():
            raise ConfigError(f"OpenAIEmbedder model must be a non-empty string, got {model!r}")
        if api_key is not None and (not isinstance(api_key, str) or not api_key):
            raise ConfigError("OpenAIEmbedder api_key must be a non-empty string or None")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.dimensions = None if dimensions is None else _positive("dimensions", dimensions)
        self.timeout = float(_positive("timeout", timeout, float))
        self.max_batch = _positive("max_batch", max_batch)
        self.max_chars = _positive("max_chars", max_chars)
        self.url = f"{self.base_url}/embeddings"
        self._api_key = api_key
        self.model_id = f"openai:{self.base_url}#{model}" + (f"@{dimensions}" if dimensions else "")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._headers = headers
        self._client: Any = self._httpx.Client(headers=headers, timeout=self.timeout)
        if self.dimensions is not None:
            self.dimension: int = self.dimensions
        else:
            try:
                (vector,) = self._post([PROBE_TEXT])
            except EmbedderError as exc:
                self._client.close()
                raise ConfigError(f"cannot learn the dimension of {self.model_id!r}: {exc}") from exc
            self.dimension = len(vector)

    def __repr__(self) -> str:
        key = ", api_key=***" if self._api_key else ""
        return f"OpenAIEmbedder(base_url={self.base_url!r}, model={self.model!r}, dimensions={self.dimensions}{key})"

    def close(self) -> None:
        """Close the HTTP connections; the embedder cannot be used after."""
        self._client.close()

    def __enter__(self) -> OpenAIEmbedder:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _redact(self, text: str) -> str:
        return text.replace(self._api_key, "***") if self._api_key else text

    def _fail(self, fault: str) -> EmbedderError:
        return EmbedderError(self._redact(f"embedder {self.model_id!r}: {fault}"))

    def _payload(self, batch: list[str]) -> dict[str, Any]:
        payload: dict[str, Any] = {"model": self.model, "input": [text[: self.max_chars] for text in batch]}
        if self.dimensions is not None:
            payload["dimensions"] = self.dimensions
        payload["encoding_format"] = "float"
        return payload

    def _error(self, exc: Exception) -> EmbedderError:
        httpx = self._httpx
        if isinstance(exc, httpx.TimeoutException):
            return self._fail(f"no answer from {self.url} within {self.timeout:g} s ({type(exc).__name__})")
        return self._fail(f"cannot reach {self.url}: {type(exc).__name__}: {exc}")

    def _parse(self, status: int, body: bytes, expected: int) -> list[list[float]]:
        text = body.decode("utf-8", "replace")
        if status >= 400:
            return_text = " ".join(text.split())[:BODY_CHARS]
            raise self._fail(f"HTTP {status} from {self.url}: {return_text}")
        try:
            document = json.loads(text)
        except ValueError:
            raise self._fail(
                f"the answer from {self.url} is not JSON: {' '.join(text.split())[:BODY_CHARS]!r}"
            ) from None
        data = document.get("data") if isinstance(document, dict) else None
        if not isinstance(data, list) or not all(isinstance(item, dict) and "embedding" in item for item in data):
            raise self._fail(f"the answer from {self.url} has no 'data' list of objects with an 'embedding'")
        if len(data) != expected:
            raise self._fail(f"returned {len(data)} vectors for {expected} texts")
        if all(isinstance(item.get("index"), int) for item in data):
            data = sorted(data, key=lambda item: item["index"])
            if [item["index"] for item in data] != list(range(expected)):
                raise self._fail(f"the answer's indexes are not 0..{expected - 1}")
        vectors: list[list[float]] = [item["embedding"] for item in data]
        return vectors

    def _check(self, vectors: list[list[float]], expected: int) -> list[list[float]]:
        if not hasattr(self, "dimension"):  # the probe: any length will do, the rest is checked
            first = vectors[0]
            size = len(first) if isinstance(first, list) and first else 1
            return check_vectors(vectors, expected=expected, dimension=size, model_id=self.model_id)
        return check_vectors(vectors, expected=expected, dimension=self.dimension, model_id=self.model_id)

    def _post(self, batch: list[str]) -> list[list[float]]:
        try:
            response = self._client.post(self.url, json=self._payload(batch))
        except self._httpx.HTTPError as exc:
            raise self._error(exc) from None
        return self._check(self._parse(response.status_code, response.content, len(batch)), len(batch))

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text, in order; ``EmbedderError`` naming the fault."""
        batch = check_texts(texts)
        out: list[list[float]] = []
        for start in range(0, len(batch), self.max_batch):
            out.extend(self._post(batch[start : start + self.max_batch]))
        return out

    async def aembed(self, texts: Sequence[str]) -> list[list[float]]:
        """``embed`` as a coroutine, without blocking the event loop."""
        batch = check_texts(texts)
        out: list[list[float]] = []
        if not batch:
            return out
        async with self._httpx.AsyncClient(headers=self._headers, timeout=self.timeout) as client:
            for start in range(0, len(batch), self.max_batch):
                chunk = batch[start : start + self.max_batch]
                try:
                    response = await client.post(self.url, json=self._payload(chunk))
                except self._httpx.HTTPError as exc:
                    raise self._error(exc) from None
                out.extend(self._check(self._parse(response.status_code, response.content, len(chunk)), len(chunk)))
        return out
