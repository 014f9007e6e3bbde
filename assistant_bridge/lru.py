"""A small bounded, thread-safe map for the per-process caches of model outputs (cross-encoder logits, window
selections, query, passage and sentence vectors): the least recently used entry goes first once ``size`` is reached.

Callers compute a missing value outside the map (two threads may then compute the same one; the later one
wins, both are correct), unless they hold a lock of their own around ``get`` and ``put``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Lru(Generic[K, V]):
    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The value of ``key`` (now the most recently used), or ``None``."""
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def items(self) -> list[tuple[K, V]]:
        """A snapshot of the entries, least recently used first (to save a cache to disk)."""
        with self._lock:
            return list(self._items.items())

    def update(self, entries: dict[K, V]) -> None:
        """Put every entry of ``entries`` (to fill a cache from disk)."""
        for key, value in entries.items():
            self.put(key, value)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        """Whether ``key`` is kept (its recency unchanged)."""
        return key in self._items
