"""``assistant-bridge serve`` as an operator meets it, under real gunicorn: chunked bodies counted against the
limit as they stream, a clean stop within the graceful timeout with a half-sent request open, one log
format (JSON lines) from every component, and a typo in a feature section as a one-line error before
anything starts."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.reliability.served import REPO
from tests.served_process import serve_command, served_process

pytestmark = [pytest.mark.integration, pytest.mark.slow]
CONFIG = {"backend": {"kind": "memory"}, "embedder": {"kind": "hashing"}, "server": {"graceful_timeout": 8}}


def _serve(tmp_path: Path, config: dict[str, object]) -> tuple[list[str], str]:
    return serve_command(tmp_path, config)


def _chunked(base: str, path: str, body: bytes) -> tuple[int, bytes]:
    """POST ``body`` chunked; ``(0, b"")`` when the server answered and closed before the body was all sent
    and the reset lost its answer (what a server that stops reading at the limit may do)."""
    host, port = base.removeprefix("http://").split(":")
    out = b""
    with socket.create_connection((host, int(port)), timeout=30) as s:
        try:
            s.sendall(
                f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n".encode()
            )
            for i in range(0, len(body), 65536):
                part = body[i : i + 65536]
                s.sendall(b"%x\r\n" % len(part) + part + b"\r\n")
            s.sendall(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        try:
            while chunk := s.recv(65536):
                out += chunk
        except ConnectionResetError:
            pass
    if not out:
        return 0, b""
    return int(out.split(b" ", 2)[1]), out.partition(b"\r\n\r\n")[2]


def test_chunked_bodies_shutdown_and_logs(tmp_path: Path) -> None:
    cmd, base = _serve(tmp_path, CONFIG)
    log = tmp_path / "serve.log"
    with served_process(cmd, log, base + "/readyz", timeout=120, cwd=REPO) as proc:
        padded = b'{"title": "Padded", "text": "Valid JSON followed by spaces."}' + b" " * 3_000_000
        status, body = _chunked(base, "/v1/documents", padded)
        assert status in (413, 0), (status, body)
        if status:
            assert json.loads(body)["error"]["code"] == "payload_too_large"
        status, body = _chunked(base, "/v1/documents", b'{"title": "Small", "text": "A small chunked body."}')
        assert status == 201, body
        assert httpx.get(base + "/v1/documents").json()["total"] == 1  # the padded one was not stored

        host, port = base.removeprefix("http://").split(":")
        half = socket.create_connection((host, int(port)))
        half.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # a client that never finishes its request
        time.sleep(1)
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        took = time.monotonic() - started
        half.close()
    text = log.read_text()
    assert took < CONFIG["server"]["graceful_timeout"] + 1, took  # type: ignore[index]
    assert "SIGKILL" not in text
    lines = [line for line in text.splitlines() if line.strip()]
    not_json = [line for line in lines if not line.startswith("{")]
    assert not_json == [], not_json[:5]
    assert any(json.loads(line)["logger"].startswith("gunicorn") for line in lines)


def test_a_typo_in_a_feature_section_is_one_line_before_anything_starts(tmp_path: Path) -> None:
    cmd, _ = _serve(tmp_path, {**CONFIG, "message": {"threshhold": 0.3}})
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip() == "error: unknown setting message.threshhold", done.stderr
    assert "Traceback" not in done.stdout + done.stderr and "Listening at" not in done.stdout + done.stderr


def test_a_worker_killed_mid_document_leaves_nothing_once_a_new_worker_starts(tmp_path: Path) -> None:
    """gunicorn, the Milvus Lite side process, and a worker that SIGKILLs itself after writing the second
    batch of a document's chunks (``ASSISTANT_BRIDGE_FAULT``): the arbiter starts a new worker, whose warm-up
    recovery removes the orphan chunks; the document is then searchable by nobody and listed nowhere."""
    import os

    config = {"embedder": {"kind": "hashing"}, "ingest": {"batch_size": 4}, "server": {"graceful_timeout": 8}}
    cmd, base = _serve(tmp_path, config)
    env = {**os.environ, "ASSISTANT_BRIDGE_FAULT": "ingest.after_batch:2"}
    text = " ".join(f"Zebrafish sentence {i} about the quarterly travel handbook." for i in range(300))
    with served_process(cmd, tmp_path / "serve.log", base + "/readyz", timeout=180, cwd=REPO, env=env):
        with pytest.raises(httpx.HTTPError):  # the worker dies under the request
            httpx.post(base + "/v1/documents", json={"title": "Handbook", "text": text}, timeout=60)
        found = None
        for _ in range(120):  # the new worker warms up (and recovers) on its first request
            try:
                found = httpx.post(
                    base + "/v1/search",
                    timeout=10,
                    json={"query": "zebrafish quarterly handbook", "metadata": {"mode": "lexical", "limit": 5}},
                )
                if found.status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        assert found is not None and found.status_code == 200, found
        assert found.json()["search_results"] == []
        assert httpx.get(base + "/v1/documents").json()["total"] == 0
    assert '"ingest.recovered' in (tmp_path / "serve.log").read_text()
