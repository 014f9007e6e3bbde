"""Client-side fusion of ranked runs (``backends/base.py``): reciprocal rank, weighted and summed scores."""

from __future__ import annotations

from typing import Any

import pytest

from assistant_bridge.backends.base import rrf_fuse, summed_fuse, weighted_fuse
from assistant_bridge.domain import Chunk, SearchHit

pytestmark = pytest.mark.unit


def run(*scored: tuple[str, float]) -> list[SearchHit]:
    return [SearchHit(chunk=Chunk(id=cid, document_id="d", title="", text=cid), score=s) for cid, s in scored]


def ids(hits: list[SearchHit]) -> list[str]:
    return [h.chunk.id for h in hits]


def test_weighted_keeps_a_clear_dense_winner_first() -> None:
    dense = run(("a", 0.90), ("b", 0.80), ("c", 0.79), ("d", 0.78))
    lexical = run(("c", 12.0), ("d", 11.0), ("e", 2.0))
    # reciprocal rank puts c (2nd and 1st) over a; scores say a is far ahead on the dense side
    assert ids(rrf_fuse([dense, lexical], 4))[0] == "c"
    fused = weighted_fuse([dense, lexical], (0.6, 0.4), 4)
    assert ids(fused)[0] == "a"
    assert fused[0].score == pytest.approx(0.6)


def test_weighted_lets_a_strong_lexical_match_rise() -> None:
    dense = run(("a", 0.84), ("b", 0.83), ("c", 0.82), ("x", 0.70))
    lexical = run(("c", 30.0), ("a", 5.0), ("b", 4.0), ("x", 1.0))
    assert ids(weighted_fuse([dense, lexical], (0.6, 0.4), 2)) == ["c", "a"]


def test_weighted_edges() -> None:
    dense = run(("a", 0.5))
    # one hit (or all equal) normalises to 1; an empty run adds nothing; the limit holds
    assert [h.score for h in weighted_fuse([dense, []], (0.6, 0.4), 5)] == [pytest.approx(0.6)]
    assert weighted_fuse([[], []], (0.5, 0.5), 5) == []
    many = run(*[(str(i), float(10 - i)) for i in range(10)])
    assert ids(weighted_fuse([many, many], (0.5, 0.5), 3)) == ["0", "1", "2"]
    with pytest.raises(ValueError):
        weighted_fuse([dense], (0.6, 0.4), 5)  # one weight per run


@pytest.mark.parametrize("fuse", [lambda runs: rrf_fuse(runs, 5), lambda runs: weighted_fuse(runs, (0.5, 0.5), 5)])
def test_a_fused_hit_keeps_the_highlights_one_run_gave_it(fuse: Any) -> None:
    dense = run(("a", 0.9), ("b", 0.8))
    lexical = [SearchHit(chunk=dense[1].chunk, score=3.0, highlights=("<em>b</em>",))]
    fused = {h.chunk.id: h for h in fuse([dense, lexical])}
    assert fused["b"].highlights == ("<em>b</em>",)
    assert fused["a"].highlights == ()


def test_summed_scores_count_a_missing_hit_as_the_runs_lowest() -> None:
    rewrite = run(("topic", 9.0), ("both", 8.0), ("low", 2.0))  # the message's words and the carried terms
    asked = run(("both", 6.0), ("asked", 5.5), ("low2", 1.0))  # the message's words alone
    # both: 8 + 6 = 14; topic: 9 + 1 (asked's lowest) = 10; asked: 2 (rewrite's lowest) + 5.5 = 7.5
    assert ids(summed_fuse([rewrite, asked], (1.0, 1.0), 3)) == ["both", "topic", "asked"]
    # the message weighing less, the carried topic keeps its place: topic 9 + 0.1 > asked 2 + 0.55
    assert ids(summed_fuse([rewrite, asked], (1.0, 0.1), 2)) == ["topic", "both"]
    assert summed_fuse([[], []], (1.0, 1.0), 5) == []
    with pytest.raises(ValueError):
        summed_fuse([rewrite], (1.0, 1.0), 5)
