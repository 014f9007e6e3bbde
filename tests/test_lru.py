"""The bounded map behind the per-process caches of model outputs."""

from __future__ import annotations

import pytest

from assistant_bridge.lru import Lru

pytestmark = pytest.mark.unit


def test_the_least_recently_used_entry_goes_first() -> None:
    cache: Lru[str, int] = Lru(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "a" is now the most recent
    cache.put("c", 3)
    assert cache.get("b") is None and cache.get("a") == 1 and cache.get("c") == 3
    cache.put("a", 4)  # replacing counts as a use
    cache.put("d", 5)
    assert cache.get("c") is None and cache.get("a") == 4
    assert len(cache) == 2
    cache.clear()
    assert len(cache) == 0 and cache.get("a") is None


def test_items_and_update_round_trip_a_cache_saved_to_disk() -> None:
    lru: Lru[str, int] = Lru(3)
    lru.update({"a": 1, "b": 2})
    lru.get("a")  # now the most recent
    assert lru.items() == [("b", 2), ("a", 1)]
    other: Lru[str, int] = Lru(3)
    other.update(dict(lru.items()))
    assert other.get("a") == 1 and other.get("b") == 2
