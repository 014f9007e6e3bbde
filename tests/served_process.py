"""A server process for a test (``assistant-bridge serve``, gunicorn): started in its own process group with
its output in a log file, polled until it is ready, then always stopped and reaped.

A server that exits before it is ready, or is not ready by the deadline, fails the test with the end of its
log, so the reason is in the test report and not only in a temporary directory."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx

LOG_TAIL_CHARS = 3000


def free_ports(count: int) -> list[int]:
    """``count`` distinct loopback ports the OS just gave out, each held until the last is chosen: two calls of
    ``free_port`` in a row may return the same port, and a test's two servers (the service and its Milvus Lite
    side process) would then collide ("Address already in use")."""
    with ExitStack() as held:
        sockets = [held.enter_context(socket.socket()) for _ in range(count)]
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in sockets]


def log_tail(path: Path, chars: int = LOG_TAIL_CHARS) -> str:
    """The last ``chars`` characters of the log at ``path``."""
    return path.read_text(errors="replace")[-chars:]


def wait_ready(
    proc: subprocess.Popen[bytes],
    ready: str | Callable[[], bool],
    log_path: Path,
    timeout: float,
    interval: float = 0.5,
) -> float:
    """Poll ``ready`` until it holds.

    :param ready: a URL that must answer 200, or a check that returns True once the server is ready (an
        ``httpx.HTTPError`` it raises counts as "not yet").
    :returns: the seconds it took.
    :raises AssertionError: with the end of the log, when the process exits first or ``timeout`` passes.
    """
    check = _answers_200(ready) if isinstance(ready, str) else ready
    what = f"GET {ready} answering 200" if isinstance(ready, str) else (check.__doc__ or check.__name__).strip()
    started = time.monotonic()
    last = "no attempt"
    while True:
        code = proc.poll()
        if code is not None:
            raise AssertionError(
                f"the server exited with code {code} before it was ready (waiting for {what}); "
                f"end of {log_path}:\n{log_tail(log_path)}"
            )
        try:
            if check():
                return time.monotonic() - started
            last = "not ready"
        except httpx.HTTPError as exc:
            last = f"{type(exc).__name__}: {exc}"
        if time.monotonic() - started > timeout:
            raise AssertionError(
                f"the server was not ready after {timeout:.0f} s (waiting for {what}; last try: "
                f"{last}); end of {log_path}:\n{log_tail(log_path)}"
            )
        time.sleep(interval)


def stop(proc: subprocess.Popen[bytes], *, group: bool = True, timeout: float = 30) -> bool:
    """SIGTERM, then SIGKILL to the whole process group if the process has not exited after ``timeout`` s.

    :param group: send SIGTERM to every process of the group (as a service manager stopping a unit does), or,
        when False, to the process alone (the gunicorn arbiter then stops its workers itself).
    :returns: whether the process had to be killed.
    """
    if group:
        _signal_group(proc.pid, signal.SIGTERM)  # also when the leader is gone but workers or side processes are not
    elif proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
    else:
        return False
    try:
        proc.wait(timeout)
        return False
    except subprocess.TimeoutExpired:
        _signal_group(proc.pid, signal.SIGKILL)
        proc.wait(10)
        return True


@contextmanager
def served_process(
    cmd: Sequence[str],
    log_path: Path,
    ready: str | Callable[[], bool],
    *,
    timeout: float,
    interval: float = 0.5,
    stop_timeout: float = 30,
    stop_group: bool = True,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``cmd`` with its output in ``log_path``, wait until ``ready`` (see :func:`wait_ready`), yield the
    process, and on the way out :func:`stop` it (``stop_group``, ``stop_timeout``) and close the log."""
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            wait_ready(proc, ready, log_path, timeout, interval)
            yield proc
        finally:
            stop(proc, group=stop_group, timeout=stop_timeout)


def _answers_200(url: str) -> Callable[[], bool]:
    def check() -> bool:
        return httpx.get(url, timeout=5).status_code == 200

    return check


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:  # every process of the group has exited already
        pass


def serve_command(work: Path, config: Mapping[str, object], *, workers: int = 1) -> tuple[list[str], str]:
    """``assistant-bridge serve`` over ``config`` (written to ``work/config.yaml``) on a free loopback port,
    its data in ``work/data``: the command and the base URL."""
    import json
    import sys

    (port,) = free_ports(1)
    (work / "config.yaml").write_text(json.dumps(config))  # JSON is YAML
    cmd = [
        sys.executable,
        "-m",
        "assistant_bridge",
        "serve",
        "--workers",
        str(workers),
        "--port",
        str(port),
        "--data-dir",
        str(work / "data"),
        "--config",
        str(work / "config.yaml"),
    ]
    return cmd, f"http://127.0.0.1:{port}"
