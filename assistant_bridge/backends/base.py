"""The search backend protocol and the record form chunks are stored in (the factory keyed by ``backend.kind``:
``factory.py``).

A backend stores chunks with their vectors and scope fields and answers lexical, dense and hybrid searches
restricted to a :class:`~assistant_bridge.domain.Scope`. Backends map their vendor's errors to
:class:`~assistant_bridge.errors.BackendUnavailable` in one place each.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Protocol, runtime_checkable

import numpy as np

from assistant_bridge.domain import BBox, Chunk, Ownership, Scope, SearchHit, SearchQuery
from assistant_bridge.errors import BridgeError

RRF_K = 60


@runtime_checkable
class SearchBackend(Protocol):
    name: str

    def warm_up(self) -> None:
        """Connect, create the collection/index if missing (with ``dim``), load it. Idempotent."""

    def ready(self) -> bool: ...

    def upsert(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None:
        """Insert or replace chunks (by id) and make them searchable before returning."""

    def delete_document(self, document_id: str) -> int:
        """Remove every chunk of a document; returns how many were removed."""

    def search(self, query: SearchQuery) -> list[SearchHit]:
        """Top ``query.limit`` hits within ``query.scope`` and ``query.filter``. ``query.vector`` is set for
        dense and hybrid searches."""

    def get_chunks(self, chunk_ids: Sequence[str], scope: Scope) -> list[Chunk]:
        """The visible chunks among ``chunk_ids`` (invisible or unknown ids are absent)."""

    def document_chunks(self, document_id: str, scope: Scope) -> list[Chunk]:
        """All visible chunks of a document, in position order."""

    def count(self) -> int: ...

    def close(self) -> None: ...


@contextmanager
def mapped_errors(mapper: Callable[[Exception], BridgeError | None]) -> Iterator[None]:
    """Runs the block; an exception that ``mapper`` maps to our error tree is raised as that error (chained to
    the original). A :class:`~assistant_bridge.errors.BridgeError`, and an exception that ``mapper`` leaves
    alone (``None``), pass unchanged. Each backend maps its client's errors in one such function."""
    try:
        yield
    except BridgeError:
        raise
    except Exception as exc:
        mapped = mapper(exc)
        if mapped is None:
            raise
        raise mapped from exc


def _fused(runs: Sequence[Sequence[SearchHit]], votes: Sequence[Sequence[float]], limit: int) -> list[SearchHit]:
    """The ``limit`` best hits by the sum of their votes (``votes[i][j]``: what the ``j``-th hit of run ``i``
    adds). A hit keeps the highlights of the first run that gave it any."""
    scores: dict[str, float] = {}
    best: dict[str, SearchHit] = {}
    for run, run_votes in zip(runs, votes, strict=True):
        for hit, vote in zip(run, run_votes, strict=True):
            cid = hit.chunk.id
            scores[cid] = scores.get(cid, 0.0) + vote
            if cid not in best or (hit.highlights and not best[cid].highlights):
                best[cid] = hit
    order = sorted(scores, key=lambda cid: -scores[cid])[:limit]
    return [SearchHit(chunk=best[c].chunk, score=scores[c], highlights=best[c].highlights) for c in order]


def rrf_fuse(runs: Sequence[Sequence[SearchHit]], limit: int, k: int = RRF_K) -> list[SearchHit]:
    """Reciprocal-rank fusion of ranked runs (client-side hybrid search)."""
    return _fused(runs, [[1.0 / (k + rank) for rank in range(1, len(run) + 1)] for run in runs], limit)


def weighted_fuse(runs: Sequence[Sequence[SearchHit]], weights: Sequence[float], limit: int) -> list[SearchHit]:
    """Convex combination of min-max normalised scores: each run's scores are mapped to [0, 1] (its best 1, its
    last 0; a hit a run did not return counts as that run's 0), weighted and summed. Unlike reciprocal-rank
    fusion it keeps how far apart the scores are, so a clear dense winner stays first while a passage with
    the query's exact terms can still rise (measurements in docs/benchmarks.md, "Hybrid search")."""
    if len(weights) != len(runs):
        raise ValueError(f"{len(runs)} runs need as many weights, not {len(weights)}")
    votes = []
    for run, weight in zip(runs, weights, strict=True):
        low, high = min((h.score for h in run), default=0.0), max((h.score for h in run), default=0.0)
        votes.append([weight * ((h.score - low) / (high - low) if high > low else 1.0) for h in run])
    return _fused(runs, votes, limit)


def summed_fuse(runs: Sequence[Sequence[SearchHit]], weights: Sequence[float], limit: int) -> list[SearchHit]:
    """Weighted sum of raw scores, a hit a run did not return counting as that run's lowest score. For BM25
    runs of a text and of a shorter text whose words it holds, it ranks as the longer text would with the
    extra words weighted down (a conversation's carried terms beside the message as asked)."""
    if len(weights) != len(runs):
        raise ValueError(f"{len(runs)} runs need as many weights, not {len(weights)}")
    votes = []
    for run, weight in zip(runs, weights, strict=True):
        low = min((h.score for h in run), default=0.0)
        votes.append([weight * (h.score - low) for h in run])  # the same low for every hit: ranks as the sum
    return _fused(runs, votes, limit)


def chunk_from_record(e: Mapping[str, Any], bboxes: Iterable[Mapping[str, Any]]) -> Chunk:
    """A chunk from the flat record a backend stores (``owner``, ``workspaces``, ``tenant`` and
    ``session_id`` as fields; ``bboxes`` as ``[{page_number, bbox: [x1, y1, x2, y2], layout_width,
    layout_height}]``)."""
    boxes = tuple(
        BBox(
            page_number=int(b["page_number"]),
            x1=b["bbox"][0],
            y1=b["bbox"][1],
            x2=b["bbox"][2],
            y2=b["bbox"][3],
            layout_width=b.get("layout_width"),
            layout_height=b.get("layout_height"),
        )
        for b in bboxes
    )
    return Chunk(
        id=e["id"],
        document_id=e["document_id"],
        title=e.get("title", ""),
        text=e.get("text", ""),
        position=int(e.get("position", 0)),
        url=e.get("url") or None,
        start_char=int(e.get("start_char", 0)),
        end_char=int(e.get("end_char", 0)),
        language=e.get("language", ""),
        modality=e.get("modality", "text"),
        page_number=e.get("page_number"),
        bboxes=boxes,
        start_time=e.get("start_time"),
        end_time=e.get("end_time"),
        filename=e.get("filename", ""),
        ownership=Ownership(
            owner_user_id=e.get("owner", ""),
            workspace_ids=tuple(e.get("workspaces") or ()),
            tenant=e.get("tenant", ""),
            session_id=e.get("session_id", ""),
        ),
    )


def chunk_record(c: Chunk) -> dict[str, Any]:
    """The flat record of a chunk that the backends store (read back by :func:`chunk_from_record`)."""
    own = c.ownership
    return {
        "id": c.id,
        "document_id": c.document_id,
        "position": c.position,
        "title": c.title,
        "text": c.text,
        "url": c.url or "",
        "filename": c.filename,
        "language": c.language,
        "modality": c.modality,
        "page_number": c.page_number,
        "start_time": c.start_time,
        "end_time": c.end_time,
        "start_char": c.start_char,
        "end_char": c.end_char,
        "bboxes": [b.to_json() for b in c.bboxes],
        "tenant": own.tenant,
        "owner": own.owner_user_id,
        "workspaces": list(own.workspace_ids),
        "session_id": own.session_id,
    }
