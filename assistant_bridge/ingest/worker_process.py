"""The ingestion worker process that ``serve`` runs beside gunicorn, restarted when it exits.

The process is ``assistant-bridge ingest-worker`` (:func:`assistant_bridge.cli.cmd_ingest_worker`): it works
the durable queue (:mod:`assistant_bridge.ingest.queue`) at a lower CPU priority (``ingest.worker_nice``), so
embedding a large upload takes the cores searches leave idle. If it dies, the supervisor thread here starts a
new one (waiting 1, 2, 4 … up to 30 s between failed starts); the new process puts the dead one's job back in
the queue. On shutdown it gets SIGTERM, and SIGKILL after ``grace`` seconds: a job cut short is queued again at
the next start, and its half-written chunks are removed by the recovery pass.
"""

from __future__ import annotations

import logging
import subprocess
import threading
from collections.abc import Mapping, Sequence

log = logging.getLogger(__name__)


class WorkerProcess:
    def __init__(
        self, cmd: Sequence[str], env: Mapping[str, str], *, interval: float = 1.0, max_delay: float = 30.0
    ) -> None:
        self.cmd, self.env = list(cmd), dict(env)
        self.interval, self.max_delay = interval, max_delay
        self.proc: subprocess.Popen[bytes] | None = None
        self.restarts = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> WorkerProcess:
        self._spawn()
        self._thread = threading.Thread(target=self._watch, name="ingest-worker-supervisor", daemon=True)
        self._thread.start()
        return self

    def _spawn(self) -> None:
        self.proc = subprocess.Popen(self.cmd, env=self.env)
        log.info("ingest.worker.started", extra={"pid": self.proc.pid})

    def _watch(self) -> None:
        delay = self.interval
        while not self._stop.wait(self.interval):
            proc = self.proc
            if proc is None or proc.poll() is None:
                delay = self.interval
                continue
            log.warning(
                "ingest.worker.exited", extra={"pid": proc.pid, "returncode": proc.returncode, "restart_in_s": delay}
            )
            if self._stop.wait(delay):
                return
            try:
                self._spawn()
                self.restarts += 1
            except OSError as exc:
                log.error("ingest.worker.start_failed", extra={"reason": str(exc)})
            delay = min(delay * 2, self.max_delay)

    def stop(self, grace: float = 10.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
