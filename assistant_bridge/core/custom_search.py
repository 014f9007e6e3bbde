"""Custom-search-server wire helpers (spec §A.1): hits to ``search_results`` and the 100 KB response cap.

Invariant: :func:`fit_within` never returns a body larger than its limit; it drops results from the end
first, then shortens the last remaining one, and reports how many it dropped or cut.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from assistant_bridge.core.results import SearchResult
from assistant_bridge.domain import SearchHit

_SENT = re.compile(r"[^.!?。！？\n]+[.!?。！？]*\s*")
_WORD = re.compile(r"\w+", re.UNICODE)


def best_passage(text: str, query: str, max_chars: int) -> str:
    """The window of whole sentences of ``text`` (at most ``max_chars``) that shares most words with ``query``."""
    if len(text) <= max_chars:
        return text
    sents = [m.group(0) for m in _SENT.finditer(text)] or [text]
    terms = {t.lower() for t in _WORD.findall(query)}
    # CJK queries have no spaces: also count the query's characters
    chars = {c for c in query if ord(c) > 0x2E80}

    def score(s: str) -> float:
        words = {t.lower() for t in _WORD.findall(s)}
        return len(words & terms) + 0.2 * len({c for c in s if c in chars})

    best_i = max(range(len(sents)), key=lambda i: score(sents[i]))
    out, lo, hi = sents[best_i], best_i, best_i + 1
    while True:
        grew = False
        if hi < len(sents) and len(out) + len(sents[hi]) <= max_chars:
            out, hi, grew = out + sents[hi], hi + 1, True
        if lo > 0 and len(out) + len(sents[lo - 1]) <= max_chars:
            out, lo, grew = sents[lo - 1] + out, lo - 1, True
        if not grew:
            break
    return out.strip()[:max_chars]


def hit_to_result(hit: SearchHit, query: str, passage_chars: int = 0) -> dict[str, Any]:
    c = hit.chunk
    meta: dict[str, Any] = {
        "score": round(float(hit.score), 6),
        "document_retrieval_source": "assistant-bridge",
        "document_id": c.document_id,
        "chunk_id": c.id,
        "position": c.position,
        "language": c.language,
        "modality": c.modality,
    }
    if c.filename:
        meta["filename"] = c.filename
    if c.page_number is not None:
        meta["page_number"] = c.page_number
    if c.start_time is not None:
        meta["start_time"] = c.start_time
        meta["end_time"] = c.end_time
    result: dict[str, Any] = {"result_metadata": meta, "title": c.title, "body": c.text}
    if c.url:
        result["url"] = c.url
    passages = list(hit.highlights)
    if passage_chars and not passages and len(c.text) > passage_chars:
        passages = [best_passage(c.text, query, passage_chars)]
    if passages:
        result["highlight"] = {"body": passages}
    return result


def result_of_hit(hit: SearchHit, query: str, passage_chars: int = 0) -> SearchResult:
    """The :class:`SearchResult` a turn of this service reads for one of its own hits: the wire form of
    :func:`hit_to_result` with the chunk id, and the hit's dense :attr:`~SearchHit.similarity`."""
    data = hit_to_result(hit, query, passage_chars)
    data["id"] = hit.chunk.id
    return replace(SearchResult.from_json(data), similarity=hit.similarity)


def _size(body: Any) -> int:
    return len(json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode())


def fit_within(
    results: Sequence[dict[str, Any]], max_bytes: int, key: str = "search_results"
) -> tuple[dict[str, Any], int]:
    """Build ``{key: results}`` no larger than ``max_bytes``. Returns the body and how many results were
    dropped or shortened."""
    kept = list(results)
    trimmed = 0
    while kept and _size({key: kept}) > max_bytes:
        if len(kept) > 1:
            kept.pop()
            trimmed += 1
            continue
        only = dict(kept[0])
        excess = _size({key: [only]}) - max_bytes
        only.pop("highlight", None)
        body = only.get("body", "")
        only["body"] = body[: max(0, len(body) - excess - 64)]
        title = only.get("title", "")
        if _size({key: [only]}) > max_bytes:
            only["title"] = title[:256]
            only["result_metadata"] = {"score": only.get("result_metadata", {}).get("score", 0)}
        if _size({key: [only]}) > max_bytes:
            kept = []
        else:
            kept = [only]
        trimmed += 1
    return {key: kept}, trimmed
