"""How a ``/message`` body becomes a turn request: the thresholds a request may set."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from assistant_bridge.conversation.envelope import turn_request
from assistant_bridge.filters.protocols import Thresholds

pytestmark = pytest.mark.unit

LEVEL = Thresholds(pre_gen=0.2, post_gen=0.4, pre_gen_low_coverage=0.45)


def _request(thresholds: dict[str, float]) -> Any:
    runtime = SimpleNamespace(
        settings=SimpleNamespace(max_search_results_bytes=100_000), thresholds=lambda level: LEVEL
    )
    assistant = SimpleNamespace(conversational=SimpleNamespace(threshold_level="less_often"))
    body = {"input": {"text": "q", "options": {"thresholds": thresholds}}}
    return turn_request(body, 100, runtime, assistant, None).thresholds  # type: ignore[arg-type]


def test_a_request_that_keeps_the_levels_pre_gen_keeps_its_low_coverage_rule() -> None:
    assert _request({"post_gen": 0.1}) == Thresholds(pre_gen=0.2, post_gen=0.1, pre_gen_low_coverage=0.45)


def test_a_request_that_sets_its_own_pre_gen_has_no_low_coverage_rule() -> None:
    assert _request({"pre_gen": 0.3}) == Thresholds(pre_gen=0.3, post_gen=0.4, pre_gen_low_coverage=None)
