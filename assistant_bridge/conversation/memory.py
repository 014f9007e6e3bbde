"""Conversation memory: the turns of a session, kept in the SQLite metadata store next to the session so
every gunicorn worker sees the same history (WAL mode; see :mod:`assistant_bridge.store`).

A turn remembers the question, the query that was searched (the rewritten one), the start of the answer,
the result ids, the cited ids and the outcome (:class:`MemoryTurn`). Memory is namespaced by ``kind``
(``message`` for ``/message`` sessions, ``tool`` for ``rag_search`` chat sessions), so one id used by both
APIs keeps two separate histories.

Invariants:

* bounded: at most ``max_turns`` turns and ``max_bytes`` bytes (UTF-8 JSON) per session; the oldest turns
  are dropped first, and the newest turn is always kept (its answer is cut to :data:`MAX_ANSWER_CHARS`, and
  a turn larger than ``max_bytes`` on its own keeps only the start of its question and query);
* expiring: every turn of a session carries the session's expiry, pushed back at each turn; expired turns
  are never read and are deleted lazily;
* no user text in logs: only counts are logged.

Stateless calls have no memory: nothing is written without a session id.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from assistant_bridge.errors import ConfigurationError
from assistant_bridge.store import SQLiteStore

log = logging.getLogger(__name__)

MAX_ANSWER_CHARS = 1500
MAX_IDS = 10
DEFAULT_MAX_TURNS = 20
DEFAULT_MAX_BYTES = 64 * 1024
_PURGE_EVERY_SECONDS = 60.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversation_memory (
  kind TEXT NOT NULL, session_id TEXT NOT NULL, seq INTEGER NOT NULL, data TEXT NOT NULL,
  bytes INTEGER NOT NULL, created_at REAL NOT NULL, expires_at REAL NOT NULL,
  PRIMARY KEY (kind, session_id, seq)
);
CREATE INDEX IF NOT EXISTS conversation_memory_expiry ON conversation_memory(expires_at);
"""


@dataclass(frozen=True)
class MemoryLimits:
    """How much one session remembers."""

    max_turns: int = DEFAULT_MAX_TURNS
    max_bytes: int = DEFAULT_MAX_BYTES

    def __post_init__(self) -> None:
        if not 1 <= self.max_turns <= 1000:
            raise ConfigurationError("memory.max_turns must be 1-1000")
        if not 1024 <= self.max_bytes <= 10_000_000:
            raise ConfigurationError("memory.max_bytes must be 1024-10000000")


@dataclass(frozen=True)
class MemoryTurn:
    """One remembered turn.

    :param question: what the user asked (``input.text``, or the query of a client search).
    :param query: what was searched: the rewritten query, or the question itself.
    :param answer: the answer shown (cut to :data:`MAX_ANSWER_CHARS`); empty for "I don't know", no
        results, errors and HAP hits (a blocked answer is never remembered).
    :param result_ids: ids of the search results, in rank order (at most :data:`MAX_IDS`).
    :param cited_ids: ids of the results the answer cites.
    :param outcome: the turn's outcome (``answer``, ``idk``, ``hap``, ``client_search``, ``social``...).
    :param titles: the titles of the results the answer cites (at most :data:`MAX_IDS`): the topic the
        embedded rewriter carries into a follow-up.
    :param first_title: the title of the first search result, whatever the outcome: a turn that was not answered
        ("I don't know") still searched the manual page of the command its question named.
    """

    question: str
    query: str
    answer: str = ""
    result_ids: tuple[str, ...] = ()
    cited_ids: tuple[str, ...] = ()
    outcome: str = ""
    at: float = field(default=0.0, compare=False)
    titles: tuple[str, ...] = ()
    first_title: str = ""

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["result_ids"] = list(self.result_ids)
        data["cited_ids"] = list(self.cited_ids)
        data["titles"] = list(self.titles)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MemoryTurn:
        return cls(
            question=str(data.get("question", "")),
            query=str(data.get("query", "")),
            answer=str(data.get("answer", "")),
            result_ids=tuple(data.get("result_ids") or ()),
            cited_ids=tuple(data.get("cited_ids") or ()),
            outcome=str(data.get("outcome", "")),
            at=float(data.get("at") or 0.0),
            titles=tuple(str(t) for t in data.get("titles") or ()),
            first_title=str(data.get("first_title") or ""),
        )

    def bounded(self) -> MemoryTurn:
        """This turn with the answer cut and the id lists shortened."""
        answer = self.answer if len(self.answer) <= MAX_ANSWER_CHARS else self.answer[: MAX_ANSWER_CHARS - 1] + "…"
        return MemoryTurn(
            self.question,
            self.query,
            answer,
            tuple(self.result_ids[:MAX_IDS]),
            tuple(self.cited_ids[:MAX_IDS]),
            self.outcome,
            self.at,
            tuple(t[:200] for t in self.titles[:MAX_IDS]),
            self.first_title[:200],
        )

    @property
    def answered(self) -> bool:
        return self.outcome == "answer" and bool(self.answer)


class ConversationMemory:
    """The ``conversation_memory`` table.

    :param store: the shared SQLite store; the table is created if missing.
    :param clock: seconds since the epoch (tests move it forward to expire turns).
    """

    def __init__(self, store: SQLiteStore, clock: Callable[[], float] = time.time) -> None:
        self._store = store
        self._clock = clock
        self._last_purge = 0.0
        store.ensure_schema("conversation_memory", _SCHEMA)

    def turns(self, kind: str, session_id: str, last: int | None = None) -> list[MemoryTurn]:
        """The unexpired turns of a session, oldest first (only the ``last`` ones when given)."""
        rows = self._store.execute(
            "SELECT data FROM conversation_memory WHERE kind = ? AND session_id = ? AND expires_at > ? "
            "ORDER BY seq DESC LIMIT ?",
            (kind, session_id, self._clock(), -1 if last is None else max(0, last)),
        ).fetchall()
        return [MemoryTurn.from_json(json.loads(r[0])) for r in reversed(rows)]

    def append(
        self,
        kind: str,
        session_id: str,
        turn: MemoryTurn,
        ttl: float,
        limits: MemoryLimits = MemoryLimits(),
        *,
        replace_last_outcome: str | None = None,
    ) -> None:
        """Remember ``turn``, push the session's expiry to ``now + ttl`` and drop the oldest turns beyond
        ``limits``.

        :param replace_last_outcome: when the newest remembered turn has this outcome (``client_search``: the
            client has now sent the results of that search), ``turn`` replaces it instead of following it.
        """
        now = self._clock()
        self._maybe_purge(now)
        turn = replace(turn.bounded(), at=now)
        data = json.dumps(turn.to_json(), ensure_ascii=False)
        size = len(data.encode("utf-8"))
        if size > limits.max_bytes:  # one huge turn: keep the start of its question and query only
            cut = limits.max_bytes // 10  # characters; UTF-8 takes at most 4 bytes each, plus the JSON around
            turn = MemoryTurn(
                turn.question[:cut], turn.query[:cut], "", turn.result_ids[:3], turn.cited_ids[:3], turn.outcome, now
            )
            data = json.dumps(turn.to_json(), ensure_ascii=False)
            size = len(data.encode("utf-8"))
        if replace_last_outcome is not None:
            last = self._store.execute(
                "SELECT seq, data FROM conversation_memory WHERE kind = ? AND session_id = ? AND expires_at > ? "
                "ORDER BY seq DESC LIMIT 1",
                (kind, session_id, now),
            ).fetchone()
            if last is not None and json.loads(last[1]).get("outcome") == replace_last_outcome:
                self._store.execute(
                    "DELETE FROM conversation_memory WHERE kind = ? AND session_id = ? AND seq = ?",
                    (kind, session_id, last[0]),
                )
        # one statement, so two workers appending to one session never get the same seq
        self._store.execute(
            "INSERT INTO conversation_memory (kind, session_id, seq, data, bytes, created_at, expires_at) "
            "SELECT ?, ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, ? FROM conversation_memory WHERE kind = ? AND session_id = ?",
            (kind, session_id, data, size, now, now + ttl, kind, session_id),
        )
        self._store.execute(
            "UPDATE conversation_memory SET expires_at = ? WHERE kind = ? AND session_id = ?",
            (now + ttl, kind, session_id),
        )
        dropped = self._trim(kind, session_id, limits)
        if dropped:
            log.info("conversation.memory_trimmed", extra={"kind": kind, "dropped": dropped})

    def _trim(self, kind: str, session_id: str, limits: MemoryLimits) -> int:
        rows = self._store.execute(
            "SELECT seq, bytes FROM conversation_memory WHERE kind = ? AND session_id = ? ORDER BY seq DESC",
            (kind, session_id),
        ).fetchall()
        total = 0
        keep_from: int | None = None
        for n, (seq, size) in enumerate(rows):
            total += size
            if n >= limits.max_turns or (total > limits.max_bytes and n > 0):
                keep_from = seq + 1
                break
        if keep_from is None:
            return 0
        cur = self._store.execute(
            "DELETE FROM conversation_memory WHERE kind = ? AND session_id = ? AND seq < ?",
            (kind, session_id, keep_from),
        )
        return int(cur.rowcount)

    def clear(self, kind: str, session_id: str) -> None:
        self._store.execute("DELETE FROM conversation_memory WHERE kind = ? AND session_id = ?", (kind, session_id))

    def stats(self, kind: str, session_id: str) -> tuple[int, int]:
        """``(turns, bytes)`` stored for a session, expired or not (for tests and operators)."""
        row = self._store.execute(
            "SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM conversation_memory WHERE kind = ? AND session_id = ?",
            (kind, session_id),
        ).fetchone()
        return int(row[0]), int(row[1])

    def purge_expired(self) -> int:
        """Delete expired turns; returns how many."""
        cur = self._store.execute("DELETE FROM conversation_memory WHERE expires_at <= ?", (self._clock(),))
        return int(cur.rowcount)

    def _maybe_purge(self, now: float) -> None:
        if now - self._last_purge >= _PURGE_EVERY_SECONDS:
            self._last_purge = now
            self.purge_expired()


def history_for_prompt(turns: Sequence[MemoryTurn], answer_chars: int = 400) -> list[tuple[str, str]]:
    """``(role, text)`` pairs of the remembered turns for a rewrite prompt, answers cut to ``answer_chars``.
    Turns blocked by the HAP filter are left out."""
    out: list[tuple[str, str]] = []
    for t in turns:
        if t.outcome == "hap":
            continue
        out.append(("user", t.question))
        if t.answer:
            out.append(("assistant", t.answer[:answer_chars]))
    return out
