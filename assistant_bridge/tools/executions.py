"""Tool executions and their events, in the SQLite metadata store so that every gunicorn worker sees them.

An execution is created by the worker that accepted the request and runs there; its status, result and (for
asynchronous executions) its events are written to two tables, which the ``GET`` and ``/stream`` routes of
any worker read. Status moves ``pending → running → completed | failed | cancelled`` and never leaves a
terminal state (every update is guarded on the current status).

An execution belongs to the caller that created it: the credential, the user and the end user
(:attr:`Principal.owner_key <assistant_bridge.domain.Principal.owner_key>`). Anyone else gets :class:`~assistant_bridge.errors.NotFound`, exactly as for an unknown id.

A worker that dies leaves its executions ``running``; a reader on the same host notices the missing process
and reports them ``failed`` (code ``worker_lost``). Whatever the host, an execution still running after
``max_execution_seconds`` is reported ``failed`` (code ``timeout``). Executions older than
``execution_ttl_seconds`` are deleted with their events.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Any

from assistant_bridge.domain import Principal
from assistant_bridge.errors import NotFound
from assistant_bridge.store import SQLiteStore
from assistant_bridge.tools.events import ToolEvent
from assistant_bridge.workers import worker_alive, worker_id

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tool_executions (
  id TEXT PRIMARY KEY, tool_id TEXT NOT NULL, tool_name TEXT NOT NULL, owner TEXT NOT NULL, user_id TEXT,
  status TEXT NOT NULL, mode TEXT NOT NULL, inputs TEXT NOT NULL, outputs TEXT, error TEXT, error_code TEXT,
  worker TEXT NOT NULL, created_at REAL NOT NULL, started_at REAL, completed_at REAL
);
CREATE INDEX IF NOT EXISTS tool_executions_created ON tool_executions(created_at);
CREATE TABLE IF NOT EXISTS tool_execution_events (
  execution_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL,
  PRIMARY KEY (execution_id, seq)
);
"""
TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})
_PURGE_EVERY_SECONDS = 300.0


def _iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, tz=UTC).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True, kw_only=True)
class ExecutionRecord:
    id: str
    tool_id: str
    tool_name: str
    owner: str
    user_id: str | None
    status: str
    mode: str  # sync | stream | async
    inputs: Mapping[str, Any]
    outputs: Mapping[str, Any] | None = None
    error: str | None = None
    error_code: str | None = None
    worker: str
    created_at: float
    started_at: float | None = None
    completed_at: float | None = None

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES

    def to_json(self) -> dict[str, Any]:
        """The ``GET /v1/tool-executions/{id}`` body (UBIK ``PublicToolExecutionResult`` plus a few fields)."""
        return {
            "id": self.id,
            "tool_id": self.tool_id,
            "tool_name": self.tool_name,
            "user_id": self.user_id,
            "status": self.status,
            "inputs": dict(self.inputs),
            "outputs": dict(self.outputs) if self.outputs is not None else None,
            "error": self.error,
            "error_code": self.error_code,
            "mode": self.mode,
            "created_at": _iso(self.created_at),
            "started_at": _iso(self.started_at),
            "completed_at": _iso(self.completed_at),
        }


# The table's columns have the record's field names (one list for the INSERT and the SELECT).
_FIELDS = tuple(f.name for f in fields(ExecutionRecord))
_COLUMNS = ", ".join(_FIELDS)


def _record(row: Any) -> ExecutionRecord:
    values = dict(zip(_FIELDS, row, strict=True))
    values["inputs"] = json.loads(values["inputs"])
    values["outputs"] = json.loads(values["outputs"]) if values["outputs"] else None
    return ExecutionRecord(**values)


def _row(rec: ExecutionRecord) -> tuple[Any, ...]:
    values = {f: getattr(rec, f) for f in _FIELDS}
    values["inputs"] = json.dumps(rec.inputs, ensure_ascii=False)
    values["outputs"] = None if rec.outputs is None else json.dumps(rec.outputs, ensure_ascii=False)
    return tuple(values.values())


class ExecutionStore:
    """:param store: the shared SQLite store; the tables are created if missing.
    :param clock: seconds since the epoch."""

    def __init__(
        self,
        store: SQLiteStore,
        *,
        max_execution_seconds: float = 600.0,
        ttl_seconds: float = 86400.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._clock = clock
        self.max_execution_seconds = max_execution_seconds
        self.ttl_seconds = ttl_seconds
        self._last_purge = 0.0
        store.ensure_schema("tool_executions", _SCHEMA)

    # -- writes (the accepting worker) ------------------------------------------------------------------
    def create(
        self, tool_id: str, tool_name: str, principal: Principal, inputs: Mapping[str, Any], mode: str
    ) -> ExecutionRecord:
        now = self._clock()
        self._maybe_purge(now)
        rec = ExecutionRecord(
            id=str(uuid.uuid4()),
            tool_id=tool_id,
            tool_name=tool_name,
            owner=principal.owner_key,
            user_id=principal.user_id,
            status="pending",
            mode=mode,
            inputs=dict(inputs),
            worker=worker_id(),
            created_at=now,
        )
        self._store.execute(
            f"INSERT INTO tool_executions ({_COLUMNS}) VALUES ({', '.join('?' * len(_FIELDS))})", _row(rec)
        )
        return rec

    def start(self, execution_id: str) -> bool:
        cur = self._store.execute(
            "UPDATE tool_executions SET status='running', started_at=? WHERE id=? AND status='pending'",
            (self._clock(), execution_id),
        )
        return cur.rowcount > 0

    def complete(self, execution_id: str, outputs: Mapping[str, Any]) -> bool:
        cur = self._store.execute(
            "UPDATE tool_executions SET status='completed', outputs=?, completed_at=? "
            "WHERE id=? AND status IN ('pending','running')",
            (json.dumps(dict(outputs), ensure_ascii=False), self._clock(), execution_id),
        )
        return cur.rowcount > 0

    def fail(self, execution_id: str, message: str, code: str, *, status: str = "failed") -> bool:
        assert status in ("failed", "cancelled")
        cur = self._store.execute(
            "UPDATE tool_executions SET status=?, error=?, error_code=?, completed_at=? "
            "WHERE id=? AND status IN ('pending','running')",
            (status, message, code, self._clock(), execution_id),
        )
        return cur.rowcount > 0

    def append(self, execution_id: str, seq: int, event: ToolEvent) -> None:
        self._store.execute(
            "INSERT OR REPLACE INTO tool_execution_events (execution_id, seq, type, data) VALUES (?,?,?,?)",
            (execution_id, seq, event.type, json.dumps(dict(event.data), ensure_ascii=False)),
        )

    # -- reads (any worker) -----------------------------------------------------------------------------
    def get(self, execution_id: str) -> ExecutionRecord | None:
        row = self._store.execute(f"SELECT {_COLUMNS} FROM tool_executions WHERE id=?", (execution_id,)).fetchone()
        return self.reap(_record(row)) if row else None

    def get_visible(self, execution_id: str, principal: Principal) -> ExecutionRecord:
        """:raises NotFound: unknown id, or an execution of another caller."""
        rec = self.get(execution_id)
        if rec is None or rec.owner != principal.owner_key:
            raise NotFound(f"tool execution {execution_id[:64]} not found", resource="tool_execution")
        return rec

    def events_after(self, execution_id: str, seq: int, limit: int = 500) -> list[tuple[int, ToolEvent]]:
        rows = self._store.execute(
            "SELECT seq, type, data FROM tool_execution_events WHERE execution_id=? AND seq>? ORDER BY seq LIMIT ?",
            (execution_id, seq, limit),
        ).fetchall()
        return [(int(s), ToolEvent(t, json.loads(d))) for s, t, d in rows]

    def reap(self, rec: ExecutionRecord) -> ExecutionRecord:
        """Report a dead or overdue execution as failed (see the module docstring); returns the current record."""
        if rec.terminal:
            return rec
        code = message = None
        if worker_alive(rec.worker) is False:
            code, message = "worker_lost", "the worker running this execution stopped"
        elif self._clock() - rec.created_at > self.max_execution_seconds:
            code, message = "timeout", f"the execution did not finish within {self.max_execution_seconds:g} s"
        if code is None or message is None:
            return rec
        self.fail(rec.id, message, code)
        row = self._store.execute(f"SELECT {_COLUMNS} FROM tool_executions WHERE id=?", (rec.id,)).fetchone()
        return _record(row) if row else rec

    # -- housekeeping -----------------------------------------------------------------------------------
    def purge(self) -> int:
        """Delete executions older than the TTL and their events; returns how many executions."""
        cutoff = self._clock() - self.ttl_seconds
        self._store.execute(
            "DELETE FROM tool_execution_events WHERE execution_id IN "
            "(SELECT id FROM tool_executions WHERE created_at < ?)",
            (cutoff,),
        )
        return int(self._store.execute("DELETE FROM tool_executions WHERE created_at < ?", (cutoff,)).rowcount)

    def _maybe_purge(self, now: float) -> None:
        if now - self._last_purge >= _PURGE_EVERY_SECONDS:
            self._last_purge = now
            self.purge()
