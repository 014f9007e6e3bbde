"""Asynchronous executions across real gunicorn workers: the worker that accepted an execution runs it,
and the other worker streams and reads it from the shared SQLite store."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from assistant_bridge.backends.lite_server import free_port
from assistant_bridge.client.sse import iter_json_events
from tests.served_process import served_process

pytestmark = [pytest.mark.integration, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def base(tmp_path_factory: Any) -> Iterator[str]:
    data = tmp_path_factory.mktemp("workers")
    port = free_port()
    env = {**os.environ, "RAG_TEST_DATA_DIR": str(data), "PYTHONPATH": str(ROOT)}
    cmd = [
        sys.executable,
        "-m",
        "gunicorn",
        "-w",
        "2",
        "-k",
        "gthread",
        "--threads",
        "4",
        "-b",
        f"127.0.0.1:{port}",
        "tests.tools.gunicorn_app:create()",
    ]
    url = f"http://127.0.0.1:{port}"
    pids: set[str] = set()

    def both_workers_answer() -> bool:
        """both workers answering /healthz"""
        pids.add(httpx.get(f"{url}/healthz", timeout=2).headers.get("X-Worker-PID", ""))
        return len(pids) >= 2

    with served_process(
        cmd, data / "gunicorn.log", both_workers_answer, timeout=60, interval=0.2, stop_timeout=20, cwd=ROOT, env=env
    ):
        yield url


def test_other_worker_streams_an_execution_it_did_not_run(base: str) -> None:
    """Which worker accepts a connection is the kernel's choice: each stream is read on a new connection, again
    until the worker that did not run the execution has served it (at most 20 reads per execution)."""
    served_by_other = 0
    for _ in range(2):
        accepted = httpx.post(f"{base}/v1/tools/rag_search/execute?mode=async", json={"inputs": {"query": "remote"}})
        assert accepted.status_code == 202, accepted.text
        owner = accepted.headers["X-Worker-PID"]
        body = accepted.json()
        for _ in range(20):
            with httpx.stream("GET", base + body["stream_url"], timeout=30) as resp:
                events = list(iter_json_events(resp.iter_bytes()))
                other = resp.headers["X-Worker-PID"] != owner
            assert events[0][0] == "tool_update" and events[-1][0] == "tool_end", events[-3:]
            assert events[-1][1]["outcome"] == "answer" and events[-1][1]["sources_used"]
            assert "".join(d["content"] for n, d in events if n == "tool_partial_update") == events[-1][1]["response"]
            served_by_other += other
            if other:
                break
        details = httpx.get(base + body["details_url"]).json()
        assert details["status"] == "completed" and details["outputs"] == events[-1][1]
    assert served_by_other > 0, "no stream was served by the other worker"


def test_a_client_that_goes_away_cancels_its_streamed_execution(base: str) -> None:
    with httpx.stream(
        "POST",
        f"{base}/v1/tools/rag_search/execute",
        json={"inputs": {"query": "remote"}},
        headers={"Accept": "text/event-stream"},
        timeout=30,
    ) as resp:
        execution_id = resp.headers["X-Execution-ID"]
        for line in resp.iter_lines():
            if "COMPILING_RESULTS" in line:
                break
    deadline = time.monotonic() + 10
    status = ""
    while time.monotonic() < deadline:
        details = httpx.get(f"{base}/v1/tool-executions/{execution_id}").json()
        status = details["status"]
        if status != "running":
            break
        time.sleep(0.1)
    assert (status, details["error_code"]) == ("cancelled", "cancelled")
