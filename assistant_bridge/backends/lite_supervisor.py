"""Restarts the managed ``milvus-lite server`` side process when it exits.

``serve`` runs one side process that every gunicorn worker talks to (:mod:`.lite_server`). If it dies
(killed, out of memory, a crash), searches and ingestion answer 503 ``backend_unavailable`` and ``/readyz``
turns false. The supervisor, a daemon thread in the ``serve`` process, notices the exit within ``interval``
seconds and starts a new side process on the same data directory and port; the workers' Milvus clients
reconnect on their next call, so the service recovers without restarting gunicorn. Failed restarts are
retried with a doubling delay (up to ``max_delay``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from assistant_bridge.backends.lite_server import LiteServer
from assistant_bridge.errors import BackendUnavailable

log = logging.getLogger(__name__)


class LiteSupervisor:
    """Watch ``server`` and restart it when its process has exited.

    :param interval: seconds between two checks.
    :param max_delay: the longest wait between two failed restarts.
    :param on_restart: called with the new process id after each successful restart (tests, metrics).
    """

    def __init__(
        self,
        server: LiteServer,
        *,
        interval: float = 1.0,
        max_delay: float = 30.0,
        on_restart: Callable[[int], None] | None = None,
    ) -> None:
        self.server = server
        self.interval = interval
        self.max_delay = max_delay
        self.on_restart = on_restart
        self.restarts = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> LiteSupervisor:
        self._thread = threading.Thread(target=self._run, name="milvus-lite-supervisor", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop watching (before the side process is stopped on purpose)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def exited(self) -> bool:
        """True when the side process is gone (exited, or a failed start left none)."""
        proc = self.server.proc
        return proc is None or proc.poll() is not None

    def check_once(self) -> bool:
        """Restart the side process if it has exited. Returns True when it was restarted.

        :raises BackendUnavailable: when the new process does not start.
        """
        if not self.exited():
            return False
        proc, self.server.proc = self.server.proc, None
        log.warning("milvus_lite.exited", extra={"code": proc.returncode if proc else None, "port": self.server.port})
        t0 = time.monotonic()
        self.server.start()
        self.restarts += 1
        pid = self.server.proc.pid if self.server.proc is not None else -1
        log.warning(
            "milvus_lite.restarted",
            extra={
                "pid": pid,
                "port": self.server.port,
                "ms": round((time.monotonic() - t0) * 1000),
                "restarts": self.restarts,
            },
        )
        if self.on_restart is not None:
            self.on_restart(pid)
        return True

    def _run(self) -> None:
        delay = self.interval
        while not self._stop.wait(delay):
            try:
                self.check_once()
                delay = self.interval
            except BackendUnavailable as exc:
                delay = min(self.max_delay, max(delay, self.interval) * 2)
                log.error("milvus_lite.restart_failed", extra={"retry_in_s": round(delay), "reason": exc.message[:200]})
            except Exception as exc:  # keep watching whatever happens; the next round tries again
                delay = min(self.max_delay, max(delay, self.interval) * 2)
                log.error(
                    "milvus_lite.supervisor_error", extra={"type": type(exc).__name__, "retry_in_s": round(delay)}
                )
