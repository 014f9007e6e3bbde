"""Runs asynchronous tool executions in a bounded thread pool of the worker that accepted them, and wakes
the streams of this worker when an execution sends an event (streams of other workers poll the store).

The pool is built on first use, after gunicorn has forked, and rebuilt if the process id changes. When
``threads + max_queued`` executions are already running or waiting, :meth:`ExecutionRunner.acquire`
raises :class:`~assistant_bridge.errors.RateLimited` (429) instead of queueing without bound.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from assistant_bridge.errors import RateLimited

log = logging.getLogger(__name__)


class ExecutionRunner:
    def __init__(self, threads: int = 2, max_queued: int = 32) -> None:
        self.threads = threads
        self.max_queued = max_queued
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._pid = -1
        self._inflight = 0
        self._changed = threading.Condition()
        self._version = 0

    @property
    def inflight(self) -> int:
        return self._inflight

    def acquire(self) -> None:
        """Reserve a place for one execution.

        :raises RateLimited: when the pool and its queue are full.
        """
        with self._lock:
            if self._inflight >= self.threads + self.max_queued:
                raise RateLimited("too many tool executions in progress; retry later", retry_after=1)
            self._inflight += 1

    def release(self) -> None:
        with self._lock:
            self._inflight = max(0, self._inflight - 1)

    def run(self, job: Callable[[], None]) -> None:
        """Start ``job`` (whose place :meth:`acquire` reserved) on the pool; the place is freed after it."""

        def wrapper() -> None:
            try:
                job()
            except Exception:  # the job reports its own failures; this only keeps the pool alive
                log.exception("tools.runner.job_failed")
            finally:
                self.release()
                self.notify()

        with self._lock:
            if self._pool is None or self._pid != os.getpid():
                self._pool = ThreadPoolExecutor(max_workers=self.threads, thread_name_prefix="tool-exec")
                self._pid = os.getpid()
            pool = self._pool
        pool.submit(wrapper)

    def notify(self) -> None:
        """Wake every stream of this worker waiting in :meth:`wait`."""
        with self._changed:
            self._version += 1
            self._changed.notify_all()

    def version(self) -> int:
        with self._changed:
            return self._version

    def wait(self, seen: int, timeout: float) -> int:
        """Block until :meth:`notify` was called after version ``seen`` or ``timeout`` passed; returns the
        current version."""
        with self._changed:
            if self._version == seen:
                self._changed.wait(timeout)
            return self._version

    def shutdown(self, wait: bool = True) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=wait)
