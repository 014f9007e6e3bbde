"""The metadata store's schema versions: a data directory written before the schema had a version (the
documents table of that time had no ``url``, ``language``, ``status`` or ``text`` column and no job queue) is
opened, completed and read without losing a row; a newer one is refused; workers opening one file at once
migrate it once. The other components' tables (sessions, memory, executions, rate limits) have versions of
their own."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from assistant_bridge.conversation.memory import ConversationMemory
from assistant_bridge.conversation.sessions import SessionStore
from assistant_bridge.domain import Document, Ownership
from assistant_bridge.errors import ConfigurationError
from assistant_bridge.store import SCHEMA_VERSION, SQLiteStore
from assistant_bridge.tools.executions import ExecutionStore
from assistant_bridge.tools.sessions import SessionAccess
from assistant_bridge.web.ratelimit import RateLimiter

pytestmark = pytest.mark.unit

_LEGACY = """
CREATE TABLE documents (
  id TEXT PRIMARY KEY, title TEXT, filename TEXT, content_hash TEXT, mime_type TEXT,
  owner TEXT, workspaces TEXT, tenant TEXT, session_id TEXT, chunk_count INTEGER, created_at REAL
);
CREATE TABLE embeddings (model TEXT, text_hash TEXT, vector BLOB, PRIMARY KEY (model, text_hash));
INSERT INTO documents VALUES ('d1', 'VPN guide', 'vpn.md', 'h1', 'text/markdown', 'alice', '["ws"]', '', '', 3, 10.0);
"""


def _legacy(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.executescript(_LEGACY)
    conn.close()


def test_a_pre_version_data_directory_is_completed_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "meta.sqlite3"
    _legacy(path)
    store = SQLiteStore(path)
    assert store.schema_version() == SCHEMA_VERSION
    doc = store.get_document("d1")
    assert doc is not None and (doc.title, doc.chunk_count, doc.url, doc.text) == ("VPN guide", 3, None, "")
    assert doc.status == "ready"
    assert doc.ownership.workspace_ids == ("ws",)
    store.put_document(
        Document(
            id="d2",
            title="Expenses",
            filename="e.md",
            content_hash="h2",
            mime_type="text/markdown",
            ownership=Ownership(owner_user_id="bob"),
            chunk_count=1,
            created_at=11.0,
            url="https://x.example/e",
            language="en",
            status="ready",
            text="Submit within 30 days.",
        )
    )
    assert [d.id for d in store.list_documents()] == ["d1", "d2"]
    assert store.get_document("d2").url == "https://x.example/e"  # type: ignore[union-attr]
    assert store.jobs_in_state("queued") == []  # the job queue table was created
    reopened = SQLiteStore(path)
    assert reopened.schema_version() == SCHEMA_VERSION and len(reopened.list_documents()) == 2


def test_a_version_1_data_directory_gets_the_searchable_column_and_keeps_its_jobs(tmp_path: Path) -> None:
    path = tmp_path / "meta.sqlite3"
    SQLiteStore(path).add_job(
        {"id": "j1", "owner": "o", "kind": "text", "state": "queued", "document_id": "d", "ownership": "{}",
         "payload": "p", "created_at": 1.0, "updated_at": 1.0}
    )  # fmt: skip
    conn = sqlite3.connect(path)  # as version 1 wrote it: no searchable column
    conn.execute("ALTER TABLE ingest_jobs DROP COLUMN searchable")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    store = SQLiteStore(path)
    assert store.schema_version() == SCHEMA_VERSION == 3
    job = store.get_job("j1")
    assert job is not None and job["searchable"] == "" and job["state"] == "queued"
    store.update_job("j1", searchable="lexical")
    assert store.get_job("j1")["searchable"] == "lexical"  # type: ignore[index]


def test_a_version_2_data_directory_gets_the_title_index(tmp_path: Path) -> None:
    path = tmp_path / "meta.sqlite3"
    SQLiteStore(path)
    conn = sqlite3.connect(path)  # as version 2 wrote it: no index on the titles
    conn.execute("DROP INDEX documents_title")
    conn.execute("PRAGMA user_version = 2")
    conn.commit()
    conn.close()
    store = SQLiteStore(path)
    assert store.schema_version() == 3
    plan = store.execute("EXPLAIN QUERY PLAN SELECT id FROM documents WHERE title GLOB 'ssh(*'").fetchall()
    assert "documents_title" in str(plan)


def test_a_newer_data_directory_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "meta.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(ConfigurationError, match="newer version"):
        SQLiteStore(path)


def test_workers_opening_one_file_at_once_migrate_it_once(tmp_path: Path) -> None:
    """Eight workers open a file written before WAL and versions, twenty times over. Switching it to WAL needs
    an exclusive lock that SQLite refuses at once ("database is locked", no busy timeout) while another
    connection switches it; before the retry, about one round in twenty-five failed so."""
    for round_ in range(20):
        path = tmp_path / f"meta{round_}.sqlite3"
        _legacy(path)
        errors: list[BaseException] = []

        def open_it(path: Path = path, errors: list[BaseException] = errors) -> None:
            try:
                SQLiteStore(path)
            except BaseException as exc:  # noqa: BLE001 - reported by the assert below
                errors.append(exc)

        threads = [threading.Thread(target=open_it) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == [] and SQLiteStore(path).schema_version() == SCHEMA_VERSION
        assert SQLiteStore(path).get_document("d1") is not None


_COMPONENT = "CREATE TABLE IF NOT EXISTS notes (id TEXT PRIMARY KEY, body TEXT, created_at REAL NOT NULL);"


def test_a_component_schema_is_versioned_completed_and_stepped_once(tmp_path: Path) -> None:
    """Sessions, memory, executions and rate limits keep their tables in the store's file, each with a version."""
    path = tmp_path / "meta.sqlite3"
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT); INSERT INTO notes VALUES ('n1', 'old');")
    conn.close()
    store = SQLiteStore(path)
    step = (2, "CREATE INDEX IF NOT EXISTS notes_created ON notes (created_at); UPDATE notes SET body = body || '!'")
    store.ensure_schema("notes", _COMPONENT, version=2, steps=[step])
    assert store.component_version("notes") == 2
    assert store.execute("SELECT id, body, created_at FROM notes").fetchall() == [("n1", "old!", None)]
    store.ensure_schema("notes", _COMPONENT, version=2, steps=[step])  # done: the step does not run again
    assert store.execute("SELECT body FROM notes").fetchone() == ("old!",)
    with pytest.raises(ConfigurationError, match=r"\(notes tables\) was written by a newer version"):
        SQLiteStore(path).ensure_schema("notes", _COMPONENT, version=1)


def test_every_component_records_its_version(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "meta.sqlite3")
    ConversationMemory(store)
    SessionStore(store)
    ExecutionStore(store)
    SessionAccess(store)
    RateLimiter(store)
    rows = dict(store.execute("SELECT component, version FROM schema_versions").fetchall())
    assert set(rows) == {"conversation_memory", "message_sessions", "tool_executions", "tool_sessions", "rate_limits"}
