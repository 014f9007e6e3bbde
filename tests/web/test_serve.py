"""The README's first command, for real: ``assistant-bridge serve --sample`` starts gunicorn with two
workers on a managed ``milvus-lite server`` side process, ingests the shipped sample corpus with the
default multilingual embedder, and answers ``/v1/search`` from any worker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest

from assistant_bridge.backends.lite_server import free_port

pytestmark = [pytest.mark.integration, pytest.mark.slow]



@pytest.fixture(scope="module")
def server(tmp_path_factory: Any) -> Iterator[str]:
    data = tmp_path_factory.mktemp("serve")
    port = free_port()
    env = {**os.environ, "ASSISTANT_BRIDGE_BACKEND__LITE_PORT": str(free_port())}
    log = open(data / "serve.log", "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "assistant_bridge", "serve", "--sample", "--workers", "2", "--port", str(port),
         "--data-dir", str(data / "d")],
        stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise AssertionError((data / "serve.log").read_text()[-3000:])
            try:
                if httpx.get(f"{base}/readyz", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        else:
            raise AssertionError("service did not become ready: " + (data / "serve.log").read_text()[-3000:])
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()
    assert not (Path(data / "d") / "milvus-lite.json").exists(), "side process state left behind"


@pytest.mark.parametrize(
    "query, expected",
    [
        ("How do I reset my password?", "password"),
        ("Comment me faire rembourser mes frais ?", "frais"),
        ("経費精算の締め切りはいつですか", "経費"),
    ],
)
def test_sample_corpus_answers_in_three_languages(server: str, query: str, expected: str) -> None:
    resp = httpx.post(f"{server}/v1/search", json={"query": query, "metadata": {"limit": 3}}, timeout=30)
    assert resp.status_code == 200
    results = resp.json()["search_results"]
    assert results, resp.text
    top = results[0]
    assert expected.lower() in (top["title"] + top["body"]).lower()


def test_many_requests_across_workers(server: str) -> None:
    pids = set()
    for _ in range(30):
        resp = httpx.post(f"{server}/v1/search", json={"query": "VPN", "metadata": {"mode": "lexical"}}, timeout=30)
        assert resp.status_code == 200
    assert httpx.get(f"{server}/healthz").json() == {"status": "ok"}
    del pids


def test_ingest_while_serving_is_searchable(server: str) -> None:
    resp = httpx.post(f"{server}/v1/documents", json={"title": "Cafeteria", "text": "The cafeteria serves "
                      "zucchini lasagna every Thursday."}, timeout=120)  # fmt: skip
    assert resp.status_code == 201
    for _ in range(5):  # another worker must see it too
        r = httpx.post(f"{server}/v1/search", json={"query": "zucchini lasagna", "metadata": {"mode": "lexical"}})
        assert r.json()["search_results"][0]["title"] == "Cafeteria"
