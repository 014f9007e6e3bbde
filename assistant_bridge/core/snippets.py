"""Turn search results into the text snippets the generator sees (spec §B.1 steps 1–3).

Invariant: :func:`build_snippets` returns at most ``max_snippets`` (default five) snippets, in the order of
the results (first to last) and, within a result, in the order of its ``highlight.body`` list; no two of them
have the same dedup key, and none is blank.

Choices the IBM documentation leaves open (protocols.md OQ-6, OQ-7), made here on purpose:

* An **empty** ``highlight.body`` list falls back to ``body``, exactly like a missing one: an empty list
  carries no passage, and dropping the result would hide a document the server chose to return.
* Duplicates are compared after :func:`~assistant_bridge.core.textnorm.normalize_for_dedup` (NFKC,
  case-folded, whitespace collapsed, punctuation stripped at both ends), not as exact strings. Overlapping
  chunks and highlighters often return the same passage with a different case, spacing or trailing ``…``;
  sending it twice wastes the model's context and a citation slot. The first occurrence is kept.
* A snippet is **blank** when its dedup key is empty (only whitespace, punctuation or symbols); it is
  skipped and does not count towards the five.
* Snippet text is stripped of surrounding whitespace and otherwise kept as sent; it is never truncated
  here (the loop's truncation step drops whole snippets instead).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from assistant_bridge.core.results import SearchResult
from assistant_bridge.core.textnorm import normalize_for_dedup

MAX_SNIPPETS = 5


@dataclass(frozen=True)
class Snippet:
    """One passage handed to the generator.

    :param text: the passage text.
    :param title: the title of the result it came from (sent to the generator with the text).
    :param result_index: 0-based index of that result in the full result list; citations point there.
    :param similarity: that result's :attr:`~assistant_bridge.core.results.SearchResult.similarity`.
    :param filename: the file name of the document it came from (that result's ``filename`` metadata), or "".
    :param document_id: for a passage that is a whole chunk of this service's own index, its document (that
        result's ``document_id`` metadata), and ``position``, the chunk's place in it (its ``position``): the
        generator reads a passage that goes on in the next chunk of its document on into that chunk when it is
        among the snippets. "" and ``None`` otherwise (a highlight is a piece of its chunk).
    """

    text: str
    title: str
    result_index: int
    similarity: float | None = None
    filename: str = ""
    document_id: str = ""
    position: int | None = None


def build_snippets(results: Sequence[SearchResult], max_snippets: int = MAX_SNIPPETS) -> list[Snippet]:
    """Collect up to ``max_snippets`` distinct, non-blank snippets from ``results``, first to last.

    :param results: the search results in rank order.
    :param max_snippets: the cap (IBM documents five).
    :returns: the snippets, in result order.
    :raises ValueError: if ``max_snippets`` is below 1.
    """
    if max_snippets < 1:
        raise ValueError("max_snippets must be at least 1")
    snippets: list[Snippet] = []
    seen: set[str] = set()
    for index, result in enumerate(results):
        texts = result.highlight_body if result.highlight_body else (result.body,)
        meta = result.result_metadata
        whole = not result.highlight_body and isinstance(meta.get("position"), int) and bool(meta.get("document_id"))
        for raw in texts:
            key = normalize_for_dedup(raw)
            if not key or key in seen:
                continue
            seen.add(key)
            snippets.append(
                Snippet(
                    text=raw.strip(),
                    title=result.title,
                    result_index=index,
                    similarity=result.similarity,
                    filename=str(meta.get("filename") or ""),
                    document_id=str(meta["document_id"]) if whole else "",
                    position=int(meta["position"]) if whole else None,
                )
            )
            if len(snippets) == max_snippets:
                return snippets
    return snippets
