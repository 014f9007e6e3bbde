"""The SQLite session store: ownership, expiry, pending actions, two stores on one file."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant_bridge.conversation.sessions import SessionStore
from assistant_bridge.domain import Principal
from assistant_bridge.errors import NotFound
from assistant_bridge.store import SQLiteStore

pytestmark = pytest.mark.unit


def test_sessions_are_shared_through_the_file_and_bound_to_owner_and_assistant(tmp_path: Path) -> None:
    now = [100.0]
    a = SessionStore(SQLiteStore(tmp_path / "m.sqlite3"), lambda: now[0])
    b = SessionStore(SQLiteStore(tmp_path / "m.sqlite3"), lambda: now[0])
    s = a.create("asst", "env", "k|u|", ttl=30)
    a.record_turn(s, {"type": "search", "query": "vpn"})
    got = b.get(s.id, "asst", "env", "k|u|")
    assert got.pending == {"type": "search", "query": "vpn"} and got.turn_count == 1 and got.expires_at == 130
    for args in (("other", "env", "k|u|"), ("asst", "env2", "k|u|"), ("asst", "env", "k|v|")):
        with pytest.raises(NotFound):
            b.get(s.id, *args)
    b.record_turn(got, None)
    assert a.get(s.id, "asst", "env", "k|u|").pending is None
    now[0] = 131
    with pytest.raises(NotFound, match="expired"):
        a.get(s.id, "asst", "env", "k|u|")
    assert b.purge_expired() == 1 and a.purge_expired() == 0


def test_delete_and_owner_key(tmp_path: Path) -> None:
    store = SessionStore(SQLiteStore(tmp_path / "m.sqlite3"))
    s = store.create("a", "e", "o", ttl=60)
    with pytest.raises(NotFound):
        store.delete(s.id, "a", "e", "someone else")
    store.delete(s.id, "a", "e", "o")
    with pytest.raises(NotFound):
        store.get(s.id, "a", "e", "o")
    assert Principal(user_id="u", tenant="t", key_id="key2").owner_key == "key2|u|t"
    assert (
        Principal(user_id="u", key_id="key2").owner_key != Principal(user_id="u", tenant="u", key_id="key2").owner_key
    )
