"""The pre-filter wrapper that tells the loop how much of the question the snippets' sentences hold."""

from __future__ import annotations

import pytest

from assistant_bridge.core.loop import CoverageLike, SecondLookLike
from assistant_bridge.filters import FakePreFilter
from assistant_bridge.generators.coverage import CoveringPreFilter

pytestmark = pytest.mark.unit


def test_the_wrapper_scores_as_its_filter_and_measures_the_sentences() -> None:
    inner = FakePreFilter(0.4, vouched=[(0, 0.95)])
    pre = CoveringPreFilter(inner)
    texts = ["Accra is the capital of Ghana.", "Cocoa is grown in the south."]
    assert pre.score("What is the capital of Ghana?", texts) == 0.4 and inner.calls
    assert isinstance(pre, CoverageLike) and pre.coverage("What is the capital of Ghana?", texts) == 1.0
    assert pre.coverage("Who won the 1998 football world cup?", texts) == 0.0
    assert isinstance(pre, SecondLookLike) and pre.second_look("q", texts) == [(0, 0.95)]
    pre.warm_up()
    assert inner.warmed
