"""Execution store (status transitions, ownership, events, dead workers, TTL), runner bounds, sessions,
settings."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.domain import Ownership, Principal
from assistant_bridge.errors import ConfigurationError, NotFound, RateLimited, ValidationFailed
from assistant_bridge.store import SQLiteStore
from assistant_bridge.tools import events as ev
from assistant_bridge.tools.config import ToolSettings
from assistant_bridge.tools.executions import ExecutionStore
from assistant_bridge.tools.registry import RAG_SEARCH, resolve
from assistant_bridge.tools.runner import ExecutionRunner
from assistant_bridge.tools.sessions import SessionAccess
from tests.conftest import make_settings

pytestmark = pytest.mark.unit
ALICE = Principal(user_id="alice", workspaces=("w",), key_id="key0")
BOB = Principal(user_id="bob", key_id="key1")
T1 = Principal(user_id="t1", tenant="t1", key_id="key3")


@pytest.fixture
def store(tmp_path: Path) -> SQLiteStore:
    return SQLiteStore(tmp_path / "meta.sqlite3")


def test_status_moves_forward_only_and_records_times(store: SQLiteStore) -> None:
    now = [1000.0]
    ex = ExecutionStore(store, clock=lambda: now[0])
    rec = ex.create(RAG_SEARCH.id, "rag_search", ALICE, {"query": "q"}, "async")
    assert (rec.status, rec.owner, rec.user_id) == ("pending", ALICE.owner_key, "alice")
    now[0] = 1001.0
    assert ex.start(rec.id) and not ex.start(rec.id)
    now[0] = 1002.5
    assert ex.complete(rec.id, {"response": "ok"})
    assert not ex.fail(rec.id, "late", "x") and not ex.complete(rec.id, {"response": "again"})
    got = ex.get_visible(rec.id, ALICE)
    body = got.to_json()
    assert (body["status"], body["outputs"], body["error"]) == ("completed", {"response": "ok"}, None)
    assert body["created_at"].endswith("Z") and body["started_at"] != body["completed_at"]
    assert body["inputs"] == {"query": "q"} and body["tool_name"] == "rag_search"


def test_executions_are_private_to_their_caller(store: SQLiteStore) -> None:
    ex = ExecutionStore(store)
    rec = ex.create(RAG_SEARCH.id, "rag_search", T1, {"query": "q"}, "async")
    for other in (
        ALICE,
        BOB,
        Principal(user_id="t1", tenant="t1", key_id="key9"),
        Principal(user_id="t1", key_id="key3"),
    ):
        with pytest.raises(NotFound):
            ex.get_visible(rec.id, other)
    assert ex.get_visible(rec.id, T1).id == rec.id
    with pytest.raises(NotFound):
        ex.get_visible("nope", T1)


def test_events_are_ordered_and_read_after_a_sequence_number(store: SQLiteStore) -> None:
    ex = ExecutionStore(store)
    rec = ex.create(RAG_SEARCH.id, "rag_search", ALICE, {}, "async")
    for i, event in enumerate([ev.phase("A", "started"), ev.partial("x"), ev.end({"response": "x"})], start=1):
        ex.append(rec.id, i, event)
    assert [s for s, _ in ex.events_after(rec.id, 0)] == [1, 2, 3]
    assert [e.type for _, e in ex.events_after(rec.id, 1)] == ["tool_partial_update", "tool_end"]
    assert ex.events_after(rec.id, 3) == []


def test_dead_worker_and_overdue_executions_are_reported_failed(store: SQLiteStore) -> None:
    now = [0.0]
    ex = ExecutionStore(store, max_execution_seconds=60, clock=lambda: now[0])
    rec = ex.create(RAG_SEARCH.id, "rag_search", ALICE, {}, "async")
    store.execute("UPDATE tool_executions SET worker=? WHERE id=?", (f"{socket.gethostname()}:999999999:1", rec.id))
    got = ex.get(rec.id)
    assert got is not None and (got.status, got.error_code) == ("failed", "worker_lost")
    live = ex.create(RAG_SEARCH.id, "rag_search", ALICE, {}, "async")
    assert ex.get(live.id).status == "pending"  # type: ignore[union-attr]
    now[0] = 61.0
    got = ex.get(live.id)
    assert got is not None and (got.status, got.error_code) == ("failed", "timeout")


def test_old_executions_and_their_events_are_purged(store: SQLiteStore) -> None:
    now = [0.0]
    ex = ExecutionStore(store, ttl_seconds=100, clock=lambda: now[0])
    old = ex.create(RAG_SEARCH.id, "rag_search", ALICE, {}, "async")
    ex.append(old.id, 1, ev.partial("x"))
    now[0] = 150.0
    new = ex.create(RAG_SEARCH.id, "rag_search", ALICE, {}, "async")
    assert ex.purge() == 1
    assert ex.get(old.id) is None and ex.events_after(old.id, 0) == [] and ex.get(new.id) is not None


def test_runner_bounds_and_runs_jobs() -> None:
    runner = ExecutionRunner(threads=1, max_queued=1)
    gate = threading.Event()
    done: list[int] = []
    runner.acquire()
    runner.acquire()
    with pytest.raises(RateLimited):
        runner.acquire()
    runner.run(lambda: (gate.wait(5), done.append(1)) and None)
    runner.run(lambda: done.append(2))
    version = runner.version()
    gate.set()
    deadline = time.monotonic() + 5
    while runner.inflight and time.monotonic() < deadline:
        version = runner.wait(version, 0.1)
    assert done == [1, 2] and runner.inflight == 0
    runner.acquire()  # room again
    runner.release()
    runner.shutdown()


def test_runner_survives_a_crashing_job() -> None:
    runner = ExecutionRunner(threads=1, max_queued=0)
    runner.acquire()
    runner.run(lambda: 1 / 0 and None)  # type: ignore[func-returns-value]
    deadline = time.monotonic() + 5
    while runner.inflight and time.monotonic() < deadline:
        time.sleep(0.01)
    assert runner.inflight == 0
    runner.shutdown()


def test_sessions_are_claimed_by_their_first_user(store: SQLiteStore) -> None:
    access = SessionAccess(store)
    assert access.check("s-1", ALICE) == "s-1"
    assert access.check("s-1", ALICE) == "s-1"
    for other in (BOB, T1, Principal(user_id="alice", key_id="key7")):
        with pytest.raises(NotFound):
            access.check("s-1", other)
    with pytest.raises(ValidationFailed):
        access.check("bad id!", ALICE)
    with pytest.raises(ValidationFailed):
        access.check("x" * 129, ALICE)


def test_a_session_holding_someone_elses_documents_cannot_be_claimed(store: SQLiteStore) -> None:
    from assistant_bridge.domain import Document

    store.put_document(
        Document(
            id="d1",
            title="t",
            filename="f",
            content_hash="h",
            mime_type="text/plain",
            ownership=Ownership(owner_user_id="bob", session_id="s-bob"),
            chunk_count=1,
            created_at=0.0,
        )
    )
    access = SessionAccess(store)
    with pytest.raises(NotFound):
        access.check("s-bob", ALICE)
    assert access.check("s-bob", BOB) == "s-bob"


def test_message_sessions_belong_to_their_creator(store: SQLiteStore) -> None:
    from assistant_bridge.conversation.sessions import SessionStore

    session = SessionStore(store).create("default", "default", ALICE.owner_key, 3600)
    access = SessionAccess(store)
    assert access.check(session.id, ALICE) == session.id
    with pytest.raises(NotFound):
        access.check(session.id, BOB)


def test_tool_registry_resolves_names_and_ids() -> None:
    assert resolve("rag_search") is RAG_SEARCH and resolve(RAG_SEARCH.id) is RAG_SEARCH
    with pytest.raises(NotFound):
        resolve("web_search")


def test_settings_defaults_and_errors(tmp_path: Path) -> None:
    s = ToolSettings.from_settings(make_settings(tmp_path))
    assert (s.sse_max_event_bytes, s.rag_search.retrieve_limit) == (16384, 15)
    env_like = make_settings(tmp_path, tools={"sse_max_event_bytes": "2048", "rag_search": {"retrieve_limit": "5"}})
    s = ToolSettings.from_settings(env_like)
    assert (s.sse_max_event_bytes, s.rag_search.retrieve_limit) == (2048, 5)
    bad: list[dict[str, Any]] = [
        {"sse_max_event_bytes": 100},
        {"unknown": 1},
        {"rag_search": {"mode": "fuzzy"}},
        {"heartbeat_seconds": 0},
        {"async_threads": "many"},
        {"rag_search": {"nope": 1}},
        {"rag_search": "x"},
        {"sse_max_split_bytes": 1000, "sse_max_event_bytes": 2000},
    ]
    for table in bad:
        with pytest.raises(ConfigurationError):
            ToolSettings.from_settings(make_settings(tmp_path, tools=table))
