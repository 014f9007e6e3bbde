"""Tiny in-memory filters for unit tests of code that uses a :class:`PreFilter` / :class:`PostFilter`.

Each fake returns ``fixed`` when one is given, otherwise a lexical-overlap score (share of content words
of the query, resp. the answer, found in the snippets). They need no model and never raise.
"""

from __future__ import annotations

from collections.abc import Sequence

from . import frozen_text as tx


def _coverage(needle: str, snippets: Sequence[str]) -> float:
    terms = set(tx.content_tokens(tx.clip(needle, tx.MAX_ANSWER_CHARS)))
    snips = tx.clean_snippets(snippets)
    if not terms or not snips:
        return 0.0
    found: set[str] = set()
    for s in snips:
        found.update(tx.content_tokens(s))
    return len(terms & found) / len(terms)


class FakePreFilter:
    """:param fixed: score to return for every call; ``None`` means lexical overlap of the query.
    :param vouched: what :meth:`second_look` answers: (snippet index, probability) pairs.
    :param covered: what :meth:`coverage` answers (the share of the query's words one sentence holds)."""

    def __init__(
        self, fixed: float | None = None, vouched: Sequence[tuple[int, float]] = (), covered: float = 1.0
    ) -> None:
        self.fixed = fixed
        self.vouched = list(vouched)
        self.covered = covered
        self.calls: list[tuple[str, tuple[str, ...]]] = []
        self.warmed = False

    def warm_up(self) -> None:
        self.warmed = True

    def score(self, query: str, snippets: Sequence[str]) -> float:
        self.calls.append((query, tuple(snippets)))
        return self.fixed if self.fixed is not None else _coverage(query, snippets)

    def second_look(self, query: str, snippets: Sequence[str]) -> list[tuple[int, float]]:
        return [(i, p) for i, p in self.vouched if 0 <= i < len(snippets)]

    def coverage(self, query: str, snippets: Sequence[str], titles: Sequence[str] = ()) -> float:
        return self.covered


class FakePostFilter:
    """:param fixed: score to return for every call; ``None`` means lexical overlap of the answer."""

    def __init__(self, fixed: float | None = None) -> None:
        self.fixed = fixed
        self.calls: list[tuple[str, tuple[str, ...], str]] = []
        self.warmed = False

    def warm_up(self) -> None:
        self.warmed = True

    def score(self, query: str, snippets: Sequence[str], answer: str) -> float:
        self.calls.append((query, tuple(snippets), answer))
        return self.fixed if self.fixed is not None else _coverage(answer, snippets)
