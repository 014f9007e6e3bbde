"""A check that work grows linearly with its input, for the tests that guard against quadratic or
backtracking blow-ups. It compares two sizes of the same work measured in the same test, so it holds on a slow
or loaded machine, unlike a fixed time limit; speed itself is measured by the scripts in ``bench/``."""

from __future__ import annotations

import time
from collections.abc import Callable

FACTOR = 10  # the large input is this many times the small one
ALLOWED = 4.0  # times the linear expectation: a quadratic blow-up is FACTOR times over it


def _best_seconds(run: Callable[[], object], repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def assert_linear(run: Callable[[int], object], size: int) -> None:
    """``run(n)`` does work proportional to ``n``: ``run(FACTOR * size)`` takes at most ``ALLOWED * FACTOR``
    times ``run(size)`` (best of five each; a millisecond of slack for timer noise on tiny inputs)."""
    small = _best_seconds(lambda: run(size))
    large = _best_seconds(lambda: run(FACTOR * size))
    assert large <= ALLOWED * FACTOR * small + 0.001, (
        f"{FACTOR}× the input took {large / max(small, 1e-9):.0f}× the time ({small * 1000:.2f} ms → "
        f"{large * 1000:.2f} ms): not linear"
    )
