"""``/metrics`` under gunicorn with two workers: every worker records into ``PROMETHEUS_MULTIPROC_DIR`` and
any worker answers with the sum, for the HTTP series and for the turn series (stages, outcomes, IDK
reasons, backend errors).

``serve`` runs here on the memory backend and the hashing embedder (no Milvus Lite, no sample corpus): each
worker has its own empty index, so the turns end in "no results", and an assistant whose search server does
not answer gives connectivity failures."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.reliability.served import REPO, children
from tests.served_process import free_ports, served_process

MESSAGE = "/v2/assistants/{}/environments/default/message"


_PROBE = """
import sys, types
server = types.ModuleType("assistant_bridge.web.server")  # stands in for gunicorn: reports the mode instead


def run_gunicorn(settings):
    from prometheus_client import values
    return 0 if values.ValueClass is not values.MutexValue else 3


def preflight(settings):  # the real one builds the app, which imports prometheus_client
    import assistant_bridge.metrics


server.run_gunicorn = run_gunicorn
server.preflight = preflight
sys.modules[server.__name__] = server
from assistant_bridge.cli import main
sys.exit(main(["serve", "--data-dir", sys.argv[1]]))
"""


@pytest.mark.unit
def test_serve_puts_prometheus_client_in_multiprocess_mode(tmp_path: Path) -> None:
    """prometheus_client picks single- or multi-process mode when it is first imported: ``serve`` must set
    ``PROMETHEUS_MULTIPROC_DIR`` before anything imports it, or every worker keeps its samples to itself."""
    env = {**os.environ, "ASSISTANT_BRIDGE_BACKEND__KIND": "memory", "ASSISTANT_BRIDGE_EMBEDDER__KIND": "hashing"}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(tmp_path / "data")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def served(tmp_path_factory: Any) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    work = tmp_path_factory.mktemp("metrics-workers")
    port, dead = free_ports(2)  # the service, and a port no search server listens on
    config = {
        "backend": {"kind": "memory"},
        "embedder": {"kind": "hashing"},
        "assistants": {
            "default": {},
            "down": {
                "search": {
                    "type": "server",
                    "server": {
                        "url": f"http://127.0.0.1:{dead}/v1/search",
                        "timeout_seconds": 1,
                        "connect_timeout_seconds": 1,
                    },
                }
            },
        },
    }
    (work / "config.yaml").write_text(json.dumps(config))  # JSON is YAML
    cmd = [
        sys.executable,
        "-m",
        "assistant_bridge",
        "serve",
        "--workers",
        "2",
        "--port",
        str(port),
        "--data-dir",
        str(work / "data"),
        "--config",
        str(work / "config.yaml"),
    ]
    base = f"http://127.0.0.1:{port}"
    with served_process(cmd, work / "serve.log", base + "/readyz", timeout=240, stop_timeout=60, cwd=REPO) as proc:
        yield base, proc


def _series(base: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    text = httpx.get(base + "/metrics", timeout=10).text
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for fam in text_string_to_metric_families(text)
        for s in fam.samples
    }


def _value(series: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str) -> float:
    return sum(v for (n, labs), v in series.items() if n == name and set(labels.items()) <= labs)


def _recording_workers(proc: subprocess.Popen[bytes]) -> set[int]:
    """The worker processes of ``proc`` that have metric files in a multiprocess directory (``serve`` makes
    it in ``/dev/shm`` or the temporary directory; a worker's files are named after its process id)."""
    workers = set(children(proc.pid))
    dirs = [
        d
        for base in ("/dev/shm", tempfile.gettempdir())
        if os.path.isdir(base)
        for d in Path(base).glob("assistant-bridge-metrics-*")
    ]
    pids = {int(m.group(1)) for d in dirs for f in d.glob("*.db") if (m := re.search(r"_(\d+)\.db$", f.name))}
    return pids & workers


@pytest.mark.integration
@pytest.mark.slow
def test_metrics_sum_every_worker(served: tuple[str, subprocess.Popen[bytes]]) -> None:
    base, proc = served
    before = _series(base)
    searches = turns = failures = 0
    with ThreadPoolExecutor(8) as pool:  # a new connection per request: a kept-alive one stays with one worker

        def search(_: int) -> int:
            return httpx.post(base + "/v1/search", json={"query": "holiday policy"}, timeout=30).status_code

        def turn(assistant: str) -> int:
            body = {"input": {"text": "holiday policy"}}
            return httpx.post(base + MESSAGE.format(assistant), json=body, timeout=30).status_code

        # concurrent requests until both workers have recorded something (usually the first round)
        for _ in range(10):
            assert set(pool.map(search, range(40))) == {200}
            searches += 40
            if len(_recording_workers(proc)) >= 2:
                break
        assert len(_recording_workers(proc)) >= 2, "one worker served every request"
        assert set(pool.map(turn, ["default"] * 10)) == {200}
        turns += 10
        assert set(pool.map(turn, ["down"] * 4)) == {200}
        failures += 4
    for _ in range(6):  # whichever worker answers /metrics, it shows the sum of both
        after = _series(base)

        def moved(name: str, **labels: str) -> float:
            return _value(after, name, **labels) - _value(before, name, **labels)  # noqa: B023 - used in this pass

        assert moved("assistant_bridge_http_requests_total", route="/v1/search", status="200") == searches
        assert moved("assistant_bridge_stage_duration_seconds_count", route="search", stage="search") == searches
        assert moved("assistant_bridge_answer_outcomes_total", route="message", outcome="idk") == turns
        assert moved("assistant_bridge_idk_total", route="message", reason="no_results") == turns
        assert moved("assistant_bridge_answer_outcomes_total", route="message", outcome="error") == failures
        assert moved("assistant_bridge_idk_total", route="message", reason="backend_error") == failures
        assert (
            moved("assistant_bridge_backend_errors_total", backend="custom_search", code="search_service_error")
            == failures
        )
        searched = moved("assistant_bridge_stage_duration_seconds_count", route="message", stage="search")
        assert searched == turns + failures
