"""The README's first command, for real: ``assistant-bridge serve --sample`` starts gunicorn with two
workers on a managed ``milvus-lite server`` side process, ingests the shipped sample corpus with the
default multilingual embedder, and answers ``/v1/search`` from any worker."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.served_process import free_ports, served_process

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(tmp_path_factory: Any) -> Iterator[str]:
    data = tmp_path_factory.mktemp("serve")
    port, lite_port = free_ports(2)
    env = {**os.environ, "ASSISTANT_BRIDGE_BACKEND__LITE_PORT": str(lite_port)}
    cmd = [
        sys.executable,
        "-m",
        "assistant_bridge",
        "serve",
        "--sample",
        "--workers",
        "2",
        "--port",
        str(port),
        "--data-dir",
        str(data / "d"),
    ]
    base = f"http://127.0.0.1:{port}"
    # on the way out SIGTERM reaches the whole process group (the arbiter and its workers at once): serve must still
    # stop its side process (in a session of its own) and remove its state file
    with served_process(cmd, data / "serve.log", f"{base}/readyz", timeout=240, stop_timeout=30, env=env):
        yield base
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


@pytest.mark.parametrize(
    "text, expected",
    [
        ("How do I reset my password?", "account.example.com/reset"),
        ("Comment me faire rembourser mes frais ?", "rembourser"),
        # the deadline is not in the window that shares the most words with the question (the page's
        # introduction): the pre-filter's second look finds it
        ("経費精算の締め切りはいつですか", "三十日以内"),
    ],
)
def test_readme_message_examples_are_answered(server: str, text: str, expected: str) -> None:
    resp = httpx.post(
        f"{server}/v2/assistants/default/environments/default/message", json={"input": {"text": text}}, timeout=60
    )
    assert resp.status_code == 200, resp.text
    item = resp.json()["output"]["generic"][0]
    assert item["response_type"] == "conversation_search", item
    assert expected in item["text"], item["text"]


def test_many_requests_across_workers(server: str) -> None:
    pids = set()
    for _ in range(30):
        resp = httpx.post(f"{server}/v1/search", json={"query": "VPN", "metadata": {"mode": "lexical"}}, timeout=30)
        assert resp.status_code == 200
    assert httpx.get(f"{server}/healthz").json() == {"status": "ok"}
    del pids


def test_ingest_while_serving_is_searchable(server: str) -> None:
    resp = httpx.post(
        f"{server}/v1/documents",
        json={"title": "Cafeteria", "text": "The cafeteria serves zucchini lasagna every Thursday."},
        timeout=120,
    )
    assert resp.status_code == 201
    for _ in range(5):  # another worker must see it too
        r = httpx.post(f"{server}/v1/search", json={"query": "zucchini lasagna", "metadata": {"mode": "lexical"}})
        assert r.json()["search_results"][0]["title"] == "Cafeteria"


def test_a_large_upload_is_queued_and_ingested_by_the_worker_process(server: str) -> None:
    """serve runs assistant-bridge ingest-worker beside gunicorn: the upload answers 202 at once, the job's
    progress can be read from any worker, and the document ends up searchable."""
    import time

    text = " ".join(f"Rule {i}: the quarterly audit of warehouse nine checks pallet labels." for i in range(600))
    resp = httpx.post(f"{server}/v1/documents", json={"title": "Audit rules", "text": text}, timeout=30)
    assert resp.status_code == 202, resp.text
    location = resp.headers["Location"]
    deadline = time.monotonic() + 240
    job = resp.json()["job"]
    while job["status"] in ("queued", "running") and time.monotonic() < deadline:
        time.sleep(0.5)
        job = httpx.get(f"{server}{location}", timeout=10).json()
    assert job["status"] == "done", job
    assert job["progress"]["chunks_done"] == job["progress"]["chunks_total"] == job["document"]["chunk_count"] > 5
    r = httpx.post(
        f"{server}/v1/search", json={"query": "warehouse nine pallet labels", "metadata": {"mode": "lexical"}}
    )
    assert r.json()["search_results"][0]["title"] == "Audit rules"
