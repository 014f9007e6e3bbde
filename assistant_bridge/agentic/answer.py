"""From results to the generated answer: the generator's snippets, the prompt budget, and Bedrock citations.

Invariants: every citation span satisfies ``0 <= startIndex < endIndex <= len(answer)`` (``endIndex``
exclusive) and every ``resultIndex`` points into the ``results`` of the same ``result`` event; spans are
sorted by ``startIndex`` and a span cited by several results is listed once with several references.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from assistant_bridge.core.snippets import Snippet

from .events import CitationSpan, ResultItem

if TYPE_CHECKING:
    from assistant_bridge.generators.base import Generation, Generator

MIN_CUT_CHARS = 800


def answer_snippets(results: Sequence[ResultItem], limit: int) -> list[Snippet]:
    """One snippet per result, for the best ``limit`` results; ``result_index`` is the result's index."""
    out = []
    for i, r in enumerate(results[:limit]):
        if r.text.strip():
            out.append(Snippet(text=r.text.strip(), title=str(r.metadata.get("title", "")), result_index=i))
    return out


def fit_to_context(question: str, snippets: list[Snippet], generator: Generator) -> list[Snippet]:
    """Shrink the prompt until the generator's context holds it: halve the longest snippet while it is long
    (a whole document read by expansion), otherwise drop the last one."""
    snippets = list(snippets)
    while snippets and generator.prompt_tokens(question, snippets) > generator.context_tokens:
        longest = max(range(len(snippets)), key=lambda i: len(snippets[i].text))
        s = snippets[longest]
        if len(s.text) > MIN_CUT_CHARS:
            cut = s.text[: len(s.text) // 2]
            cut = cut[: cut.rfind(" ")] if " " in cut[-200:] else cut
            snippets[longest] = Snippet(text=cut.rstrip() + " …", title=s.title, result_index=s.result_index)
        else:
            snippets.pop()
    return snippets


def citation_spans(generation: Generation, result_count: int) -> tuple[CitationSpan, ...]:
    """Bedrock citations from the generator's citations (whose ``search_result_index`` is a result index)."""
    n = len(generation.text)
    refs: dict[tuple[int, int], list[int]] = {}
    for c in generation.citations:
        index = c.search_result_index
        if not 0 <= index < result_count:
            continue
        for start, end in c.ranges:
            start, end = max(0, int(start)), min(n, int(end))
            if start >= end:
                continue
            bucket = refs.setdefault((start, end), [])
            if index not in bucket:
                bucket.append(index)
    return tuple(CitationSpan(s, e, tuple(ix)) for (s, e), ix in sorted(refs.items()))
