"""Which process is doing a piece of work, and whether it still runs: one id format for every record that a
worker leaves in the shared store (tool executions, ingestion intents).

An id is ``host:pid:start``, where ``start`` is the process's start time in clock ticks since boot (from
``/proc``; ``0`` where there is none). With it a new process that happens to get a dead one's pid (common
in containers, where the pids of a restarted service repeat) is not mistaken for it.
"""

from __future__ import annotations

import os
import socket
from functools import lru_cache


def _start_ticks(pid: int) -> int | None:
    """The process's start time (field 22 of ``/proc/<pid>/stat``); None when it does not exist, 0 when
    the platform has no ``/proc``."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except FileNotFoundError:
        return None if os.path.isdir("/proc/self") else 0
    except OSError:
        return 0
    fields = stat[stat.rfind(b")") + 2 :].split()
    return int(fields[19]) if len(fields) > 19 and fields[19].isdigit() else 0


@lru_cache(maxsize=8)
def _id_of(pid: int) -> str:
    return f"{socket.gethostname()}:{pid}:{_start_ticks(pid) or 0}"


def worker_id() -> str:
    """This process's id (computed once per process: a forked child has its own pid, so its own id)."""
    return _id_of(os.getpid())


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def worker_alive(worker: str) -> bool | None:
    """Whether the process of ``worker`` (an id of :func:`worker_id`, or the older ``host:pid``) still runs:
    None when it ran on another host (this one cannot tell)."""
    parts = worker.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        host, pid, start = parts[0], int(parts[1]), int(parts[2])
    else:
        host, _, raw = worker.rpartition(":")
        if not raw.isdigit():
            return None
        pid, start = int(raw), 0
    if host != socket.gethostname():
        return None
    if not _pid_alive(pid):
        return False
    ticks = _start_ticks(pid)
    return ticks is not None and (start == 0 or ticks in (0, start))
