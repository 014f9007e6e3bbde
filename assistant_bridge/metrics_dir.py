"""Where the gunicorn workers keep their Prometheus samples (``PROMETHEUS_MULTIPROC_DIR``).

This module imports nothing from ``prometheus_client`` on purpose: the library picks single- or
multi-process mode once, when it is first imported, from ``PROMETHEUS_MULTIPROC_DIR``. ``serve`` must set
the variable before anything imports :mod:`assistant_bridge.metrics`; otherwise every worker keeps its
samples to itself and ``/metrics``, which reads the directory, shows none of them.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def multiprocess_dir(fallback: Path) -> Path:
    """A new, empty directory for the workers' metric files, on a RAM file system when there is one.

    prometheus_client maps these files into memory and grows them sparsely; a write to a mapped page that
    the file system cannot back (a full disk) kills the worker with SIGBUS. So they live apart from the data
    directory's disk: in ``/dev/shm`` when writable, else in the system's temporary directory, and only when
    neither can be written (a read-only root file system) under ``fallback``.
    """
    shm = Path("/dev/shm")
    bases = [str(shm)] if shm.is_dir() and os.access(shm, os.W_OK) else []
    for base in [*bases, None]:
        try:
            return Path(tempfile.mkdtemp(prefix="assistant-bridge-metrics-", dir=base))
        except OSError:
            continue
    fallback.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="metrics-", dir=fallback))
