"""Conversation sessions of the ``/message`` API, in the SQLite metadata store so every gunicorn worker sees
them (WAL mode; see :mod:`assistant_bridge.store`).

A session belongs to one ``(assistant, environment)`` pair and to the caller that created it: another
caller, another assistant or an expired session all look the same, :class:`~assistant_bridge.errors.NotFound`,
so a session id reveals nothing to whoever guesses it. A session expires ``ttl`` seconds after its last
turn (inactivity timeout); expired rows are deleted lazily. The session remembers the search action it
handed to the client (spec §A.2) until the client answers it with a ``search_results`` message, and the
conversation so far (:mod:`.memory`, kind ``message``): its turns expire with the session and are deleted
with it.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from assistant_bridge.conversation.memory import ConversationMemory, MemoryLimits, MemoryTurn
from assistant_bridge.errors import NotFound
from assistant_bridge.store import SQLiteStore

_SCHEMA = """
CREATE TABLE IF NOT EXISTS message_sessions (
  id TEXT PRIMARY KEY, assistant_id TEXT NOT NULL, environment_id TEXT NOT NULL, owner TEXT NOT NULL,
  created_at REAL NOT NULL, last_used REAL NOT NULL, expires_at REAL NOT NULL, ttl REAL NOT NULL,
  turn_count INTEGER NOT NULL DEFAULT 0, pending TEXT
);
CREATE INDEX IF NOT EXISTS message_sessions_expiry ON message_sessions(expires_at);
"""
_PURGE_EVERY_SECONDS = 60.0
MEMORY_KIND = "message"


@dataclass(frozen=True)
class Session:
    id: str
    assistant_id: str
    environment_id: str
    owner: str
    created_at: float
    expires_at: float
    turn_count: int
    pending: Mapping[str, Any] | None  # the search action waiting for the client's results


_FIELDS = tuple(f.name for f in fields(Session))  # columns of message_sessions, by the same names


class SessionStore:
    """:param store: the shared SQLite store; the table is created if missing.
    :param clock: seconds since the epoch (tests move it forward to expire sessions)."""

    def __init__(self, store: SQLiteStore, clock: Callable[[], float] = time.time) -> None:
        self._store = store
        self._clock = clock
        self._last_purge = 0.0
        store.ensure_schema("message_sessions", _SCHEMA)
        self.memory = ConversationMemory(store, clock)

    def create(self, assistant_id: str, environment_id: str, owner: str, ttl: float) -> Session:
        now = self._clock()
        self._maybe_purge(now)
        sid = str(uuid.uuid4())
        self._store.execute(
            "INSERT INTO message_sessions (id, assistant_id, environment_id, owner, created_at, last_used, "
            "expires_at, ttl, turn_count, pending) VALUES (?,?,?,?,?,?,?,?,0,NULL)",
            (sid, assistant_id, environment_id, owner, now, now, now + ttl, ttl),
        )
        return Session(
            id=sid,
            assistant_id=assistant_id,
            environment_id=environment_id,
            owner=owner,
            created_at=now,
            expires_at=now + ttl,
            turn_count=0,
            pending=None,
        )

    def get(self, session_id: str, assistant_id: str, environment_id: str, owner: str) -> Session:
        """:raises NotFound: unknown, expired, or belonging to another caller or assistant."""
        row = self._store.execute(
            f"SELECT {', '.join(_FIELDS)} FROM message_sessions WHERE id = ?", (session_id,)
        ).fetchone()
        values = dict(zip(_FIELDS, row, strict=True)) if row else None
        if (
            values is None
            or (values["assistant_id"], values["environment_id"], values["owner"])
            != (assistant_id, environment_id, owner)
            or values["expires_at"] <= self._clock()
        ):
            raise NotFound("unknown or expired session; create a new one", resource="session")
        values["pending"] = json.loads(values["pending"]) if values["pending"] else None
        return Session(**values)

    def record_turn(
        self,
        session: Session,
        pending: Mapping[str, Any] | None,
        turn: MemoryTurn | None = None,
        limits: MemoryLimits = MemoryLimits(),
    ) -> None:
        """Count a turn, remember (or clear) the pending search action, remember ``turn`` in the session's
        memory (bounded by ``limits``) and push the expiry back. A turn that completes a client search
        replaces the remembered ``client_search`` turn."""
        now = self._clock()
        self._store.execute(
            "UPDATE message_sessions SET turn_count = turn_count + 1, pending = ?, last_used = ?, "
            "expires_at = ? + ttl WHERE id = ?",
            (json.dumps(dict(pending)) if pending else None, now, now, session.id),
        )
        if turn is not None:
            row = self._store.execute("SELECT ttl FROM message_sessions WHERE id = ?", (session.id,)).fetchone()
            ttl = float(row[0]) if row else session.expires_at - now
            self.memory.append(
                MEMORY_KIND,
                session.id,
                turn,
                ttl,
                limits,
                replace_last_outcome="client_search" if session.pending else None,
            )

    def history(self, session: Session, last: int | None = None) -> list[MemoryTurn]:
        """The remembered turns of ``session``, oldest first."""
        return self.memory.turns(MEMORY_KIND, session.id, last)

    def delete(self, session_id: str, assistant_id: str, environment_id: str, owner: str) -> None:
        """:raises NotFound: as :meth:`get`."""
        self.get(session_id, assistant_id, environment_id, owner)
        self._store.execute("DELETE FROM message_sessions WHERE id = ?", (session_id,))
        self.memory.clear(MEMORY_KIND, session_id)

    def purge_expired(self) -> int:
        """Delete expired sessions (and expired conversation memory); returns how many sessions."""
        self.memory.purge_expired()
        return int(self._store.execute("DELETE FROM message_sessions WHERE expires_at <= ?", (self._clock(),)).rowcount)

    def _maybe_purge(self, now: float) -> None:
        if now - self._last_purge >= _PURGE_EVERY_SECONDS:
            self._last_purge = now
            self.purge_expired()
