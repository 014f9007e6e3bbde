"""Fault injection for the crash tests: a named point where the process kills itself (``SIGKILL``, as
``kill -9`` would), when ``ASSISTANT_BRIDGE_FAULT`` names that point.

``ASSISTANT_BRIDGE_FAULT=ingest.after_batch`` kills the process after it has written the first batch of a
document's chunks; ``ingest.after_batch:3`` after the third. The variable is read once per process; unset
(always, in production) a point costs one dictionary look-up.

Points: ``ingest.after_batch`` and ``ingest.after_stage`` (after a new document's chunks are staged for lexical
search, before they are embedded), both in :meth:`assistant_bridge.ingest.service.Ingestor._write`.
"""

from __future__ import annotations

import os
import signal
from functools import lru_cache

ENV = "ASSISTANT_BRIDGE_FAULT"
_hits: dict[str, int] = {}


@lru_cache(maxsize=1)
def _armed() -> tuple[str, int] | None:
    raw = os.environ.get(ENV, "")
    if not raw:
        return None
    name, _, count = raw.partition(":")
    return name, int(count) if count.isdigit() else 1


def point(name: str) -> None:
    armed = _armed()
    if armed is None or armed[0] != name:
        return
    _hits[name] = _hits.get(name, 0) + 1
    if _hits[name] >= armed[1]:
        os.kill(os.getpid(), signal.SIGKILL)
