"""Citations (endIndex exclusive, index references into results) and the prompt budget."""

from __future__ import annotations

import pytest

from assistant_bridge.agentic.answer import answer_snippets, citation_spans, fit_to_context
from assistant_bridge.agentic.events import ResultItem
from assistant_bridge.core.citations import Citation
from assistant_bridge.core.snippets import Snippet
from assistant_bridge.generators import FakeGenerator
from assistant_bridge.generators.base import Generation

pytestmark = pytest.mark.unit


def gen(text: str, *cites: tuple[int, tuple[tuple[int, int], ...]]) -> Generation:
    return Generation(
        text=text, citations=tuple(Citation("t", "x", "b", i, r) for i, r in cites), declined=False, model="m"
    )


def test_spans_are_exclusive_sorted_and_merged() -> None:
    g = gen("Alpha beta. Gamma delta.", (1, ((12, 24),)), (0, ((0, 11),)), (2, ((0, 11),)))
    spans = citation_spans(g, 3)
    assert [(s.start, s.end, s.result_indexes) for s in spans] == [(0, 11, (0, 2)), (12, 24, (1,))]
    assert g.text[spans[1].start : spans[1].end] == "Gamma delta."
    assert spans[0].to_json() == {
        "startIndex": 0,
        "endIndex": 11,
        "references": [{"resultIndex": 0}, {"resultIndex": 2}],
    }


def test_spans_outside_the_answer_or_the_results_are_dropped_or_clipped() -> None:
    g = gen("Short.", (5, ((0, 6),)), (0, ((4, 99),)), (0, ((3, 3),)))
    assert [(s.start, s.end, s.result_indexes) for s in citation_spans(g, 2)] == [(4, 6, (0,))]


def test_snippets_point_at_their_results() -> None:
    results = [ResultItem(" a ", "kb", {"title": "A"}), ResultItem("", "kb"), ResultItem("c", "kb", {"title": "C"})]
    assert answer_snippets(results, 5) == [Snippet("a", "A", 0), Snippet("c", "C", 2)]
    assert answer_snippets(results, 1) == [Snippet("a", "A", 0)]


def test_fit_to_context_halves_long_passages_before_dropping() -> None:
    long = Snippet("word " * 2000, "Doc", 0)
    short = Snippet("short passage", "S", 1)
    g = FakeGenerator(context_tokens=600)
    fitted = fit_to_context("q", [long, short], g)
    assert [s.result_index for s in fitted] == [0, 1]
    assert len(fitted[0].text) < len(long.text) and fitted[0].text.endswith("…")
    assert g.prompt_tokens("q", fitted) <= 600
    assert fit_to_context("q", [short], FakeGenerator(context_tokens=1)) == []
