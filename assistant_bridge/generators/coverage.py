"""A pre-generation filter that also says how much of the question one sentence of the snippets holds.

The loop asks a higher pre-generation score of snippets that hold little of the question
(:data:`~assistant_bridge.core.loop.LOW_COVERAGE`), when the pre-filter can say how much they hold
(:class:`~assistant_bridge.core.loop.CoverageLike`). The share is measured on the sentences and terms the
extractive generator reads (:func:`~assistant_bridge.generators.sentences.asked_coverage`), so it lives here and
wraps whichever pre-filter was loaded: the filters package does not read the generator's sentences.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assistant_bridge.filters.protocols import PreFilter
from assistant_bridge.generators.sentences import asked_coverage


class CoveringPreFilter:
    """``inner`` (its score, its warm-up and anything else it offers, such as a second look) plus
    :meth:`coverage`."""

    def __init__(self, inner: PreFilter) -> None:
        self._inner = inner

    def score(self, query: str, snippets: Sequence[str]) -> float:
        return self._inner.score(query, snippets)

    def warm_up(self) -> None:
        self._inner.warm_up()

    def coverage(self, query: str, snippets: Sequence[str], titles: Sequence[str] = ()) -> float:
        """The largest share of the query's words one sentence of the snippets holds (``titles``, one per
        snippet: a manual page the query names holds its name in every sentence)."""
        return asked_coverage(query, snippets, titles)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
