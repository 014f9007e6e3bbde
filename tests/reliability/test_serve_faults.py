"""Faults against the real service: ``assistant-bridge serve --sample`` (gunicorn, two workers, the managed
Milvus Lite side process, multilingual-e5-small), its data directory on a small tmpfs.

In order, on one server: the data directory fills up; the Milvus Lite side process is killed under load; the
logs are searched for secrets and user text; SIGTERM arrives while a request is in flight. Each step prints
what it measured (``-s`` shows it; docs/reliability.md has the figures).
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.reliability.served import Served, SlowLLM, fill_disk, mount_tmpfs, umount

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(900)]

ADMIN_KEY = "adm1n-S3CRET-7f3a9c2e"
SERVICE_TOKEN = "svc-T0KEN-91b2d4e6"
LLM_KEY = "llm-K3Y-55aa77cc"
WRONG_KEY = "wr0ng-KEY-0b0b0b0b"
ADMIN = {"X-API-Key": ADMIN_KEY}
QUERY_MARK = "quokkamarmalade"  # distinctive user text: queries, filters, documents
DOC_MARK = "zephyrtangerine"
BACKEND_TIMEOUT = 3  # seconds per backend read (backend.timeout)
CONNECTIVITY = "I might have information that could help address your query, but am unable to search my knowledge base"


@pytest.fixture(scope="module")
def llm() -> Iterator[SlowLLM]:
    server = SlowLLM()
    yield server
    server.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: Any, llm: SlowLLM) -> Iterator[Served]:
    work = Path(tmp_path_factory.mktemp("serve-faults"))
    disk = work / "disk"
    on_tmpfs = mount_tmpfs(disk, 256)
    config = {
        "server": {"graceful_timeout": 20},
        "backend": {"timeout": BACKEND_TIMEOUT},
        "search": {"hybrid_fusion": "rrf"},  # hybrid searches go to Milvus: the side-process test needs some
        "auth": {
            "keys": [
                {"key": ADMIN_KEY, "user_id": "ops", "admin": True},
                {"key": SERVICE_TOKEN, "user_id": "chat", "service": True, "kind": "bearer"},
            ]
        },
        "assistants": {
            "default": {},
            "slow": {
                "generator": {
                    "kind": "openai",
                    "base_url": llm.base_url,
                    "model": "m",
                    "api_key": LLM_KEY,
                    "timeout": 30,
                    "max_retries": 0,
                }
            },
        },
    }
    server = Served(work, disk / "data", config)
    server.on_tmpfs = on_tmpfs  # type: ignore[attr-defined]
    try:
        print(f"\nserve ready in {server.wait_ready():.1f} s (data directory on tmpfs: {on_tmpfs})")
        yield server
    finally:
        server.stop()
        if on_tmpfs:
            umount(disk)


def _search(base: str, text: str, **meta: Any) -> httpx.Response:
    return httpx.post(
        base + "/v1/search", json={"query": text, "metadata": {"limit": 5, **meta}}, headers=ADMIN, timeout=60
    )


def _titles(base: str, text: str) -> list[str]:
    resp = _search(base, text, mode="lexical")
    assert resp.status_code == 200, resp.text
    return [r["title"] for r in resp.json()["search_results"]]


def _ingest(base: str, title: str, text: str) -> httpx.Response:
    return httpx.post(
        base + "/v1/documents", json={"title": title, "text": text, "visibility": "public"}, headers=ADMIN, timeout=120
    )


def test_a_full_data_directory_refuses_ingestion_and_keeps_searching(served: Served) -> None:
    if not getattr(served, "on_tmpfs", False):
        pytest.skip("needs root to mount a small tmpfs for the data directory")
    base = served.base
    cached_text = f"The {DOC_MARK} kumquat audit happens in the basement archive every spring."
    first = _ingest(base, "Cached audit", cached_text)
    assert first.status_code == 201
    assert httpx.delete(f"{base}/v1/documents/{first.json()['document']['id']}", headers=ADMIN).status_code == 200
    assert _ingest(base, "Kept notice", "The heron survey starts in April near the north pond.").status_code == 201
    filler = fill_disk(served.data.parent)
    try:
        fresh = _ingest(base, "Fresh memo", "The walrus budget review moves to the third floor on Friday.")
        cached = _ingest(base, "Cached audit", cached_text)  # embeddings cached: reaches Milvus Lite
        for resp in (fresh, cached):
            assert resp.status_code == 507, resp.text
            assert resp.json()["error"]["code"] == "insufficient_storage"
        print(
            f"full disk: new document -> {fresh.status_code} ({fresh.json()['error']['message']}); "
            f"cached one -> {cached.status_code} ({cached.json()['error']['message']})"
        )
        assert _titles(base, "heron survey north pond")[0] == "Kept notice"
        assert httpx.get(base + "/readyz").status_code == 200
        listed = {d["title"] for d in httpx.get(base + "/v1/documents", headers=ADMIN).json()["documents"]}
        assert "Kept notice" in listed and not {"Fresh memo", "Cached audit"} & listed
        message = httpx.post(
            base + "/v2/assistants/default/environments/default/message",
            headers=ADMIN,
            json={"input": {"text": "When does the heron survey start?"}},
            timeout=60,
        )
        assert message.status_code == 200
    finally:
        filler.unlink()
    assert (
        _ingest(base, "Fresh memo", "The walrus budget review moves to the third floor on Friday.").status_code == 201
    )
    assert _ingest(base, "Cached audit", cached_text).status_code == 201
    for words, title in (
        ("walrus budget review", "Fresh memo"),
        ("kumquat audit basement", "Cached audit"),
        ("heron survey north pond", "Kept notice"),
    ):
        titles = _titles(base, words)
        assert titles[0] == title and titles.count(title) == 1, titles


class Load:
    """Background requests (search and /message) from ``threads`` threads, recording every answer."""

    def __init__(self, base: str, threads: int = 3) -> None:
        self.base = base
        self.stop = threading.Event()
        self.results: list[tuple[float, str, int, Any]] = []
        self._threads = [threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(threads)]

    def _run(self, i: int) -> None:
        with httpx.Client(timeout=60, headers=ADMIN) as client:
            n = 0
            while not self.stop.is_set():
                n += 1
                kind = ("message", "search", "hybrid")[(n + i) % 3]
                try:
                    if kind in ("search", "hybrid"):
                        # a filtered dense search is answered by the exact index in process; a hybrid search
                        # fused by reciprocal rank (search.hybrid_fusion = rrf here) by Milvus, the side process
                        resp = client.post(
                            self.base + "/v1/search",
                            json={
                                "query": f"reset my password {QUERY_MARK}",
                                "filter": f'title != "{QUERY_MARK}"',
                                "metadata": {"mode": "dense" if kind == "search" else "hybrid"},
                            },
                        )
                    else:
                        resp = client.post(
                            self.base + "/v2/assistants/default/environments/default/message",
                            json={"input": {"text": f"How do I reset my password? {QUERY_MARK}"}},
                        )
                    body: Any = resp.json()
                    self.results.append((time.monotonic(), kind, resp.status_code, body))
                except (httpx.HTTPError, ValueError) as exc:
                    self.results.append((time.monotonic(), kind, -1, repr(exc)))

    def __enter__(self) -> Load:
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop.set()
        for t in self._threads:
            t.join(90)


def test_killing_the_side_process_under_load_gives_503s_then_recovers(served: Served) -> None:
    base = served.base
    workers = served.worker_pids()
    assert len(workers) == 2
    old_lite = served.lite_pid()
    # the documents there before the kill (the full-disk test's, when it ran first) must all be there after it
    before = {d["title"] for d in httpx.get(base + "/v1/documents", headers=ADMIN).json()["documents"]}
    ready: list[tuple[float, bool]] = []
    with Load(base) as load:
        time.sleep(3)
        killed = time.monotonic()
        os.kill(old_lite, signal.SIGKILL)
        recovered = None
        while time.monotonic() - killed < 120:
            ok = httpx.get(base + "/readyz", timeout=30).status_code == 200
            ready.append((time.monotonic(), ok))
            if not ok:
                recovered = None
            elif recovered is None and any(not r for _, r in ready):
                recovered = time.monotonic()
            if recovered and time.monotonic() - recovered > 3:
                break
            time.sleep(0.2)
    assert any(not ok for _, ok in ready), "readyz never reported the outage"
    assert recovered is not None, "the service did not recover: " + served.log_text()[-2000:]
    during = [r for r in load.results if r[0] >= killed]
    statuses = {(kind, status) for _, kind, status, _ in during}
    errors = [(round(t - killed, 1), kind, body) for t, kind, status, body in during if status == -1][:5]
    assert statuses <= {("search", 200), ("search", 503), ("hybrid", 200), ("hybrid", 503), ("message", 200)}, (
        statuses,
        errors,
        served.log_text()[-3000:],
    )
    for _, kind, status, body in during:
        if status == 503:
            assert body["error"]["code"] == "backend_unavailable" and "Traceback" not in json.dumps(body)
        if kind == "message" and status == 200:
            text = body["output"]["generic"][0]["text"]
            assert body["output"]["generic"][0]["response_type"] == "conversation_search" or CONNECTIVITY in text
    failed = [r for r in during if r[2] == 503]
    first_ok_after = min(
        (t for t, kind, status, _ in during if kind == "hybrid" and status == 200 and failed and t > failed[-1][0]),
        default=None,
    )
    assert failed and first_ok_after is not None
    outage = [r for r in during if r[0] <= failed[-1][0]]
    in_process = [r for r in outage if r[1] == "search"]
    print(
        f"side process killed under load: {len(during)} answers after the kill, {len(failed)} x 503 "
        f"backend_unavailable, 0 x 5xx other; readyz false for {recovered - killed:.1f} s; searches through "
        f"Milvus answer again {first_ok_after - killed:.1f} s after the kill; meanwhile "
        f"{sum(r[2] == 200 for r in in_process)} of {len(in_process)} filtered dense searches (in process) answered"
    )
    assert served.worker_pids() == workers, "gunicorn workers were restarted"
    assert served.lite_pid() != old_lite
    assert "milvus_lite.restarted" in served.log_text()
    # what was ingested before (and around the full disk) is still there after the side process restarted
    assert _titles(base, "VPN client setup remote")[0] == "VPN Setup Guide for Remote Employees"
    for words, title in (
        ("walrus budget review", "Fresh memo"),
        ("kumquat audit basement", "Cached audit"),
        ("heron survey north pond", "Kept notice"),
    ):
        if title in before:
            titles = _titles(base, words)
            assert titles[0] == title and titles.count(title) == 1, titles


def test_a_frozen_side_process_gives_503s_within_the_backend_timeout(served: Served) -> None:
    """The side process stopped (SIGSTOP: its port stays open and nothing answers, as a process stuck in a long
    pause would): a search through Milvus answers 503 once ``backend.timeout`` has passed, a turn answers the
    connectivity message, ``/readyz`` says not ready; once it runs again, everything answers as before."""
    base = served.base
    lite = served.lite_pid()
    os.kill(lite, signal.SIGSTOP)
    try:
        t0 = time.monotonic()
        resp = _search(base, "reset my password", mode="hybrid")
        search_s = time.monotonic() - t0
        t0 = time.monotonic()
        turn = httpx.post(
            base + "/v2/assistants/default/environments/default/message",
            json={"input": {"text": "How do I reset my password?"}},
            headers=ADMIN,
            timeout=60,
        )
        turn_s = time.monotonic() - t0
        t0 = time.monotonic()
        ready = httpx.get(base + "/readyz", timeout=30)
        ready_s = time.monotonic() - t0
    finally:
        os.kill(lite, signal.SIGCONT)
    assert resp.status_code == 503 and resp.json()["error"]["code"] == "backend_unavailable", resp.text
    assert search_s < BACKEND_TIMEOUT + 5, search_s
    assert turn.status_code == 200 and CONNECTIVITY in turn.json()["output"]["generic"][0]["text"], turn.text
    assert turn_s < 3 * BACKEND_TIMEOUT + 5, turn_s
    assert ready.status_code == 503 and ready_s < BACKEND_TIMEOUT + 5, (ready.status_code, ready_s)
    deadline = time.monotonic() + 60
    while _search(base, "reset my password", mode="hybrid").status_code != 200:
        assert time.monotonic() < deadline, "searches did not answer again after SIGCONT"
        time.sleep(0.5)
    assert httpx.get(base + "/readyz", timeout=30).status_code == 200
    assert served.lite_pid() == lite
    print(
        f"side process frozen: search 503 after {search_s:.1f} s, turn answered the connectivity message after "
        f"{turn_s:.1f} s, readyz 503 after {ready_s:.1f} s (backend.timeout {BACKEND_TIMEOUT} s); answers again "
        "once it runs"
    )


def test_logs_hold_no_secrets_and_no_user_text(served: Served) -> None:
    base = served.base
    assert (
        httpx.post(
            base + "/v1/search", json={"query": f"{QUERY_MARK} holidays"}, headers={"X-API-Key": WRONG_KEY}
        ).status_code
        == 401
    )
    assert (
        httpx.post(
            base + "/v1/search",
            json={"query": f"{QUERY_MARK} holidays", "filter": f'title == "{QUERY_MARK}"'},
            headers={"Authorization": f"Bearer {SERVICE_TOKEN}", "X-End-User-ID": "enduser-7"},
        ).status_code
        == 200
    )
    doc = _ingest(base, f"{DOC_MARK} title", f"The {DOC_MARK} rota changes every {QUERY_MARK} Monday.")
    assert doc.status_code == 201
    bad_filter = httpx.post(
        base + "/v1/search", json={"query": "x", "filter": f'title === "{QUERY_MARK}"'}, headers=ADMIN
    )
    assert bad_filter.status_code == 400
    turn = httpx.post(
        base + "/v2/assistants/slow/environments/default/message",
        headers=ADMIN,
        timeout=60,
        json={"input": {"text": f"What is the {QUERY_MARK} rota?"}},
    )
    assert turn.status_code == 200
    rag = httpx.post(
        base + "/v1/tools/rag_search/execute", headers=ADMIN, timeout=60, json={"inputs": {"query": f"{DOC_MARK} rota"}}
    )
    assert rag.status_code == 200
    time.sleep(1)
    logs = served.log_text() + (served.data / "milvus-lite.log").read_text(errors="replace")
    assert '"route": "/v1/search"' in logs and '"status": 401' in logs  # the requests were logged
    for secret in (ADMIN_KEY, SERVICE_TOKEN, LLM_KEY, WRONG_KEY):
        assert secret not in logs, f"a credential is in the logs: {secret[:6]}…"
    for text in (QUERY_MARK, DOC_MARK):
        assert text not in logs, f"user text is in the logs: {text}"
    assert "Control socket" not in logs  # gunicorn's shared control socket is off
    raw = [ln for ln in served.log_text().splitlines() if ln.startswith("Traceback") or "[_log_rpc_error]" in ln]
    assert raw == [], f"{len(raw)} plain-text traceback lines (the outage above must be logged as JSON lines)"
    print(f"logs: {len(logs.splitlines())} lines, no credential and no user text")


def test_sigterm_lets_in_flight_requests_finish(served: Served, llm: SlowLLM) -> None:
    base = served.base
    llm.delay = 4.0
    llm.received.clear()
    answers: list[httpx.Response] = []

    def ask() -> None:
        answers.append(
            httpx.post(
                base + "/v2/assistants/slow/environments/default/message",
                headers=ADMIN,
                timeout=60,
                json={"input": {"text": "How do I reset my password?", "options": {"debug": True}}},
            )
        )

    thread = threading.Thread(target=ask)
    thread.start()
    assert llm.received.wait(60), "the turn never reached the LLM"
    lite = served.lite_pid()
    sent = time.monotonic()
    os.kill(served.proc.pid, signal.SIGTERM)
    thread.join(60)
    finished = time.monotonic() - sent
    assert answers and answers[0].status_code == 200, answers[0].text if answers else "no answer"
    event = answers[0].json()["output"]["debug"]["turn_events"][0]
    assert event["callout"]["llm_called"] is True and event["outcome"] in ("answer", "idk")
    code = served.proc.wait(40)
    stopped = time.monotonic() - sent
    print(
        f"SIGTERM with a turn in flight: the turn finished {finished:.1f} s later with 200; serve exited "
        f"with {code} after {stopped:.1f} s"
    )
    assert code == 0
    with pytest.raises(ProcessLookupError):
        os.kill(lite, 0)
    assert not (served.data / "milvus-lite.json").exists()
    with pytest.raises(httpx.ConnectError):
        httpx.get(base + "/healthz", timeout=5)
