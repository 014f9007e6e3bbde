"""The embedder protocol and a deterministic fake (the factory keyed by configuration: ``factory.py``).

Every embedder returns L2-normalised float32 rows, so cosine similarity is a dot product.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns text into vectors. ``name`` identifies the model so stored vectors are never mixed."""

    name: str
    dim: int

    def warm_up(self) -> None: ...

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...

    def count_tokens(self, text: str) -> int: ...


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    m = np.asarray(matrix, dtype=np.float32)
    if m.ndim == 1:
        m = m[None, :]
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: np.ndarray = m / norms
    return out


_TOKEN = re.compile(r"\w+", re.UNICODE)


class HashingEmbedder:
    """A deterministic bag-of-words embedder for unit tests: no model, no I/O.

    Words (and CJK characters) are hashed into ``dim`` buckets, so texts that share words are close.
    It is a faithful stand-in for the protocol, not for retrieval quality.
    """

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim
        self.name = f"hashing-{dim}"

    def warm_up(self) -> None:
        return None

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for tok in _TOKEN.findall(text.lower()):
                pieces = list(tok) if any(ord(c) > 0x2E80 for c in tok) else [tok]
                for p in pieces:
                    h = int.from_bytes(hashlib.blake2b(p.encode(), digest_size=4).digest(), "little")
                    out[i, h % self.dim] += 1.0
        return normalize_rows(out)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)

    def count_tokens(self, text: str) -> int:
        return len(_TOKEN.findall(text))
