"""Fixtures for the agentic core: a tiny encyclopedia in the in-memory backend and search functions over it."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from assistant_bridge.backends.memory import MemoryBackend
from assistant_bridge.domain import Chunk, Ownership, Principal, Scope, SearchHit, SearchQuery
from assistant_bridge.embedders.base import HashingEmbedder
from assistant_bridge.errors import BackendUnavailable

PAGES = {
    "Arthur's Magazine": "Arthur's Magazine (1844–1846) was an American literary periodical published in "
    "Philadelphia in the 19th century.",
    "First for Women": "First for Women is a woman's magazine published by Bauer Media Group in the USA. "
    "The magazine was started in 1989.",
    "Women's magazines": "Many magazines are aimed at women, for example Good Housekeeping and Cosmopolitan.",
    "David Beckham": "David Beckham is an English former footballer. He joined Manchester United as a trainee "
    "after being recruited by Alex Ferguson in 1991.",
    "Alex Ferguson": "Sir Alex Ferguson is a Scottish former football manager. He managed Manchester United "
    "from 1986 to 2013.",
    "Manchester United F.C.": "Manchester United is a football club based in Old Trafford, Greater Manchester.",
    "Scott Derrickson": "Scott Derrickson is an American director, screenwriter and producer.",
    "Ed Wood": "Edward Davis Wood Jr. was an American filmmaker, actor and author.",
}

Search = Callable[[str, int], Sequence[SearchHit]]


def build_backend(pages: dict[str, str] = PAGES, *, chunks: Sequence[Chunk] = ()) -> MemoryBackend:
    emb = HashingEmbedder(32)
    backend = MemoryBackend(32)
    items = [
        Chunk(id=f"c-{i}", document_id=f"d-{i}", title=t, text=x, end_char=len(x), ownership=Ownership())
        for i, (t, x) in enumerate(pages.items())
    ] + list(chunks)
    backend.upsert(items, emb.embed_passages([f"{c.title} {c.text}" for c in items]))
    return backend


def search_on(backend: MemoryBackend, scope: Scope | None = None, calls: list[str] | None = None) -> Search:
    scope = scope or Scope(Principal("tester", admin=True))

    def search(text: str, limit: int) -> list[SearchHit]:
        if calls is not None:
            calls.append(text)
        return backend.search(SearchQuery(text=text, scope=scope, mode="lexical", limit=limit))

    return search


def failing(calls: list[str] | None = None) -> Search:
    def search(text: str, limit: int) -> list[SearchHit]:
        if calls is not None:
            calls.append(text)
        raise BackendUnavailable("search backend unreachable")

    return search


@pytest.fixture
def backend() -> MemoryBackend:
    return build_backend()


class Clock:
    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        self.now += 0.25
        return self.now
