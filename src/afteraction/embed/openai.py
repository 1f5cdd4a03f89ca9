"""An adapter for any OpenAI-compatible embeddings endpoint (``POST {base_url}/embeddings``).

OpenAI itself, Azure OpenAI's v1 API, vLLM, Ollama, LM Studio, text-embeddings-inference, LiteLLM,
llama.cpp's server: anything that answers ``{"data": [{"index": i, "embedding": [...]}, ...]}``.

- ``base_url`` is the API root, ``/v1`` included (``https://api.openai.com/v1``); ``model`` the
  model name; ``dimensions`` (optional) asks the endpoint for shorter vectors, for models that
  support it. Without it the dimension is learnt by embedding one probe text when the embedder
  is built, so a wrong URL, key or model raises ``ConfigError`` at set-up, not inside an agent.
- ``model_id`` is ``openai:{base_url}#{model}``, plus ``@{dimensions}`` when given: vectors from
  another endpoint, model or size are never compared. The URL in it, in ``repr`` and in every
  message is the one shown (``openai_secrets``): no user or password, every query value masked
  (``?api-key=***``), a path segment holding a key masked; the raw URL only goes in the request.
  A query in ``base_url`` is kept after ``/embeddings`` (``…/v1/embeddings?api-version=…``).
- A batch is sent ``max_batch`` texts per request (default 128); each text is cut at
  ``max_chars`` characters (default 16,000: about 4,000 tokens, under the usual 8,192-token limit).
- Every failure is an ``EmbedderError`` naming the model and the fault: any status but 200
  (``HTTP {status} from {url}``, with ``Location`` for a redirect, which is never followed, and
  the start of the body), a timeout (``timeout`` seconds per request in all, from connecting to
  the last byte of the body, default 10: every socket wait of ``embed`` is bounded by it,
  through ``http_deadline``; ``aembed`` is cancelled at it), an answer larger than its cap
  (``answer_cap``: the batch's texts × the dimension × 32 bytes a number, at least 1 MiB), an
  unreachable host, a body that is not JSON or not the expected shape, the wrong number of
  vectors, a vector of the wrong length, NaN or infinite values. The ``api_key`` (sent as a
  bearer token) and the URL's credentials never appear in ``repr`` or in an error message: they
  are redacted from anything echoed back, literal, JSON-escaped or URL-encoded, and a body that
  still holds 8 characters of one in a row (read as it is and with its base64 runs decoded) is
  left out of the message.
- ``embed`` blocks (an ``httpx.Client`` reused across calls, thread-safe); ``aembed`` is a native
  coroutine (an ``httpx.AsyncClient`` per call). ``close()`` (or a ``with`` block) closes the
  connections.

Needs the ``embed-openai`` extra: ``pip install 'afteraction[embed-openai]'``.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import math
import time
from collections.abc import Sequence
from typing import Any

from afteraction.embed import http_deadline
from afteraction.embed.base import check_texts, check_vectors
from afteraction.embed.openai_secrets import Secrets, endpoint, shown
from afteraction.errors import ConfigError, EmbedderError

__all__ = ["OpenAIEmbedder"]

INSTALL_HINT = "pip install 'afteraction[embed-openai]'"
PROBE_TEXT = "dimension probe"
BODY_CHARS = 200
#: Bytes an answer may take per number of its vectors (``-0.0123456789012345678,`` is 23), and
#: per vector besides; an answer is never allowed less than ANSWER_FLOOR bytes.
NUMBER_BYTES = 32
VECTOR_BYTES = 1024
ANSWER_FLOOR = 1 << 20
#: The dimension the probe's answer is capped for, before the dimension is known (twice the largest usual).
PROBE_DIMENSION = 16_384
LEFT_OUT = "the answer's body is left out: it echoed the key"


class _Answer:
    """A response read within the deadline and the size cap: its status, headers and body."""

    __slots__ = ("body", "headers", "status")

    def __init__(self, status: int, headers: Any, body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body


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
            raise ConfigError(f"OpenAIEmbedder base_url must be an http:// or https:// URL, got {shown(base_url)!r}")
        if not isinstance(model, str) or not model.strip():
            raise ConfigError(f"OpenAIEmbedder model must be a non-empty string, got {model!r}")
        if api_key is not None and (not isinstance(api_key, str) or not api_key):
            raise ConfigError("OpenAIEmbedder api_key must be a non-empty string or None")
        try:
            point = endpoint(base_url)
            self._httpx.URL(point.url)
        except (ValueError, self._httpx.InvalidURL) as exc:
            # the reasons name a host, port or character, never the user or password
            raise ConfigError(
                f"OpenAIEmbedder base_url is not a valid URL ({shown(str(exc))}): {shown(base_url)!r}"
            ) from None
        self.base_url, self.url, self._url = point.shown_base, point.shown_url, point.url  # only _url is sent
        self.model = model
        self.dimensions = None if dimensions is None else _positive("dimensions", dimensions)
        self.timeout = float(_positive("timeout", timeout, float))
        self.max_batch = _positive("max_batch", max_batch)
        self.max_chars = _positive("max_chars", max_chars)
        self._api_key = api_key
        self._secrets = Secrets([*point.secrets, api_key or ""])
        self.model_id = f"openai:{self.base_url}#{model}" + (f"@{dimensions}" if dimensions else "")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._headers = headers
        self._client: Any = self._httpx.Client(headers=headers)
        http_deadline.install(self._client)
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

    def _excerpt(self, text: str) -> str:
        """The start of an answer's body for an error message, never with the key in it."""
        excerpt = " ".join(self._secrets.redact(text).split())[:BODY_CHARS]
        return LEFT_OUT if self._secrets.echoes(excerpt) else excerpt

    def _fail(self, fault: str) -> EmbedderError:
        message = self._secrets.redact(f"embedder {self.model_id!r}: {fault}")
        if self._secrets.echoes(message):
            message = f"embedder {self.model_id!r}: the error is left out: it echoed the key"
        return EmbedderError(message)

    def answer_cap(self, texts: int) -> int:
        """Bytes an answer for ``texts`` texts may take before it is refused (see the module docstring)."""
        dimension = getattr(self, "dimension", PROBE_DIMENSION)
        return max(ANSWER_FLOOR, texts * (dimension * NUMBER_BYTES + VECTOR_BYTES))

    def _payload(self, batch: list[str]) -> dict[str, Any]:
        payload: dict[str, Any] = {"model": self.model, "input": [text[: self.max_chars] for text in batch]}
        if self.dimensions is not None:
            payload["dimensions"] = self.dimensions
        payload["encoding_format"] = "float"
        return payload

    def _error(self, exc: Exception) -> EmbedderError:
        httpx = self._httpx
        if isinstance(exc, httpx.TimeoutException):
            return self._timed_out()
        return self._fail(f"cannot reach {self.url}: {type(exc).__name__}: {exc}")

    def _timed_out(self) -> EmbedderError:
        whole = "the whole request, connect to last byte"
        return self._fail(f"no answer from {self.url} within {self.timeout:g} s ({whole})")

    def _too_big(self, cap: int) -> EmbedderError:
        return self._fail(f"the answer from {self.url} passed its cap of {cap:,} bytes: not read further")

    def _request(self, client: Any, batch: list[str], deadline: float) -> tuple[Any, dict[str, float]]:
        """The request for ``batch``, and its timeouts, which ``_left`` shortens to the deadline."""
        left = max(0.001, deadline - time.monotonic())
        request = client.build_request("POST", self._url, json=self._payload(batch), timeout=left)
        timeouts: dict[str, float] = request.extensions.setdefault("timeout", {})
        return request, timeouts

    def _left(self, deadline: float, timeouts: dict[str, float]) -> None:
        """Raise the timeout error past ``deadline``; else make the next read wait no longer than it."""
        left = deadline - time.monotonic()
        if left <= 0:
            raise self._timed_out()
        for phase in ("connect", "read", "write", "pool"):
            timeouts[phase] = left

    def _status(self, answer: _Answer) -> None:
        """``HTTP {status} from {url}`` for any status but 200 (a redirect's ``Location`` named)."""
        if answer.status == 200:
            return
        where = ""
        if 300 <= answer.status < 400:
            where = f" (Location: {self._excerpt(answer.headers.get('location', '') or 'none')}; not followed)"
        body = self._excerpt(answer.body.decode("utf-8", "replace"))
        raise self._fail(
            f"HTTP {answer.status} from {self.url}{where}: {body}"
            if body
            else f"HTTP {answer.status} from {self.url}{where}"
        )

    def _parse(self, answer: _Answer, expected: int) -> list[list[float]]:
        self._status(answer)
        text = answer.body.decode("utf-8", "replace")
        try:
            document = json.loads(text)
        except ValueError:
            raise self._fail(f"the answer from {self.url} is not JSON: {self._excerpt(text)!r}") from None
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

    def _declared(self, response: Any, cap: int) -> None:
        length = response.headers.get("content-length", "")
        if length.isdigit() and int(length) > cap:
            raise self._too_big(cap)

    def _read(self, batch: list[str]) -> _Answer:
        """POST ``batch`` and read the answer, streamed: stopped at the deadline or past the cap."""
        deadline, cap = time.monotonic() + self.timeout, self.answer_cap(len(batch))
        request, timeouts = self._request(self._client, batch, deadline)
        try:
            with http_deadline.deadline(deadline):
                return self._receive(request, timeouts, deadline, cap)
        except self._httpx.HTTPError as exc:
            raise self._error(exc) from None

    def _receive(self, request: Any, timeouts: dict[str, float], deadline: float, cap: int) -> _Answer:
        response = self._client.send(request, stream=True)
        try:
            self._declared(response, cap)
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > cap:
                    raise self._too_big(cap)
                self._left(deadline, timeouts)
            return _Answer(response.status_code, response.headers, bytes(body))
        finally:
            response.close()

    def _post(self, batch: list[str]) -> list[list[float]]:
        return self._check(self._parse(self._read(batch), len(batch)), len(batch))

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text, in order; ``EmbedderError`` naming the fault."""
        batch = check_texts(texts)
        out: list[list[float]] = []
        for start in range(0, len(batch), self.max_batch):
            out.extend(self._post(batch[start : start + self.max_batch]))
        return out

    async def _aread(self, client: Any, batch: list[str]) -> _Answer:
        """``_read`` as a coroutine: cancelled at the deadline."""
        try:
            return await asyncio.wait_for(self._areceive(client, batch), self.timeout)
        except asyncio.TimeoutError:  # TimeoutError itself from Python 3.11
            raise self._timed_out() from None
        except self._httpx.HTTPError as exc:
            raise self._error(exc) from None

    async def _areceive(self, client: Any, batch: list[str]) -> _Answer:
        cap = self.answer_cap(len(batch))
        request, _ = self._request(client, batch, time.monotonic() + self.timeout)
        response = await client.send(request, stream=True)
        try:
            self._declared(response, cap)
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > cap:
                    raise self._too_big(cap)
            return _Answer(response.status_code, response.headers, bytes(body))
        finally:
            await response.aclose()

    async def aembed(self, texts: Sequence[str]) -> list[list[float]]:
        """``embed`` as a coroutine, without blocking the event loop."""
        batch = check_texts(texts)
        out: list[list[float]] = []
        if not batch:
            return out
        async with self._httpx.AsyncClient(headers=self._headers) as client:
            for start in range(0, len(batch), self.max_batch):
                chunk = batch[start : start + self.max_batch]
                out.extend(self._check(self._parse(await self._aread(client, chunk), len(chunk)), len(chunk)))
        return out
