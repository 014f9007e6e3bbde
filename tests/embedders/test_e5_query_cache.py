"""The default embedder keeps its last query vectors: a turn embeds its query for the search and again for the
pre-filter's dense similarity; the second costs nothing. No model: the engine is a counting stand-in."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from assistant_bridge.embedders import e5
from assistant_bridge.embedders.e5 import E5Embedder

pytestmark = pytest.mark.unit


class Counting:
    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.full((len(texts), 4), float(len(self.calls)), dtype=np.float32)


def embedder() -> tuple[E5Embedder, Counting]:
    e = E5Embedder()
    engine = Counting()
    e._impl = engine  # noqa: SLF001 - warm_up() sees an engine and loads nothing
    return e, engine


def test_a_query_is_embedded_once_and_its_vector_cannot_be_changed_by_a_caller() -> None:
    e, engine = embedder()
    first = e.embed_queries(["reset password"])
    first[0, 0] = 99.0  # a caller writing into its copy
    again = e.embed_queries(["reset password"])
    assert engine.calls == [["reset password"]]
    assert again.tolist() == [[1.0] * 4]


def test_batches_are_not_kept_and_the_oldest_query_goes_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(e5, "QUERY_CACHE", 2)
    e, engine = embedder()
    e.embed_queries(["a", "b"])
    e.embed_queries(["a"])
    assert len(engine.calls) == 2  # the batch did not fill the cache
    e.embed_queries(["b"])
    e.embed_queries(["c"])  # "a" goes
    e.embed_queries(["b"])
    assert len(engine.calls) == 4
    e.embed_queries(["a"])
    assert len(engine.calls) == 5
