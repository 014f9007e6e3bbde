"""Prometheus metrics. Under gunicorn, ``serve`` sets ``PROMETHEUS_MULTIPROC_DIR`` so every worker's
samples are aggregated at ``/metrics``.

Other modules record through the helpers here (``observe_stage``, ``count_idk``, ``count_backend_error``)
so metric names are defined once.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest

REQUESTS = Counter("assistant_bridge_http_requests_total", "HTTP requests", ["route", "method", "status"])
LATENCY = Histogram(
    "assistant_bridge_http_request_duration_seconds", "HTTP request latency", ["route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)  # fmt: skip
STAGES = Histogram(
    "assistant_bridge_stage_duration_seconds", "Duration of one stage of a turn (search, pre_filter, "
    "generation, post_filter, ...)", ["stage"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)  # fmt: skip
IDK = Counter("assistant_bridge_idk_total", "\"I don't know\" answers by reason", ["reason"])
OUTCOMES = Counter("assistant_bridge_answer_outcomes_total", "Conversational search outcomes", ["outcome"])
BACKEND_ERRORS = Counter("assistant_bridge_backend_errors_total", "Errors from outside systems", ["component", "code"])
RATE_LIMITED = Counter("assistant_bridge_rate_limited_total", "Requests refused by the per-key rate limit", ["key"])


def observe_stage(stage: str, seconds: float) -> None:
    STAGES.labels(stage=stage).observe(max(0.0, seconds))


def count_idk(reason: str) -> None:
    IDK.labels(reason=reason).inc()


def count_outcome(outcome: str) -> None:
    OUTCOMES.labels(outcome=outcome).inc()


def count_backend_error(component: str, code: str) -> None:
    BACKEND_ERRORS.labels(component=component, code=code).inc()


def render() -> tuple[bytes, str]:
    """The exposition text: aggregated over workers in multiprocess mode, else this process's registry."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(), CONTENT_TYPE_LATEST


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
