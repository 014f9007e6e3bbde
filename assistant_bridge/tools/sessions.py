"""Who may use a chat session id with ``rag_search``, ``/v1/chunks`` and ``POST /v1/sessions/{id}/documents``.

Chunks attached to a session are visible to whoever searches *within* that session
(:func:`~assistant_bridge.core.scope.chunk_visible`), so a session id must be checked before it enters a
:class:`~assistant_bridge.domain.Scope`:

* a ``/message`` session (table ``message_sessions``) may be used only by the caller that created it;
* any other id is claimed by the first caller that uses it (table ``tool_sessions``) and is then usable by
  that caller only. A caller cannot claim an id under which another caller's documents were already
  stored. Session ids should be unguessable (UUIDs).

Anything else answers :class:`~assistant_bridge.errors.NotFound`, like an unknown id.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable

from assistant_bridge.domain import Principal
from assistant_bridge.errors import NotFound, ValidationFailed
from assistant_bridge.store import SQLiteStore

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tool_sessions (id TEXT PRIMARY KEY, owner TEXT NOT NULL, created_at REAL NOT NULL);
"""
SESSION_ID = re.compile(r"^[A-Za-z0-9_.:\-]{1,128}$")


class SessionAccess:
    def __init__(self, store: SQLiteStore, clock: Callable[[], float] = time.time) -> None:
        self._store = store
        self._clock = clock
        store.ensure_schema("tool_sessions", _SCHEMA)

    def check(self, session_id: str, principal: Principal, *, field: str = "$.session_id") -> str:
        """Return ``session_id`` when ``principal`` may use it (claiming it when it is new).

        :raises ValidationFailed: a malformed id.
        :raises NotFound: a session of another caller.
        """
        if not isinstance(session_id, str) or not SESSION_ID.match(session_id):
            raise ValidationFailed(f"{field}: a session id is 1-128 letters, digits, _ . : -", path=field)
        owner = principal.owner_key
        message_owner = self._message_session_owner(session_id)
        if message_owner is not None:
            if message_owner != owner:
                raise self._not_found()
            return session_id
        row = self._store.execute("SELECT owner FROM tool_sessions WHERE id=?", (session_id,)).fetchone()
        if row is None:
            docs = self._store.execute(
                "SELECT owner, tenant FROM documents WHERE session_id=?", (session_id,)
            ).fetchall()
            if any((o, t) != (principal.user_id, principal.tenant or "") for o, t in docs):
                raise self._not_found()
            self._store.execute(
                "INSERT OR IGNORE INTO tool_sessions (id, owner, created_at) VALUES (?,?,?)",
                (session_id, owner, self._clock()),
            )
            row = self._store.execute("SELECT owner FROM tool_sessions WHERE id=?", (session_id,)).fetchone()
        if row is None or row[0] != owner:
            raise self._not_found()
        return session_id

    def _message_session_owner(self, session_id: str) -> str | None:
        try:
            row = self._store.execute("SELECT owner FROM message_sessions WHERE id=?", (session_id,)).fetchone()
        except sqlite3.OperationalError:  # the /message API is not installed: no such table
            return None
        return str(row[0]) if row else None

    @staticmethod
    def _not_found() -> NotFound:
        return NotFound("unknown session", resource="session")
