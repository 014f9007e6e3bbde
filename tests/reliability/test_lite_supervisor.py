"""The Milvus Lite side-process supervisor, with a stand-in process (``sleep``) instead of Milvus Lite."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.backends.lite_supervisor import LiteSupervisor
from assistant_bridge.errors import BackendUnavailable

pytestmark = pytest.mark.unit


class FakeServer:
    """The part of LiteServer the supervisor uses; ``fail`` makes the next starts fail."""

    def __init__(self, fail: int = 0) -> None:
        self.port = 1
        self.proc: subprocess.Popen[bytes] | None = None
        self.fail = fail
        self.starts = 0

    def start(self) -> str:
        self.starts += 1
        if self.fail > 0:
            self.fail -= 1
            raise BackendUnavailable("milvus-lite server exited at start (code 1)")
        self.proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        return "http://127.0.0.1:1"

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(5)

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)


@pytest.fixture
def server() -> Any:
    s = FakeServer()
    s.start()
    yield s
    s.close()


def test_a_running_process_is_left_alone(server: FakeServer) -> None:
    sup = LiteSupervisor(server)  # type: ignore[arg-type]
    pid = server.proc.pid if server.proc else None
    assert sup.check_once() is False
    assert server.proc is not None and server.proc.pid == pid and sup.restarts == 0


def test_an_exited_process_is_restarted_on_the_same_port(server: FakeServer) -> None:
    seen: list[int] = []
    sup = LiteSupervisor(server, on_restart=seen.append)  # type: ignore[arg-type]
    old = server.proc.pid if server.proc else None
    server.kill()
    assert sup.check_once() is True
    assert server.proc is not None and server.proc.poll() is None and server.proc.pid != old
    assert seen == [server.proc.pid] and sup.restarts == 1 and server.port == 1


def test_a_failed_restart_raises_and_the_next_check_tries_again(server: FakeServer) -> None:
    sup = LiteSupervisor(server)  # type: ignore[arg-type]
    server.kill()
    server.fail = 1
    with pytest.raises(BackendUnavailable):
        sup.check_once()
    assert server.proc is None  # nothing running: the next round starts one
    assert sup.check_once() is True and server.proc is not None and server.proc.poll() is None


def test_the_thread_restarts_with_backoff_and_stops(server: FakeServer, caplog: Any) -> None:
    sup = LiteSupervisor(server, interval=0.05, max_delay=0.2).start()  # type: ignore[arg-type]
    try:
        server.fail = 2
        server.kill()
        deadline = time.monotonic() + 10
        while sup.restarts < 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert sup.restarts == 1 and server.starts == 4  # the first start, two failures, one success
        assert server.proc is not None and server.proc.poll() is None
        assert any("milvus_lite.restart_failed" in r.getMessage() for r in caplog.records)
    finally:
        sup.stop()
    assert sup._thread is not None and not sup._thread.is_alive()
    server.kill()
    time.sleep(0.15)
    assert sup.restarts == 1  # a stopped supervisor restarts nothing


def test_serve_cleans_up_only_in_its_own_process(tmp_path: Path, monkeypatch: Any) -> None:
    """gunicorn workers leave ``cmd_serve`` through its ``finally`` (SystemExit after the fork); they must not
    delete the metric files of the other workers (nor stop the side process)."""
    import argparse
    import os

    from assistant_bridge import cli
    from assistant_bridge.web import server

    monkeypatch.setenv("ASSISTANT_BRIDGE_BACKEND__KIND", "memory")
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", "")
    seen: dict[str, Any] = {}

    def fake_gunicorn(settings: Any) -> int:
        prom = Path(os.environ["PROMETHEUS_MULTIPROC_DIR"])
        seen["prom"] = prom
        pid = os.fork()
        if pid == 0:  # a worker that exits
            raise SystemExit(0)
        os.waitpid(pid, 0)
        seen["after_worker_exit"] = prom.is_dir()
        return 0

    monkeypatch.setattr(server, "run_gunicorn", fake_gunicorn)
    args = argparse.Namespace(
        config=None, data_dir=str(tmp_path / "d"), host=None, port=None, workers=None, sample=False
    )
    try:
        assert cli.cmd_serve(args) == 0
    except SystemExit:
        os._exit(0)  # the forked "worker" ends here, after cmd_serve's finally ran in it
    assert seen["after_worker_exit"] is True
    assert not seen["prom"].exists()  # the serve process removed it on the way out
    assert not str(seen["prom"]).startswith(str(tmp_path / "d"))  # metric files are not in the data directory
