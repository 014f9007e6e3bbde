"""The evidence an agentic run has gathered: every hit of every round, deduplicated, and its final order.

* **Dedup**: a chunk is kept once, under the retriever and the round that found it first; a chunk whose
  normalised text equals a kept one is dropped too (the same passage ingested twice).
* **Order**, with reranking on (``rerankingModelType`` MANAGED, the default): reciprocal-rank fusion over all
  searches of all rounds, so a passage found by several sub-queries rises, plus one extra top-rank vote when
  a passage's title names the entity its search aimed at (the passage *about* that entity). With reranking
  off (NONE): the order of discovery, round by round, search by search.
* **Full documents**: once a document is read whole, its chunks collapse into one entry holding the whole
  text, at the place of its best chunk.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from assistant_bridge.core.textnorm import normalize_for_dedup
from assistant_bridge.domain import SearchHit

from .analysis import about
from .events import ResultItem
from .planner import EvidenceView, SubQuery

RRF_K = 10  # small: the first ranks of each search count much more than the tail
QUESTION_WEIGHT = 2.0  # weight of the searches made with the question itself
TITLE_BONUS = 1.0  # a passage whose title names the target of its search: one more top-rank vote
ACCUMULATE = 0.1  # weight of a passage's votes beyond its best one


@dataclass(frozen=True)
class FullDocument:
    """A document read whole through the document-content path."""

    document_id: str
    title: str
    text: str
    chunk_count: int
    url: str | None = None
    truncated: bool = False


@dataclass
class _Found:
    hit: SearchHit
    retriever: str
    round: int
    query: SubQuery
    rank: int
    order: int  # discovery order
    votes: list[float] = field(default_factory=list)


class Evidence:
    """Accumulates hits across rounds. Not thread-safe; one per run."""

    def __init__(self) -> None:
        self._found: dict[str, _Found] = {}
        self._text_keys: set[str] = set()
        self._documents: dict[str, tuple[FullDocument, str]] = {}
        self.searches = 0

    def __len__(self) -> int:
        return len(self._found)

    def add(self, round_: int, query: SubQuery, retriever: str, hits: Sequence[SearchHit]) -> list[SearchHit]:
        """Record the hits of one search; returns the hits that were new."""
        self.searches += 1
        new: list[SearchHit] = []
        for rank, hit in enumerate(hits):
            vote = (QUESTION_WEIGHT if query.purpose == "question" else 1.0) / (RRF_K + rank + 1)
            if query.target and query.purpose != "question" and about(hit.chunk.title, query.target):
                vote += TITLE_BONUS / (RRF_K + 1)
            found = self._found.get(hit.chunk.id)
            if found is not None:
                found.votes.append(vote)
                continue
            key = normalize_for_dedup(hit.chunk.text)
            if key in self._text_keys:
                continue
            self._text_keys.add(key)
            self._found[hit.chunk.id] = _Found(hit, retriever, round_, query, rank, len(self._found), [vote])
            new.append(hit)
        return new

    def add_document(self, doc: FullDocument, retriever: str) -> None:
        self._documents[doc.document_id] = (doc, retriever)

    @property
    def expanded(self) -> tuple[str, ...]:
        return tuple(self._documents)

    def _ranked(self, rerank: bool) -> list[_Found]:
        items = list(self._found.values())
        if rerank:
            items.sort(key=lambda f: (-_fused(f.votes), f.order))
        else:
            items.sort(key=lambda f: f.order)
        return items

    def views(self, rerank: bool = True, limit: int | None = None) -> tuple[EvidenceView, ...]:
        out = []
        for f in self._ranked(rerank)[:limit]:
            c = f.hit.chunk
            out.append(
                EvidenceView(
                    title=c.title,
                    text=c.text,
                    document_id=c.document_id,
                    retriever=f.retriever,
                    round=f.round,
                    query=f.query.text,
                    target=f.query.target,
                    rank=f.rank,
                )
            )
        return tuple(out)

    def top_documents(self, rerank: bool, window: int) -> list[tuple[str, str, int]]:
        """``(document_id, retriever, hits)`` for the documents among the best ``window`` entries."""
        counts: dict[str, list[Any]] = {}
        for f in self._ranked(rerank)[:window]:
            entry = counts.setdefault(f.hit.chunk.document_id, [f.retriever, 0])
            entry[1] += 1
        return [(doc, r, n) for doc, (r, n) in counts.items()]

    def results(self, rerank: bool = True, limit: int | None = None) -> list[ResultItem]:
        """The final results, best first; chunks of a document read whole become one entry."""
        out: list[ResultItem] = []
        emitted: set[str] = set()
        for f in self._ranked(rerank):
            c = f.hit.chunk
            if c.document_id in self._documents:
                if c.document_id in emitted:
                    continue
                emitted.add(c.document_id)
                doc, retriever = self._documents[c.document_id]
                meta = {
                    "document_id": doc.document_id,
                    "title": doc.title,
                    "full_document": True,
                    "chunk_count": doc.chunk_count,
                    "truncated": doc.truncated,
                    "score": round(_fused(f.votes), 6),
                    "retrieval_round": f.round,
                }
                if doc.url:
                    meta["url"] = doc.url
                out.append(ResultItem(text=doc.text, retriever=retriever, metadata=meta))
            else:
                out.append(ResultItem(text=c.text, retriever=f.retriever, metadata=_chunk_metadata(f, rerank)))
            if limit is not None and len(out) >= limit:
                break
        return out


def _fused(votes: list[float]) -> float:
    best = max(votes)
    return best + ACCUMULATE * (sum(votes) - best)


def _chunk_metadata(f: _Found, rerank: bool) -> dict[str, Any]:
    c = f.hit.chunk
    meta: dict[str, Any] = {
        "document_id": c.document_id,
        "chunk_id": c.id,
        "title": c.title,
        "score": round(_fused(f.votes) if rerank else f.hit.score, 6),
        "retrieval_score": round(float(f.hit.score), 6),
        "retrieval_round": f.round,
        "start_char": c.start_char,
        "end_char": c.end_char,
    }
    for key in ("url", "filename", "language", "page_number", "start_time", "end_time"):
        value = getattr(c, key)
        if value not in (None, ""):
            meta[key] = value
    return meta
