"""Conversation memory in SQLite: order, bounds (turns and bytes, oldest dropped), expiry, sharing between
stores on one file (gunicorn workers), and its life with /message sessions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant_bridge.conversation.memory import (
    MAX_ANSWER_CHARS,
    ConversationMemory,
    MemoryLimits,
    MemoryTurn,
    history_for_prompt,
)
from assistant_bridge.conversation.sessions import SessionStore
from assistant_bridge.errors import ConfigurationError, NotFound
from assistant_bridge.store import SQLiteStore

pytestmark = pytest.mark.unit


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def turn(n: int, answer: str = "", outcome: str = "answer") -> MemoryTurn:
    return MemoryTurn(f"question {n}", f"query {n}", answer or f"answer {n}", (f"r{n}",), (f"r{n}",), outcome)


def test_turns_come_back_oldest_first_and_round_trip(tmp_path: Path) -> None:
    mem = ConversationMemory(SQLiteStore(tmp_path / "m.sqlite3"), Clock())
    for n in range(3):
        mem.append("message", "s1", turn(n), ttl=60)
    mem.append("message", "s2", turn(9), ttl=60)
    got = mem.turns("message", "s1")
    assert [t.question for t in got] == ["question 0", "question 1", "question 2"]
    assert got[0] == turn(0) and got[0].at == 1000.0
    assert [t.question for t in mem.turns("message", "s1", last=2)] == ["question 1", "question 2"]
    assert mem.turns("tool", "s1") == [] and [t.question for t in mem.turns("message", "s2")] == ["question 9"]


def test_max_turns_drops_the_oldest(tmp_path: Path) -> None:
    mem = ConversationMemory(SQLiteStore(tmp_path / "m.sqlite3"), Clock())
    for n in range(7):
        mem.append("message", "s", turn(n), ttl=60, limits=MemoryLimits(max_turns=3))
    assert [t.question for t in mem.turns("message", "s")] == ["question 4", "question 5", "question 6"]
    assert mem.stats("message", "s")[0] == 3


def test_max_bytes_drops_the_oldest_and_keeps_the_newest(tmp_path: Path) -> None:
    mem = ConversationMemory(SQLiteStore(tmp_path / "m.sqlite3"), Clock())
    limits = MemoryLimits(max_turns=100, max_bytes=2048)
    for n in range(10):
        mem.append("message", "s", turn(n, answer="x" * 500), ttl=60, limits=limits)
    count, size = mem.stats("message", "s")
    assert size <= 2048 and 1 <= count < 10
    assert mem.turns("message", "s")[-1].question == "question 9"
    # one turn larger than the whole budget is kept, without its answer
    mem.append(
        "message", "big", MemoryTurn("q" * 900, "q" * 900, "y" * 1400), ttl=60, limits=MemoryLimits(max_bytes=1024)
    )
    (only,) = mem.turns("message", "big")
    assert only.answer == "" and only.question.startswith("qqq") and mem.stats("message", "big")[1] <= 1024


def test_long_answers_and_id_lists_are_cut(tmp_path: Path) -> None:
    mem = ConversationMemory(SQLiteStore(tmp_path / "m.sqlite3"), Clock())
    mem.append("message", "s", MemoryTurn("q", "q", "a" * 5000, tuple(str(i) for i in range(50))), ttl=60)
    (t,) = mem.turns("message", "s")
    assert len(t.answer) == MAX_ANSWER_CHARS and t.answer.endswith("…") and len(t.result_ids) == 10


def test_turns_expire_with_the_ttl_pushed_back_by_each_turn(tmp_path: Path) -> None:
    clock = Clock()
    mem = ConversationMemory(SQLiteStore(tmp_path / "m.sqlite3"), clock)
    mem.append("message", "s", turn(0), ttl=60)
    clock.now += 50
    mem.append("message", "s", turn(1), ttl=60)  # both turns now expire at 1110
    clock.now += 50
    assert len(mem.turns("message", "s")) == 2
    clock.now += 11
    assert mem.turns("message", "s") == []
    assert mem.purge_expired() == 2 and mem.stats("message", "s") == (0, 0)


def test_two_stores_on_one_file_share_memory_and_number_turns_in_order(tmp_path: Path) -> None:
    a = ConversationMemory(SQLiteStore(tmp_path / "m.sqlite3"), Clock())
    b = ConversationMemory(SQLiteStore(tmp_path / "m.sqlite3"), Clock())
    a.append("message", "s", turn(0), ttl=60)
    b.append("message", "s", turn(1), ttl=60)
    a.append("message", "s", turn(2), ttl=60)
    assert [t.question for t in b.turns("message", "s")] == ["question 0", "question 1", "question 2"]


def test_replace_last_outcome_completes_a_client_search(tmp_path: Path) -> None:
    mem = ConversationMemory(SQLiteStore(tmp_path / "m.sqlite3"), Clock())
    mem.append("message", "s", turn(0), ttl=60)
    mem.append("message", "s", MemoryTurn("vpn?", "vpn?", outcome="client_search"), ttl=60)
    mem.append(
        "message",
        "s",
        MemoryTurn("vpn?", "vpn?", "Install it.", outcome="answer"),
        ttl=60,
        replace_last_outcome="client_search",
    )
    assert [(t.question, t.outcome) for t in mem.turns("message", "s")] == [
        ("question 0", "answer"),
        ("vpn?", "answer"),
    ]
    mem.append("message", "s", turn(3), ttl=60, replace_last_outcome="client_search")  # nothing to replace
    assert len(mem.turns("message", "s")) == 3


def test_limits_are_checked() -> None:
    for bad in ({"max_turns": 0}, {"max_bytes": 10}, {"max_turns": 5000}):
        with pytest.raises(ConfigurationError):
            MemoryLimits(**bad)


def test_prompt_history_skips_blocked_turns_and_cuts_answers() -> None:
    turns = [turn(0, answer="a" * 1000), MemoryTurn("rude", "rude", outcome="hap"), turn(2, outcome="idk", answer=" ")]
    pairs = history_for_prompt(turns, answer_chars=50)
    assert pairs[0] == ("user", "question 0") and pairs[1] == ("assistant", "a" * 50)
    assert ("user", "rude") not in pairs


def test_session_store_keeps_memory_with_the_session(tmp_path: Path) -> None:
    clock = Clock()
    store = SQLiteStore(tmp_path / "m.sqlite3")
    sessions = SessionStore(store, clock)
    s = sessions.create("a", "e", "owner", ttl=30)
    sessions.record_turn(s, None, turn(0))
    sessions.record_turn(sessions.get(s.id, "a", "e", "owner"), None, turn(1), MemoryLimits(max_turns=1))
    assert [t.question for t in sessions.history(s)] == ["question 1"]
    other = sessions.create("a", "e", "owner", ttl=30)
    sessions.record_turn(other, None, turn(5))
    sessions.delete(s.id, "a", "e", "owner")
    assert sessions.memory.stats("message", s.id) == (0, 0) and len(sessions.history(other)) == 1
    clock.now += 31
    with pytest.raises(NotFound, match="expired"):
        sessions.get(other.id, "a", "e", "owner")
    assert sessions.purge_expired() == 1 and sessions.memory.stats("message", other.id) == (0, 0)


def test_stored_rows_hold_json_with_every_field(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "m.sqlite3")
    ConversationMemory(store, Clock()).append("tool", "s", turn(1), ttl=60)
    data = json.loads(store.execute("SELECT data FROM conversation_memory").fetchone()[0])
    assert set(data) == {
        "question",
        "query",
        "answer",
        "result_ids",
        "cited_ids",
        "outcome",
        "at",
        "titles",
        "first_title",
    }
