"""The filter protocols the conversational search loop talks to, and the threshold record.

A pre-generation filter says how likely the snippets are to answer the query; a post-generation filter says
how likely a generated answer is to be supported by the snippets. Both return a probability in [0, 1] and
never raise on odd input (empty snippets, very long snippets, mixed languages, odd characters).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from assistant_bridge.errors import ConfigurationError

LEVELS: tuple[str, ...] = ("rarely", "less_often", "more_often", "most_often")
DEFAULT_LEVEL = "less_often"


@runtime_checkable
class PreFilter(Protocol):
    def score(self, query: str, snippets: Sequence[str]) -> float:
        """P(the snippets answer the query), in [0, 1]."""
        ...

    def warm_up(self) -> None:
        """Load models once per worker (after the fork, never at import)."""
        ...


@runtime_checkable
class PostFilter(Protocol):
    def score(self, query: str, snippets: Sequence[str], answer: str) -> float:
        """P(the answer is supported by the snippets), in [0, 1]."""
        ...

    def warm_up(self) -> None:
        """Load models once per worker (after the fork, never at import)."""
        ...


@dataclass(frozen=True)
class Thresholds:
    """Scores below ``pre_gen`` (resp. ``post_gen``) turn the answer into "I don't know"; so do pre-generation
    scores below ``pre_gen_low_coverage`` when no sentence of the snippets holds half the question's words
    (:data:`~assistant_bridge.core.loop.LOW_COVERAGE`; ``None``: no such rule)."""

    pre_gen: float
    post_gen: float
    pre_gen_low_coverage: float | None = None

    def __post_init__(self) -> None:
        for name in ("pre_gen", "post_gen", "pre_gen_low_coverage"):
            value = getattr(self, name)
            if value is None and name == "pre_gen_low_coverage":
                continue
            if not isinstance(value, (int, float)) or not 0.0 <= float(value) <= 1.0:
                raise ConfigurationError(f"threshold {name} must be a number in [0, 1]", field=name)
