"""A managed ``milvus-lite server`` side process.

Milvus Lite locks its data directory to one process, so when several gunicorn workers (or the ``ingest``
command next to a running service) share the embedded default, one side process owns the directory and
everyone talks to it over gRPC on loopback. ``serve`` starts it, records ``milvus-lite.json`` (pid, port) in
the data directory, and stops it on exit; other commands find it through that file.
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from assistant_bridge.errors import BackendUnavailable

log = logging.getLogger(__name__)
STATE_FILE = "milvus-lite.json"


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def running_uri(data_dir: Path) -> str | None:
    """The URI of a live side process that owns ``data_dir``, if any."""
    state = data_dir / STATE_FILE
    try:
        info = json.loads(state.read_text())
    except (OSError, ValueError):
        return None
    if _alive(int(info.get("pid", -1))) and _port_open(int(info.get("port", 0))):
        return f"http://127.0.0.1:{int(info['port'])}"
    return None


def free_port(preferred: int = 0) -> int:
    """``preferred`` if nothing listens on it, else a port the OS just gave out on loopback (0: always the
    latter)."""
    if preferred and not _port_open(preferred):
        return preferred
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


_SERIOUS = re.compile(rb"(?i)\b(?:warn(?:ing)?|error|fatal|critical|traceback|exception)\b")


def _relay_output(proc: subprocess.Popen[bytes], log_path: Path) -> None:
    """Copy the side process's output to ``milvus-lite.log`` (its whole story, for diagnosis) and into the
    service's own JSON log as ``milvus_lite.output`` events: warnings and errors at WARNING, the rest (its
    routine INFO chatter) at DEBUG, so that ``serve`` speaks one format."""
    assert proc.stdout is not None
    with open(log_path, "ab") as out:
        for raw in iter(proc.stdout.readline, b""):
            out.write(raw)
            out.flush()
            line = raw.decode("utf-8", "replace").rstrip()
            if line:
                level = logging.WARNING if _SERIOUS.search(raw) else logging.DEBUG
                log.log(level, "milvus_lite.output", extra={"pid": proc.pid, "line": line[:2000]})


class LiteServer:
    def __init__(self, data_dir: Path, port: int = 19531, startup_timeout: float = 60.0) -> None:
        self.data_dir = data_dir
        self.db_path = data_dir / "milvus.db"
        self.port = free_port(port)
        self.startup_timeout = startup_timeout
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> str:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        log_path = self.data_dir / "milvus-lite.log"
        cmd = [
            sys.executable,
            "-m",
            "milvus_lite",
            "server",
            "--data-dir",
            str(self.db_path),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
        ]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        threading.Thread(
            target=_relay_output, args=(self.proc, log_path), name="milvus-lite-output", daemon=True
        ).start()
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                tail = log_path.read_text(errors="replace")[-800:]
                raise BackendUnavailable(f"milvus-lite server exited at start (code {self.proc.returncode}): {tail}")
            if _port_open(self.port):
                (self.data_dir / STATE_FILE).write_text(json.dumps({"pid": self.proc.pid, "port": self.port}))
                log.info("milvus_lite.started", extra={"pid": self.proc.pid, "port": self.port})
                return self.uri
            time.sleep(0.1)
        self.stop()
        raise BackendUnavailable(f"milvus-lite server did not open port {self.port} within {self.startup_timeout}s")

    def stop(self, timeout: float = 20.0) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)  # a clean stop flushes the memtable to Parquet
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        try:
            (self.data_dir / STATE_FILE).unlink()
        except FileNotFoundError:
            pass
        self.proc = None
