"""Run ``assistant-bridge serve`` for a test: free loopback ports, a config file, captured logs, the process
tree (gunicorn arbiter, workers, the Milvus Lite side process), a small tmpfs for the data directory when the
tests run as root, and an OpenAI-compatible LLM stand-in that can be slowed down."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.served_process import free_ports, stop, wait_ready

REPO = Path(__file__).resolve().parents[2]


def children(pid: int) -> dict[int, str]:
    """``pid -> command line`` of the direct children of ``pid`` (from /proc)."""
    out: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == pid:
                out[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue
    return out


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def mount_tmpfs(path: Path, size_mb: int) -> bool:
    """Mount a tmpfs of ``size_mb`` at ``path`` (root only). Returns False when that is not possible."""
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        return False
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(path)], capture_output=True)
    return done.returncode == 0


def umount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], capture_output=True)


def fill_disk(path: Path) -> Path:
    """Write a file under ``path`` until the file system is full; returns it (delete it to free the space)."""
    filler = path / "filler.bin"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for size in (1 << 20, 4096, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                continue
    finally:
        os.close(fd)
    return filler


class SlowLLM:
    """An OpenAI-compatible ``/v1/chat/completions`` that answers after ``delay`` seconds; ``received`` is
    set when a request arrives."""

    def __init__(self, answer: str = "Open the self-service portal and choose Forgot password [1].") -> None:
        self.delay = 0.0
        self.received = threading.Event()
        llm = self
        body = json.dumps(
            {
                "id": "c1",
                "object": "chat.completion",
                "model": "m",
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": answer}}],
            }
        ).encode()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                llm.received.set()
                time.sleep(llm.delay)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Served:
    """One ``assistant-bridge serve --sample`` process with its logs in ``work/serve.log``."""

    def __init__(self, work: Path, data: Path, config: dict[str, Any] | None = None, workers: int = 2) -> None:
        self.work = work
        self.data = data
        self.port, lite_port = free_ports(2)
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = work / "serve.log"
        cmd = [
            sys.executable,
            "-m",
            "assistant_bridge",
            "serve",
            "--sample",
            "--workers",
            str(workers),
            "--port",
            str(self.port),
            "--data-dir",
            str(data),
        ]
        if config is not None:
            path = work / "config.json.yaml"
            path.write_text(json.dumps(config))  # JSON is YAML
            cmd += ["--config", str(path)]
        env = {**os.environ, "ASSISTANT_BRIDGE_BACKEND__LITE_PORT": str(lite_port), "PYTHONUNBUFFERED": "1"}
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            cmd, cwd=REPO, stdout=self._log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )

    def wait_ready(self, timeout: float = 300) -> float:
        """Seconds until ``/readyz`` answered 200."""
        return wait_ready(self.proc, self.base + "/readyz", self.log_path, timeout)

    def log_text(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")

    def lite_pid(self) -> int:
        return int(json.loads((self.data / "milvus-lite.json").read_text())["pid"])

    def _kill_lite(self) -> None:
        try:
            os.kill(self.lite_pid(), signal.SIGKILL)
        except (OSError, ValueError):
            pass

    def worker_pids(self) -> set[int]:
        return {
            pid
            for pid, cmd in children(self.proc.pid).items()
            if "milvus_lite" not in cmd and "ingest-worker" not in cmd
        }

    def stop(self, timeout: float = 60) -> int | None:
        """SIGTERM to the arbiter alone (it stops its workers and the side process); after ``timeout`` s SIGKILL
        to the process group and to the side process. Returns the exit code."""
        if stop(self.proc, group=False, timeout=timeout):
            self._kill_lite()
        self._log.close()
        return self.proc.returncode
