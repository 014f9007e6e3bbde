"""Independent model calls of one turn run side by side: onnxruntime and numpy's matrix products release the
GIL, so on a machine with two cores two calls take about the time of one.

A turn's work is mostly one thread's at a time (the extractive generator after the filters, the second look
after the first), while the other core waits; :func:`side_by_side` gives it half of the calls. At most
:data:`LANES` threads per turn (the caller's and one more), so that the concurrent requests of a served
instance, each with its own lanes, do not crowd the cores with more threads than they would use anyway.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

T = TypeVar("T")

# two, or one on a one-core machine
LANES = max(1, min(2, os.cpu_count() or 1))

_OCCUPIED = threading.local()


@contextlib.contextmanager
def occupied() -> Iterator[None]:
    """While inside, the calling thread's turn already keeps the other core busy (the pre-filter's dense
    similarity runs beside it): :func:`side_by_side` runs its calls in this thread alone."""
    before = getattr(_OCCUPIED, "depth", 0)
    _OCCUPIED.depth = before + 1
    try:
        yield
    finally:
        _OCCUPIED.depth = before


def free() -> bool:
    """Whether :func:`side_by_side` would use more than this thread (see :func:`occupied`)."""
    return LANES > 1 and not getattr(_OCCUPIED, "depth", 0)


def side_by_side(calls: Sequence[Callable[[], T]], name: str = "lane") -> list[T]:
    """The results of ``calls``, in order. Call ``j`` runs on lane ``j % n`` of ``n = min(LANES, len(calls))``
    lanes: lane 0 is the calling thread, the others are threads started for this call and joined before it
    returns (one lane inside :func:`occupied`). An exception of any call is raised here, in the calling thread,
    once every lane has stopped."""
    lanes = min(LANES, len(calls)) if free() else 1
    if lanes <= 1:
        return [call() for call in calls]
    results: list[T | None] = [None] * len(calls)
    errors: list[BaseException] = []

    def lane(first: int) -> None:
        for j in range(first, len(calls), lanes):
            try:
                results[j] = calls[j]()
            except BaseException as exc:  # noqa: BLE001 - re-raised in the calling thread
                errors.append(exc)
                return

    helpers = [threading.Thread(target=lane, args=(n,), name=f"{name}-{n}", daemon=True) for n in range(1, lanes)]
    for helper in helpers:
        helper.start()
    try:
        lane(0)
    finally:
        for helper in helpers:
            helper.join()
    if errors:
        raise errors[0]
    return results  # type: ignore[return-value]  # every slot is filled when no call raised


__all__ = ["LANES", "free", "occupied", "side_by_side"]
