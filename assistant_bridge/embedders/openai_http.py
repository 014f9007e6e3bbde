"""An OpenAI-compatible ``POST {base_url}/embeddings`` endpoint (vLLM, Ollama, llama.cpp server, hosted APIs)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from assistant_bridge.embedders.base import normalize_rows
from assistant_bridge.errors import EmbedderError
from assistant_bridge.http import (
    LazyClient,
    RetryableStatus,
    RetryPolicy,
    as_secret,
    bearer,
    failure_reason,
    raise_for_retry,
)
from assistant_bridge.settings import Secret


class OpenAIEmbedder:
    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: Secret | str | None = None,
        dim: int | None = None,
        timeout: float = 30.0,
        batch_size: int = 64,
        transport: httpx.BaseTransport | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = f"openai:{model}"
        self.dim = dim or 0
        self._batch = batch_size
        self._http = LazyClient(timeout=timeout, headers=bearer(as_secret(api_key)), transport=transport)
        self._retry = retry or RetryPolicy(name="embedder")

    def warm_up(self) -> None:
        self._http.get()
        if not self.dim:
            self.dim = int(self._post(["dimension probe"]).shape[1])

    def _post(self, texts: Sequence[str]) -> np.ndarray:
        client = self._http.get()
        body = {"model": self.model, "input": list(texts)}
        try:
            resp = self._retry.call(lambda: raise_for_retry(client.post(f"{self.base_url}/embeddings", json=body)))
            resp.raise_for_status()
            data: Any = resp.json()
            rows = sorted(data["data"], key=lambda d: d.get("index", 0))
            return normalize_rows(np.array([r["embedding"] for r in rows], dtype=np.float32))
        except (httpx.HTTPError, RetryableStatus) as exc:
            raise EmbedderError(
                f"embedding endpoint failed: {failure_reason(exc)}", reason=failure_reason(exc)
            ) from None
        except (KeyError, TypeError, ValueError) as exc:
            raise EmbedderError("embedding endpoint returned an unexpected body") from exc

    def _run(self, texts: Sequence[str]) -> np.ndarray:
        self.warm_up()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.vstack([self._post(texts[i : i + self._batch]) for i in range(0, len(texts), self._batch)])

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._run(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._run(texts)

    def count_tokens(self, text: str) -> int:
        return len(re.findall(r"\w+|[^\w\s]", text))
