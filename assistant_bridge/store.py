"""The metadata store: documents and the embedding cache, in SQLite under the data directory.

The schema has a version (``PRAGMA user_version``, :data:`SCHEMA_VERSION`). Opening a data directory of an
older version completes its tables (creates the missing ones, adds the columns added since; rows are kept) and
runs the steps from its version to this one, in one ``BEGIN IMMEDIATE`` transaction, so several workers
starting at once migrate it once. Version 0 is a data directory written before the schema had a version. A
data directory of a newer version is refused with a clear error rather than misread. Rows are written and
read by column name, never by position.

The other components that keep tables in SQLite (message and tool sessions, conversation memory, tool
executions, rate limits, the exact vector index's own file) follow the same rules through
:meth:`SQLiteStore.ensure_schema`, each with its own version in the ``schema_versions`` table.

SQLite in WAL mode is safe for several gunicorn workers on one machine. A multi-machine deployment points
``data_dir`` at storage each node owns and keeps documents on the search backend (``docs/deploy.md``).
"""

from __future__ import annotations

import errno
import json
import re
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from assistant_bridge.core.scope import ScopeClauses, scope_clauses
from assistant_bridge.domain import Document, Ownership, Scope
from assistant_bridge.errors import ConfigurationError, InsufficientStorage
from assistant_bridge.text import MANUAL_PAGE_NAME

_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
  id TEXT PRIMARY KEY, title TEXT, filename TEXT, content_hash TEXT, mime_type TEXT,
  owner TEXT, workspaces TEXT, tenant TEXT, session_id TEXT, chunk_count INTEGER,
  created_at REAL, url TEXT, language TEXT, status TEXT, text TEXT
);
CREATE INDEX IF NOT EXISTS documents_hash ON documents(content_hash);
CREATE INDEX IF NOT EXISTS documents_session ON documents(session_id);
CREATE INDEX IF NOT EXISTS documents_listing ON documents(created_at, id);
CREATE INDEX IF NOT EXISTS documents_title ON documents(title);
CREATE TABLE IF NOT EXISTS ingest_intents (
  document_id TEXT PRIMARY KEY, kind TEXT NOT NULL, worker TEXT NOT NULL, started_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS ingest_jobs (
  id TEXT PRIMARY KEY, owner TEXT NOT NULL, kind TEXT NOT NULL, state TEXT NOT NULL, stage TEXT NOT NULL DEFAULT '',
  document_id TEXT NOT NULL, filename TEXT NOT NULL DEFAULT '', title TEXT, url TEXT, mime_type TEXT,
  fmt TEXT, ownership TEXT NOT NULL, payload TEXT NOT NULL, bytes INTEGER NOT NULL DEFAULT 0,
  chunks_total INTEGER NOT NULL DEFAULT 0, chunks_done INTEGER NOT NULL DEFAULT 0, created INTEGER,
  error_code TEXT, error_message TEXT, cancel INTEGER NOT NULL DEFAULT 0, worker TEXT NOT NULL DEFAULT '',
  attempts INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL, updated_at REAL NOT NULL,
  searchable TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS ingest_jobs_queue ON ingest_jobs(state, created_at);
CREATE TABLE IF NOT EXISTS embeddings (
  model TEXT, text_hash TEXT, vector BLOB, PRIMARY KEY (model, text_hash)
);
"""


SCHEMA_VERSION = 3  # 2: ingest_jobs.searchable (a column added to _SCHEMA: the upgrade completes the table);
# 3: documents_title (an index: completing the tables creates it)
# later versions: append ``(version, sql)`` steps here for what completing the tables cannot do (data); never
# edit a released one
_STEPS: tuple[tuple[int, str], ...] = ()
_DOC_COLUMNS = (
    "id",
    "title",
    "filename",
    "content_hash",
    "mime_type",
    "owner",
    "workspaces",
    "tenant",
    "session_id",
    "chunk_count",
    "created_at",
    "url",
    "language",
    "status",
    "text",
)
_DOC_SELECT = f"SELECT {', '.join(_DOC_COLUMNS)} FROM documents"
_TABLE = re.compile(r"CREATE TABLE IF NOT EXISTS (\w+) \((.*?)\);", re.S)
_COMPONENTS = "CREATE TABLE IF NOT EXISTS schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL)"
_COMMAND_NAME = re.compile(MANUAL_PAGE_NAME)  # holds no GLOB wildcard
_CONSTRAINT = re.compile(r"^(PRIMARY|UNIQUE|CHECK|FOREIGN|CONSTRAINT)\b", re.I)


class SQLiteStore:
    """Thread-safe (one connection per thread) and process-safe (SQLite locking, WAL).

    :param schema: the tables of this file (``CREATE TABLE IF NOT EXISTS`` statements). The default schema is
        versioned (see the module docstring); another one (a backend's own file) is created as given.
    :raises ConfigurationError: for a data directory written by a newer version of the service.
    """

    def __init__(self, path: Path | str, schema: str = _SCHEMA, component: str = "") -> None:
        self.path = Path(path)
        self._local = threading.local()
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        if schema is _SCHEMA:
            self._migrate()
        else:
            self.ensure_schema(component or self.path.stem, schema)

    def schema_version(self) -> int:
        return int(self._conn().execute("PRAGMA user_version").fetchone()[0])

    def _migrate(self) -> None:
        conn = self._conn()
        if self.schema_version() == SCHEMA_VERSION:
            return
        with _write_transaction(conn):
            version = self.schema_version()  # again, under the write lock: another worker may have done it
            _upgrade(conn, str(self.path), version, SCHEMA_VERSION, _SCHEMA, _STEPS)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def component_version(self, component: str) -> int:
        """The schema version of ``component``'s tables in this file (0: not recorded)."""
        self._conn().execute(_COMPONENTS)
        row = self._conn().execute("SELECT version FROM schema_versions WHERE component = ?", (component,)).fetchone()
        return int(row[0]) if row else 0

    def ensure_schema(
        self, component: str, schema: str, version: int = 1, steps: Sequence[tuple[int, str]] = ()
    ) -> None:
        """Bring the tables of one component of the service (sessions, conversation memory, tool executions,
        rate limits, a backend's own file) to ``version``, by the rules of the store's own schema (module
        docstring), with the version kept per component in ``schema_versions``: tables that exist without a
        recorded version get the columns added since; ``steps`` (``(version, sql)``, never edited once
        released) run once, in order; a newer version is refused. One ``BEGIN IMMEDIATE`` transaction, so
        workers starting at once migrate a file once."""
        if self.component_version(component) == version:
            return
        conn = self._conn()
        with _write_transaction(conn):
            current = self.component_version(component)  # again, under the write lock
            _upgrade(conn, f"{self.path} ({component} tables)", current, version, schema, steps)
            conn.execute("INSERT OR REPLACE INTO schema_versions VALUES (?, ?)", (component, version))

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(str(self.path), timeout=30, isolation_level=None, check_same_thread=False)
            _write_ahead_log(conn)
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=30000")
            self._local.conn = conn
        return conn

    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        with _full_disk_errors():
            return self._conn().execute(sql, params)

    def executescript(self, sql: str) -> None:
        with _full_disk_errors():
            self._conn().executescript(sql)

    # -- documents ----------------------------------------------------------------------------------
    def put_document(self, doc: Document) -> None:
        o = doc.ownership
        self.execute(
            f"INSERT OR REPLACE INTO documents ({', '.join(_DOC_COLUMNS)}) VALUES ({', '.join('?' * len(_DOC_COLUMNS))})",
            (
                doc.id,
                doc.title,
                doc.filename,
                doc.content_hash,
                doc.mime_type,
                o.owner_user_id,
                json.dumps(list(o.workspace_ids)),
                o.tenant,
                o.session_id,
                doc.chunk_count,
                doc.created_at,
                doc.url,
                doc.language,
                doc.status,
                doc.text,
            ),
        )

    def get_document(self, document_id: str) -> Document | None:
        row = self.execute(f"{_DOC_SELECT} WHERE id = ?", (document_id,)).fetchone()
        return _doc(row) if row else None

    def delete_document(self, document_id: str) -> bool:
        return self.execute("DELETE FROM documents WHERE id = ?", (document_id,)).rowcount > 0

    def list_documents(self, limit: int = 1000) -> list[Document]:
        """The oldest ``limit`` documents of anyone (maintenance and tests; requests use :meth:`documents_page`)."""
        rows = self.execute(f"{_DOC_SELECT} ORDER BY created_at LIMIT ?", (limit,)).fetchall()
        return [_doc(r) for r in rows]

    def manual_pages(self, names: Iterable[str], scope: Scope) -> list[tuple[str, str, str]]:
        """``(id, title, language)`` of the documents ``scope`` may see that are the manual page of one of
        ``names`` (the title "ssh(1): OpenSSH remote login client" for ``ssh``; the rule of
        :meth:`documents_page`). A name is a command's (letters, digits, ``._+-``); anything else matches
        nothing."""
        where, params = _scope_sql(scope_clauses(scope))
        found: list[tuple[str, str, str]] = []
        for name in dict.fromkeys(names):
            if _COMMAND_NAME.fullmatch(name):
                sql = f"SELECT id, title, language FROM documents WHERE title GLOB ? AND {' AND '.join(where)}"
                rows = self.execute(sql, [f"{name}(*", *params])
                found.extend((str(i), str(t), str(lang or "")) for i, t, lang in rows)
        return found

    def documents_page(
        self,
        scope: Scope,
        *,
        limit: int = 100,
        after: tuple[float, str] | None = None,
        session_id: str | None = None,
        status: str | None = None,
        mime_type: str | None = None,
    ) -> tuple[list[Document], int]:
        """The documents ``scope`` may see, newest first, at most ``limit`` of them after the keyset ``after``
        (``(created_at, id)`` of the last one of the previous page), and how many match in all.

        The visibility rule is applied in SQL (:func:`_scope_sql`, the rule of
        :func:`~assistant_bridge.core.scope.chunk_visible`), so a page is never emptied by other people's rows.
        """
        where, params = _scope_sql(scope_clauses(scope))
        for column, value in (("session_id", session_id), ("status", status), ("mime_type", mime_type)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        total = int(self.execute(f"SELECT COUNT(*) FROM documents WHERE {' AND '.join(where)}", params).fetchone()[0])
        if after is not None:
            where.append("(created_at < ? OR (created_at = ? AND id < ?))")
            params.extend([after[0], after[0], after[1]])
        rows = self.execute(
            f"{_DOC_SELECT} WHERE {' AND '.join(where)} ORDER BY created_at DESC, id DESC LIMIT ?",
            [*params, limit],
        ).fetchall()
        return [_doc(r) for r in rows], total

    def set_document_ownership(self, document_id: str, ownership: Ownership) -> None:
        self.execute(
            "UPDATE documents SET owner=?, workspaces=?, tenant=?, session_id=? WHERE id=?",
            (
                ownership.owner_user_id,
                json.dumps(list(ownership.workspace_ids)),
                ownership.tenant,
                ownership.session_id,
                document_id,
            ),
        )

    # -- ingestion intents (crash safety, ``ingest.recovery``) --------------------------------------------
    def begin_intent(self, document_id: str, kind: str, worker: str) -> None:
        self.execute(
            "INSERT OR REPLACE INTO ingest_intents (document_id, kind, worker, started_at) VALUES (?,?,?,?)",
            (document_id, kind, worker, now()),
        )

    def end_intent(self, document_id: str) -> None:
        self.execute("DELETE FROM ingest_intents WHERE document_id = ?", (document_id,))

    def abandon_intent(self, document_id: str) -> None:
        """Leave an intent to the next recovery pass of any process (its writer gave up on it)."""
        self.execute("UPDATE ingest_intents SET worker = '' WHERE document_id = ?", (document_id,))

    def intents(self) -> list[tuple[str, str, str, float]]:
        """Every open intent: ``(document_id, kind, worker, started_at)``."""
        rows = self.execute("SELECT document_id, kind, worker, started_at FROM ingest_intents ORDER BY started_at")
        return [(str(a), str(b), str(c), float(d)) for a, b, c, d in rows.fetchall()]

    def claim_intent(self, document_id: str, worker: str, new_worker: str) -> bool:
        """Take an intent over from ``worker`` (dead, or ``""``); only one process wins the race."""
        cur = self.execute(
            "UPDATE ingest_intents SET worker = ? WHERE document_id = ? AND worker = ?",
            (new_worker, document_id, worker),
        )
        return cur.rowcount == 1

    # -- ingestion jobs -----------------------------------------------------------------------------
    _JOB_FIELDS = frozenset(
        {
            "state",
            "stage",
            "chunks_total",
            "chunks_done",
            "created",
            "error_code",
            "error_message",
            "cancel",
            "worker",
            "attempts",
            "document_id",
            "searchable",
        }
    )

    def add_job(self, job: dict[str, Any]) -> None:
        names = ", ".join(job)
        self.execute(f"INSERT INTO ingest_jobs ({names}) VALUES ({', '.join('?' * len(job))})", list(job.values()))

    def get_job(self, job_id: str) -> dict[str, Any] | None:
        rows = self._job_rows("SELECT * FROM ingest_jobs WHERE id = ?", (job_id,))
        return rows[0] if rows else None

    def update_job(self, job_id: str, **fields: Any) -> None:
        unknown = set(fields) - self._JOB_FIELDS
        if unknown:
            raise ValueError(f"not a job field: {sorted(unknown)}")
        sets = ", ".join(f"{k} = ?" for k in fields)
        self.execute(f"UPDATE ingest_jobs SET {sets}, updated_at = ? WHERE id = ?", [*fields.values(), now(), job_id])

    def claim_job(self, worker: str) -> dict[str, Any] | None:
        """Move the oldest queued job to ``running`` for ``worker``; one process wins each job."""
        rows = self._job_rows(
            "UPDATE ingest_jobs SET state = 'running', worker = ?, attempts = attempts + 1, updated_at = ? "
            "WHERE id = (SELECT id FROM ingest_jobs WHERE state = 'queued' ORDER BY created_at, id LIMIT 1) "
            "AND state = 'queued' RETURNING *",
            (worker, now()),
        )
        return rows[0] if rows else None

    def jobs_in_state(self, state: str, limit: int = 1000) -> list[dict[str, Any]]:
        return self._job_rows("SELECT * FROM ingest_jobs WHERE state = ? ORDER BY created_at LIMIT ?", (state, limit))

    def requeue_job(self, job_id: str, worker: str) -> bool:
        """Give a running job of ``worker`` (gone) back to the queue; only one process wins. What it had staged
        is removed by the recovery of the document's write intent, so it is searchable by nothing again."""
        cur = self.execute(
            "UPDATE ingest_jobs SET state = 'queued', worker = '', searchable = '', updated_at = ? "
            "WHERE id = ? AND worker = ? AND state = 'running'",
            (now(), job_id, worker),
        )
        return cur.rowcount == 1

    def _job_rows(self, sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
        cur = self.execute(sql, params)
        names = [d[0] for d in cur.description or ()]
        return [dict(zip(names, row, strict=False)) for row in cur.fetchall()]

    # -- embedding cache ----------------------------------------------------------------------------
    def cached_vectors(self, model: str, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        hashes = list(hashes)
        out: dict[str, np.ndarray] = {}
        for i in range(0, len(hashes), 500):
            part = hashes[i : i + 500]
            q = f"SELECT text_hash, vector FROM embeddings WHERE model = ? AND text_hash IN ({','.join('?' * len(part))})"
            for h, blob in self.execute(q, (model, *part)).fetchall():
                out[h] = np.frombuffer(blob, dtype=np.float32)
        return out

    def cache_vectors(self, model: str, items: dict[str, np.ndarray]) -> None:
        conn = self._conn()
        with _full_disk_errors(), conn:
            conn.execute("BEGIN")
            conn.executemany(
                "INSERT OR REPLACE INTO embeddings VALUES (?,?,?)",
                [(model, h, np.asarray(v, dtype=np.float32).tobytes()) for h, v in items.items()],
            )


@contextmanager
def _full_disk_errors() -> Iterator[None]:
    """A full disk (SQLITE_FULL, ENOSPC) is :class:`InsufficientStorage`; the statement was rolled back."""
    try:
        yield
    except sqlite3.OperationalError as exc:
        if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or "disk is full" in str(exc):
            raise InsufficientStorage("the data directory is out of space; nothing was written") from None
        raise
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise InsufficientStorage("the data directory is out of space; nothing was written") from None
        raise


def _scope_sql(c: ScopeClauses) -> tuple[list[str], list[Any]]:
    """The visibility rule as SQL over the ``documents`` table: clauses to AND, and their parameters."""
    where = ["(session_id = '' OR session_id = ? OR owner = ?)"]
    params: list[Any] = [c.session_id, c.user_id]
    if c.document_ids is not None:
        where.append(f"id IN ({','.join('?' * len(c.document_ids))})" if c.document_ids else "0")
        params.extend(c.document_ids)
    if not c.restricted:
        return where, params
    workspaces = (
        f"EXISTS (SELECT 1 FROM json_each(documents.workspaces) WHERE value IN ({','.join('?' * len(c.workspaces))}))"
    )
    user_rule = (
        "owner = ? OR (session_id != '' AND session_id = ?)"
        + (f" OR {workspaces}" if c.workspaces else "")
        + " OR (owner = '' AND workspaces = '[]')"
    )
    user_params: list[Any] = [c.user_id, c.session_id, *c.workspaces]
    if c.tenant is not None:
        where.append(f"(tenant = ? OR (tenant = '' AND ({user_rule})))")
        params.extend([c.tenant, *user_params])
    else:
        where.append(f"(tenant = '' AND ({user_rule}))")
        params.extend(user_params)
    return where, params


def _doc(row: Sequence[Any]) -> Document:
    (id_, title, filename, chash, mime, owner, ws, tenant, session, count, created, url, lang, status, text) = row
    return Document(
        id=id_,
        title=title,
        filename=filename,
        content_hash=chash,
        mime_type=mime,
        ownership=Ownership(
            owner_user_id=owner, workspace_ids=tuple(json.loads(ws or "[]")), tenant=tenant, session_id=session
        ),
        chunk_count=count,
        created_at=created,
        url=url,
        language=lang or "",
        status=status or "ready",  # a row written before the column existed
        text=text or "",
    )


def _write_ahead_log(conn: sqlite3.Connection, wait: float = 30.0) -> None:
    """Put the file in WAL mode. A file not in it yet (new, or written before) needs an exclusive lock for the
    switch, and SQLite answers "database is locked" at once, without its busy timeout, to a connection that
    asks while another one switches it: workers that open one file together retry for up to ``wait`` s."""
    deadline = time.monotonic() + wait
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


@contextmanager
def _write_transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """One ``BEGIN IMMEDIATE`` transaction: workers that open a file at once take turns."""
    with _full_disk_errors():
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def _upgrade(
    conn: sqlite3.Connection, what: str, current: int, version: int, schema: str, steps: Sequence[tuple[int, str]]
) -> None:
    """Bring tables at ``current`` to ``version``: refuse a newer one, complete the tables (create the missing
    ones, add the columns added to ``schema`` since), run the steps after ``current`` in order."""
    if current > version:
        raise ConfigurationError(
            f"{what} was written by a newer version of assistant-bridge (schema {current}; this one reads up to "
            f"{version}): upgrade, or point data_dir elsewhere"
        )
    if current < version:
        _complete_tables(conn, schema)
    for step_version, sql in steps:
        if current < step_version <= version:
            for statement in _statements(sql):
                conn.execute(statement)


def _statements(sql: str) -> list[str]:
    return [part.strip() for part in sql.split(";") if part.strip()]


def _columns(body: str) -> list[tuple[str, str]]:
    """``(name, declaration)`` of each column of a ``CREATE TABLE`` body (table constraints left out)."""
    parts, depth, current = [], 0, ""
    for ch in body:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    out = []
    for part in (p.strip() for p in parts):
        if part and not _CONSTRAINT.match(part):
            name, _, declaration = part.partition(" ")
            out.append((name, declaration))
    return out


def _complete_tables(conn: sqlite3.Connection, schema: str) -> None:
    """Create the missing tables and indexes, and add to existing tables the columns they lack (a column
    added this way cannot be a key; ``NOT NULL`` without a default is dropped, as SQLite requires)."""
    for statement in _statements(schema):
        table = _TABLE.match(statement + ";")
        if table is not None:
            name = table.group(1)
            have = {row[1] for row in conn.execute(f"PRAGMA table_info({name})")}
            if have:
                for column, declaration in _columns(table.group(2)):
                    if column not in have:
                        decl = declaration.replace("PRIMARY KEY", "")
                        if "NOT NULL" in decl and "DEFAULT" not in decl:
                            decl = decl.replace("NOT NULL", "")
                        conn.execute(f"ALTER TABLE {name} ADD COLUMN {column} {decl.strip()}")
                continue
        conn.execute(statement)


def now() -> float:
    return time.time()
