"""An OpenAI-compatible ``POST {base_url}/embeddings`` endpoint (vLLM, Ollama, llama.cpp server, hosted APIs)."""

from __future__ import annotations

import re
from typing import Any, Sequence

import httpx
import numpy as np

from assistant_bridge.embedders.base import normalize_rows
from assistant_bridge.errors import EmbedderError
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
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = f"openai:{model}"
        self.dim = dim or 0
        self._key = api_key if isinstance(api_key, Secret) or api_key is None else Secret(api_key)
        self._timeout = timeout
        self._batch = batch_size
        self._transport = transport
        self._client: httpx.Client | None = None

    def warm_up(self) -> None:
        if self._client is None:
            headers = {"Authorization": f"Bearer {self._key.get()}"} if self._key else {}
            self._client = httpx.Client(timeout=self._timeout, headers=headers, transport=self._transport)
        if not self.dim:
            self.dim = int(self._post(["dimension probe"]).shape[1])

    def _post(self, texts: Sequence[str]) -> np.ndarray:
        assert self._client is not None
        try:
            resp = self._client.post(f"{self.base_url}/embeddings", json={"model": self.model, "input": list(texts)})
            resp.raise_for_status()
            data: Any = resp.json()
            rows = sorted(data["data"], key=lambda d: d.get("index", 0))
            return normalize_rows(np.array([r["embedding"] for r in rows], dtype=np.float32))
        except httpx.HTTPError as exc:
            raise EmbedderError(f"embedding endpoint failed: {type(exc).__name__}") from exc
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
