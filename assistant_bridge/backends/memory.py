"""In-memory backend: brute-force cosine and a small BM25, for unit tests and throwaway runs.

It implements the same contract as the real backends (the contract suite runs against it too), but
keeps nothing on disk and is not meant for production data.
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Sequence

import numpy as np

from assistant_bridge.backends.base import rrf_fuse
from assistant_bridge.core.filters import matches, stored_record
from assistant_bridge.core.scope import chunk_visible
from assistant_bridge.core.textnorm import indexed_text, lexical_form
from assistant_bridge.domain import Chunk, Scope, SearchHit, SearchQuery


class MemoryBackend:
    name = "memory"

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._chunks: dict[str, Chunk] = {}
        self._vectors: dict[str, np.ndarray] = {}
        self._terms: dict[str, Counter[str]] = {}
        self._lock = threading.Lock()
        self.fail_next: Exception | None = None  # tests set this to simulate an outage

    def warm_up(self) -> None:
        return None

    def ready(self) -> bool:
        return self.fail_next is None

    def close(self) -> None:
        return None

    def _maybe_fail(self) -> None:
        if self.fail_next is not None:
            raise self.fail_next

    def upsert(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None:
        self._maybe_fail()
        with self._lock:
            for c, v in zip(chunks, np.asarray(vectors, dtype=np.float32), strict=False):
                self._chunks[c.id] = c
                self._vectors[c.id] = v
                self._terms[c.id] = Counter(lexical_form(indexed_text(c.title, c.text)).split())

    def delete_document(self, document_id: str) -> int:
        self._maybe_fail()
        with self._lock:
            ids = [i for i, c in self._chunks.items() if c.document_id == document_id]
            for i in ids:
                del self._chunks[i], self._vectors[i], self._terms[i]
            return len(ids)

    def _candidates(self, query: SearchQuery) -> list[Chunk]:
        return [
            c
            for c in self._chunks.values()
            if chunk_visible(c, query.scope) and (query.filter is None or matches(query.filter, stored_record(c)))
        ]

    def _dense(self, query: SearchQuery, cands: list[Chunk], limit: int) -> list[SearchHit]:
        if not cands or query.vector is None:
            return []
        q = np.asarray(query.vector, dtype=np.float32)
        scored = [(float(self._vectors[c.id] @ q), c) for c in cands]
        scored.sort(key=lambda t: -t[0])
        return [SearchHit(chunk=c, score=s) for s, c in scored[:limit]]

    def _lexical(self, query: SearchQuery, cands: list[Chunk], limit: int) -> list[SearchHit]:
        terms = lexical_form(query.text).split()
        n = max(len(self._terms), 1)
        avg = sum(sum(t.values()) for t in self._terms.values()) / n or 1.0
        out = []
        for c in cands:
            tf, length, score = self._terms[c.id], sum(self._terms[c.id].values()), 0.0
            for t in set(terms):
                if tf[t]:
                    df = sum(1 for x in self._terms.values() if x[t])
                    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                    score += idf * tf[t] * 2.2 / (tf[t] + 1.2 * (0.25 + 0.75 * length / avg))
            if score > 0:
                out.append(SearchHit(chunk=c, score=score))
        out.sort(key=lambda h: -h.score)
        return out[:limit]

    def search(self, query: SearchQuery) -> list[SearchHit]:
        self._maybe_fail()
        with self._lock:
            cands = self._candidates(query)
            if query.mode == "lexical":
                return self._lexical(query, cands, query.limit)
            if query.mode == "dense":
                return self._dense(query, cands, query.limit)
            depth = max(query.limit * 4, 40)
            return rrf_fuse([self._dense(query, cands, depth), self._lexical(query, cands, depth)], query.limit)

    def get_chunks(self, chunk_ids: Sequence[str], scope: Scope) -> list[Chunk]:
        self._maybe_fail()
        with self._lock:
            return [self._chunks[i] for i in chunk_ids if i in self._chunks and chunk_visible(self._chunks[i], scope)]

    def document_chunks(self, document_id: str, scope: Scope) -> list[Chunk]:
        self._maybe_fail()
        with self._lock:
            found = [c for c in self._chunks.values() if c.document_id == document_id and chunk_visible(c, scope)]
        return sorted(found, key=lambda c: c.position)

    def count(self) -> int:
        return len(self._chunks)
