"""Exact dense search in numpy beside Milvus Lite: the store of record stays Milvus, the dense reads do not.

Measured on this project's machines (docs/benchmarks.md): Milvus Lite 3.x is a pure-Python engine; its FLAT
search copies and re-normalises the whole matrix on every query, and a query by primary key scans the
collection, so a dense ``/v1/search`` over 11k chunks spent most of its time waiting for the side process,
while exact top-10 in numpy over the same vectors takes about half a millisecond. HNSW in Milvus Lite lost
gold passages for good. So for the embedded default, every process that searches keeps the vectors of every
chunk in memory (about 1.5 KB per chunk: 15 MB per 10k chunks, per worker), with the scope fields as integer
codes, and answers dense searches with one matrix product, the scope rule applied as a boolean mask:
exact results, recall 1.0 by construction.

How every process sees every write: :class:`ExactDenseBackend` wraps the Milvus backend; each write it makes
goes to Milvus first, then to a local SQLite file beside it (``exact-index.sqlite3`` in the data directory:
one row per chunk with its vector and its payload, and a change log of document ids). Before a search, a
process compares the change log's last sequence number with the one it has applied (one indexed SQLite
read) and reloads the changed documents' rows. The ingestion worker, the gunicorn workers and the CLI all
write through the same wrapper, so all of them stay in step; rows are read back with the chunks' payloads,
so a search makes no call to Milvus at all. A store ingested before this file existed is copied over from
Milvus once, at the first start.

Chunk reads by id and by document (citations, full-document expansion) are answered from the same rows, and
lexical searches by a BM25 index in process (:class:`LexicalIndex`, ``bm25s``) over the same rows, rebuilt in
the background after a change while Milvus answers. A hybrid search with ``search.hybrid_fusion = "weighted"``
(the default) is one dense and one lexical search here, fused by ``Services.search``. A search with a
``filter`` expression is answered here too: the filter is applied to the ranking's best chunks, read in growing
batches, until ``limit`` of them pass (exact: every chunk further down scores lower) or the ranking runs out.
What still goes to Milvus: a filter that too few of the best chunks pass (when the share passing so far says
more than ``FILTER_SCAN`` chunks would have to be read; Milvus applies it while it searches), hybrid searches
with ``rrf`` fusion, and every write.
"""

from __future__ import annotations

import fcntl
import json
import logging
import math
import queue
import re
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from assistant_bridge.backends.base import SearchBackend
from assistant_bridge.backends.milvus import MilvusBackend
from assistant_bridge.core.filters import matches, stored_record
from assistant_bridge.core.scope import chunk_visible, scope_clauses
from assistant_bridge.core.textnorm import indexed_text, lexical_form
from assistant_bridge.domain import Chunk, Scope, SearchHit, SearchQuery
from assistant_bridge.store import SQLiteStore
from assistant_bridge.text import option_words

log = logging.getLogger(__name__)

FILE_NAME = "exact-index.sqlite3"
#: a filtered search reads the ranking's best chunks, first this many times the limit, then at least this many
#: times more each round, up to FILTER_SCAN chunks: a filter that would need more goes to Milvus
FILTER_BATCH = 4
FILTER_SCAN = 256
_SCHEMA = """
CREATE TABLE IF NOT EXISTS rows (
  id TEXT PRIMARY KEY, document_id TEXT NOT NULL, owner TEXT NOT NULL, tenant TEXT NOT NULL,
  session_id TEXT NOT NULL, workspaces TEXT NOT NULL, vector BLOB NOT NULL, payload TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS rows_document ON rows(document_id);
CREATE TABLE IF NOT EXISTS changes (seq INTEGER PRIMARY KEY AUTOINCREMENT, document_id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class ExactIndex:
    """The vectors and scope codes of every chunk, in arrays that grow by doubling; rows of a removed
    document are marked dead and compacted away once they are a quarter of the rows. A row written without a
    vector (a *staged* chunk, :meth:`ExactDenseBackend.stage`) is read by lexical searches and skipped by
    dense ones until its vector arrives."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._codes: dict[str, int] = {"": 0}
        self._ids: list[str] = []
        self._rows_of_doc: dict[str, list[int]] = {}
        self._ws_rows: dict[int, list[int]] = {}
        self._dead = 0
        self.version = 0  # changes whenever rows are added, removed or renumbered
        self._lock = threading.Lock()
        self._alloc(1024)

    def _alloc(self, cap: int) -> None:
        self.matrix = np.zeros((cap, self.dim), dtype=np.float32)
        self.alive = np.zeros(cap, dtype=bool)
        self.owner = np.zeros(cap, dtype=np.int32)
        self.tenant = np.zeros(cap, dtype=np.int32)
        self.session = np.zeros(cap, dtype=np.int32)
        self.no_ws = np.zeros(cap, dtype=bool)
        self.doc = np.zeros(cap, dtype=np.int32)
        self.embedded = np.zeros(cap, dtype=bool)
        self.n = 0

    def _arrays(self) -> tuple[np.ndarray, ...]:
        """Every per-row array, in one order (growing and compacting copy them all)."""
        return (self.matrix, self.alive, self.owner, self.tenant, self.session, self.no_ws, self.doc, self.embedded)

    def code(self, value: str) -> int:
        got = self._codes.get(value)
        if got is None:
            got = self._codes[value] = len(self._codes)
        return got

    def known(self, value: str) -> int:
        """The code of ``value``, or -1 when no row has it (so it matches nothing)."""
        return self._codes.get(value, -1)

    def __len__(self) -> int:
        return self.n - self._dead

    def chunk_id(self, row: int) -> str:
        return self._ids[row]

    def _grow(self, need: int) -> None:
        cap = len(self.alive)
        if self.n + need <= cap:
            return
        new = max(cap * 2, self.n + need)
        old, n = self._arrays(), self.n
        self._alloc(new)
        for dst, src in zip(self._arrays(), old, strict=False):
            dst[:n] = src[:n]
        self.n = n

    def replace_documents(self, document_ids: Iterable[str], rows: Sequence[tuple[Any, ...]]) -> None:
        """Drop the rows of ``document_ids``, then add ``rows`` ``(id, document_id, owner, tenant, session_id,
        workspaces JSON, vector bytes)``; empty vector bytes for a staged chunk."""
        with self._lock:
            for d in document_ids:
                for r in self._rows_of_doc.pop(d, ()):
                    if self.alive[r]:
                        self.alive[r] = False
                        self._dead += 1
            self._grow(len(rows))
            for cid, did, owner, tenant, session, workspaces, blob in rows:
                r = self.n
                self.embedded[r] = bool(blob)
                self.matrix[r] = np.frombuffer(blob, dtype=np.float32) if blob else 0.0
                self.alive[r] = True
                self.owner[r], self.tenant[r], self.session[r] = self.code(owner), self.code(tenant), self.code(session)
                ws = json.loads(workspaces)
                self.no_ws[r] = not ws
                for w in ws:
                    self._ws_rows.setdefault(self.code(w), []).append(r)
                self.doc[r] = self.code(did)
                self._ids.append(cid)
                self._rows_of_doc.setdefault(did, []).append(r)
                self.n += 1
            if self._dead > 1024 and self._dead * 4 > self.n:
                self._compact()
            self.version += 1

    def _compact(self) -> None:
        keep = np.flatnonzero(self.alive[: self.n])
        remap = np.full(self.n, -1, dtype=np.int64)
        remap[keep] = np.arange(len(keep))
        arrays = [a[keep].copy() for a in self._arrays()]
        ids, ws_rows = self._ids, self._ws_rows
        self._alloc(max(1024, len(keep) * 2))
        for dst, src in zip(self._arrays(), arrays, strict=False):
            dst[: len(keep)] = src
        self.n = len(keep)
        self._ids = [ids[i] for i in keep]
        self._ws_rows = {w: [int(remap[r]) for r in rows if remap[r] >= 0] for w, rows in ws_rows.items()}
        names = {v: k for k, v in self._codes.items()}
        self._rows_of_doc = {}
        for r, code in enumerate(self.doc[: self.n].tolist()):
            self._rows_of_doc.setdefault(names[code], []).append(r)
        self._dead = 0

    def visible(self, scope: Scope) -> np.ndarray:
        """The boolean mask of rows ``scope`` may read: the rule of :func:`~assistant_bridge.core.scope.scope_clauses`
        (the same one the Milvus expression and the SQL listing implement)."""
        with self._lock:
            return self._visible(scope)

    def _visible(self, scope: Scope) -> np.ndarray:
        c = scope_clauses(scope)
        n = self.n
        alive, owner, tenant = self.alive[:n], self.owner[:n], self.tenant[:n]
        session, no_ws, doc = self.session[:n], self.no_ws[:n], self.doc[:n]
        me, sid = self.known(c.user_id), self.known(c.session_id or "")
        mask = alive & ((session == 0) | (owner == me) | ((session == sid) if c.session_id else False))
        if c.document_ids is not None:
            mask &= np.isin(doc, [self.known(d) for d in c.document_ids])
        if c.restricted:
            rule = (owner == me) | ((owner == 0) & no_ws)
            if c.session_id:
                rule |= session == sid
            if c.workspaces:
                ws = np.zeros(n, dtype=bool)
                for w in c.workspaces:
                    rows = self._ws_rows.get(self.known(w), ())
                    if rows:
                        ws[np.asarray(rows, dtype=np.int64)] = True
                rule |= ws
            global_rule = (tenant == 0) & rule
            if c.tenant is not None:
                mask &= (tenant == self.known(c.tenant)) | global_rule
            else:
                mask &= global_rule
        return np.asarray(mask)

    def live_rows(self) -> tuple[int, np.ndarray, list[str]]:
        """(version, the alive row numbers, their chunk ids): what a lexical index is built over."""
        with self._lock:
            rows = np.flatnonzero(self.alive[: self.n])
            return self.version, rows, [self._ids[int(r)] for r in rows]

    def lexical_top(self, lexical: LexicalIndex, text: str, scope: Scope, k: int) -> list[tuple[str, float]] | None:
        """The lexical index's best visible chunks, or None when it was built over another version of the rows."""
        with self._lock:
            if lexical.version != self.version:
                return None
            mask = self._visible(scope)
            return [(self._ids[r], s) for r, s in lexical.top(text, mask, k)]

    def top(self, vector: Sequence[float], scope: Scope, k: int) -> list[tuple[str, float]]:
        """The ``k`` best visible rows by dot product (cosine: every vector is unit length), best first. Under
        the index's lock, so a concurrent reload or compaction cannot renumber rows mid-search."""
        q = np.asarray(vector, dtype=np.float32)
        with self._lock:
            mask = self._visible(scope)
            n = len(mask)
            mask &= self.embedded[:n]
            visible = int(mask.sum())
            if not visible:
                return []
            scores = self.matrix[:n] @ q
            scores[~mask] = -np.inf
            k = min(k, visible)
            top = np.argpartition(-scores, k - 1)[:k] if k < n else np.arange(n)
            top = top[np.argsort(-scores[top], kind="stable")][:k]
            return [(self._ids[int(r)], float(scores[r])) for r in top]


def _rows(chunks: Sequence[Chunk], vectors: np.ndarray | None) -> list[tuple[Any, ...]]:
    """The ``rows`` table's rows: scope columns, the vector (empty bytes without ``vectors``: staged chunks),
    and the payload in the Milvus row's fields."""
    out = []
    none = np.zeros((len(chunks), 0), dtype=np.float32)
    for c, v in zip(chunks, none if vectors is None else np.asarray(vectors, dtype=np.float32), strict=False):
        o = c.ownership
        payload = MilvusBackend._row(c, v)
        for key in ("vector", "lexical"):
            payload.pop(key, None)
        out.append(
            (
                c.id,
                c.document_id,
                o.owner_user_id,
                o.tenant,
                o.session_id,
                json.dumps(list(o.workspace_ids)),
                np.ascontiguousarray(v).tobytes(),
                json.dumps(payload, ensure_ascii=False),
            )
        )
    return out


_TOKEN = re.compile(r"(?u)\b\w+\b")
LEXICAL_REBUILD_DELAY = 2.0  # seconds of quiet after a change before the BM25 index is rebuilt


class LexicalIndex:
    """BM25 over :func:`~assistant_bridge.core.textnorm.lexical_form` of every chunk (``bm25s``, k1 1.2, b 0.75
    as the Milvus collection), in the row order of one :class:`ExactIndex` state, so the same scope mask applies.
    bm25s indexes are static: after a change the whole index is rebuilt in a background thread, a few seconds
    after the last change; lexical searches go to Milvus until the rebuilt index is in place."""

    def __init__(self, model: Any, rows: np.ndarray, vocab: dict[str, int], version: int) -> None:
        self.model, self.rows, self.vocab, self.version = model, rows, vocab, version

    @staticmethod
    def tokens(text: str) -> list[str]:
        """BM25's tokens: the words of the lexical form, and each command-line option as written ("--hard",
        "-P"), so that a question naming an option finds the chunks that name it before those that only hold
        its word ("hard links"), and rsync's -P is not its -p."""
        return _TOKEN.findall(lexical_form(text)) + option_words(text)

    @classmethod
    def build(cls, rows: np.ndarray, texts: Sequence[str], version: int) -> LexicalIndex:
        import bm25s

        corpus = [cls.tokens(t) for t in texts]
        if not any(corpus):
            return cls(None, rows, {}, version)
        vocab: dict[str, int] = {}
        ids = [[vocab.setdefault(tok, len(vocab)) for tok in doc] for doc in corpus]
        model = bm25s.BM25(k1=1.2, b=0.75)
        model.index(bm25s.tokenization.Tokenized(ids=ids, vocab=vocab), show_progress=False)
        return cls(model, rows, vocab, version)

    def top(self, text: str, mask: np.ndarray, k: int) -> list[tuple[int, float]]:
        """(exact-index row, score) of the ``k`` best visible chunks that share a word with ``text``."""
        q = [self.vocab[t] for t in dict.fromkeys(self.tokens(text)) if t in self.vocab]
        if not q or self.model is None:
            return []
        weights = mask[self.rows].astype(np.float32)
        visible = int(weights.sum())
        if not visible:
            return []
        scores = self.model.get_scores(q) * weights
        k = min(k, visible, len(scores))
        top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(self.rows[i]), float(scores[i])) for i in top if scores[i] > 0]


class ExactDenseBackend:
    """A Milvus backend whose dense reads are answered from :class:`ExactIndex` (see the module docstring)."""

    def __init__(self, inner: SearchBackend, data_dir: Path, dim: int, *, reads: bool = True) -> None:
        """:param reads: False for a process that only writes (the ingest worker, the ``ingest`` command): it keeps
        the file in step and leaves the in-memory indexes (and their memory) to the processes that search."""
        self.inner = inner
        self.reads = reads
        self.name = inner.name
        self.dim = dim
        self._db = SQLiteStore(Path(data_dir) / FILE_NAME, schema=_SCHEMA, component="exact_index")
        # reads borrow a connection from this pool, most recently used first: a request thread's first search
        # would otherwise open its own connection and read the file's pages into a cold cache (+3-4 ms at 100k
        # chunks, measured); writes keep the store's connection per thread
        self._readers: queue.LifoQueue[sqlite3.Connection] = queue.LifoQueue()
        self._lock_path = Path(data_dir) / (FILE_NAME + ".lock")
        self._index: ExactIndex | None = None
        self._seq = 0
        self._sync_lock = threading.Lock()
        self._lexical: LexicalIndex | None = None
        self._lexical_thread: threading.Thread | None = None
        self._lexical_lock = threading.Lock()

    # ------------------------------------------------------------------------------------------ lifecycle
    def warm_up(self) -> None:
        self.inner.warm_up()
        self._backfill()
        if self.reads:
            self._build_lexical(self._ensure_index())
            self._warm_lexical()

    def ready(self) -> bool:
        return self.inner.ready()

    def settle(self) -> None:
        """Brings the in-process BM25 index up to date now instead of a few seconds after the last write: a
        benchmark that ingests and then asks would otherwise have its first lexical searches answered by
        Milvus (another tokenizer, other statistics), and its figures would differ from a rerun's."""
        if self.reads:
            self._build_lexical(self._ensure_index())

    def close(self) -> None:
        self.inner.close()
        while True:
            try:
                self._readers.get_nowait().close()
            except queue.Empty:
                break

    def flush(self) -> None:
        flush = getattr(self.inner, "flush", None)
        if callable(flush):
            flush()

    def count(self) -> int:
        return self.inner.count()

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        try:
            conn = self._readers.get_nowait()
        except queue.Empty:
            conn = sqlite3.connect(str(self._db.path), timeout=30, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA busy_timeout=30000")
        try:
            return conn.execute(sql, params).fetchall()
        finally:
            self._readers.put(conn)

    # ------------------------------------------------------------------------------------------ writes
    def upsert(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None:
        self.inner.upsert(chunks, vectors)
        self._record(chunks, vectors)

    def stage(self, chunks: Sequence[Chunk]) -> None:
        """Write chunks without their vectors, before they are embedded: every process's lexical index takes
        them in at its next rebuild (seconds), dense searches skip them, chunk reads find them. Milvus, the
        store of record, gets nothing until :meth:`upsert` writes them with their vectors (replacing these rows
        by id); a write that fails or is cancelled in between removes them with :meth:`delete_document`, and so
        does the recovery of a writer that died (``ingest/service.py``)."""
        self._write(_rows(chunks, None), {c.document_id for c in chunks})

    def delete_document(self, document_id: str) -> int:
        removed = self.inner.delete_document(document_id)
        self._write([], {document_id}, delete=True)
        return removed

    def _record(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None:
        self._write(_rows(chunks, vectors), {c.document_id for c in chunks})

    def _write(self, rows: list[tuple[Any, ...]], documents: set[str], *, delete: bool = False) -> None:
        conn = self._db._conn()
        with conn:
            conn.execute("BEGIN IMMEDIATE")
            if delete:
                conn.executemany("DELETE FROM rows WHERE document_id = ?", [(d,) for d in documents])
            conn.executemany("INSERT OR REPLACE INTO rows VALUES (?,?,?,?,?,?,?,?)", rows)
            conn.executemany("INSERT INTO changes (document_id) VALUES (?)", [(d,) for d in sorted(documents)])

    # ------------------------------------------------------------------------------------------ reads
    def search(self, query: SearchQuery) -> list[SearchHit]:
        if not self.reads or query.mode == "hybrid" or (query.mode == "dense" and query.vector is None):
            return self.inner.search(query)
        if query.scope.document_ids == ():
            return []
        index = self._ensure_index()
        want = max(1, query.limit)
        # a filter is applied to the ranking's best chunks, read in growing batches: once `want` of them pass,
        # they are the filtered ranking's best (every chunk further down scores lower), and so are all that
        # pass when the ranking ran out. A filter that few chunks pass goes to Milvus, which applies it while
        # it searches: when the share passing so far says more than FILTER_SCAN chunks would have to be read.
        k = want if query.filter is None else want * FILTER_BATCH
        chunks: dict[str, Chunk] = {}
        while True:
            top = self._ranking(index, query, k)
            if top is None:
                return self.inner.search(query)
            chunks.update(self._chunks([cid for cid, _ in top if cid not in chunks]))
            hits = [
                SearchHit(chunk=chunks[cid], score=s)
                for cid, s in top
                if cid in chunks
                and chunk_visible(chunks[cid], query.scope)
                and matches(query.filter, stored_record(chunks[cid]))
            ]
            if query.filter is None or len(hits) >= want or len(top) < k:
                return hits[:want]
            need = k * want / len(hits) if hits else math.inf
            if need > FILTER_SCAN:
                log.debug("exact_index.filter_to_milvus", extra={"read": len(chunks), "passed": len(hits)})
                return self.inner.search(query)
            k = min(FILTER_SCAN, max(k * FILTER_BATCH, math.ceil(1.5 * need)))

    def _ranking(self, index: ExactIndex, query: SearchQuery, k: int) -> list[tuple[str, float]] | None:
        """The ``k`` best visible chunks of the query's mode, or None while the lexical index is rebuilt after a
        change (Milvus answers meanwhile)."""
        if query.mode == "lexical":
            lexical = self._lexical
            top = None if lexical is None else index.lexical_top(lexical, query.text, query.scope, k)
            if top is None:
                self._schedule_lexical(index)
            return top
        assert query.vector is not None
        return index.top(query.vector, query.scope, k)

    def get_chunks(self, chunk_ids: Sequence[str], scope: Scope) -> list[Chunk]:
        if not self.reads:
            return self.inner.get_chunks(chunk_ids, scope)
        found = self._chunks(list(dict.fromkeys(chunk_ids)))
        return [found[c] for c in dict.fromkeys(chunk_ids) if c in found and chunk_visible(found[c], scope)]

    def document_chunks(self, document_id: str, scope: Scope) -> list[Chunk]:
        if not self.reads:
            return self.inner.document_chunks(document_id, scope)
        rows = self._read("SELECT payload FROM rows WHERE document_id = ?", (document_id,))
        chunks = [MilvusBackend._chunk(json.loads(p)) for (p,) in rows]
        return sorted((c for c in chunks if chunk_visible(c, scope)), key=lambda c: c.position)

    def _chunks(self, ids: Sequence[str]) -> dict[str, Chunk]:
        out: dict[str, Chunk] = {}
        for i in range(0, len(ids), 500):
            part = list(ids[i : i + 500])
            rows = self._read(f"SELECT id, payload FROM rows WHERE id IN ({','.join('?' * len(part))})", part)
            out.update({cid: MilvusBackend._chunk(json.loads(p)) for cid, p in rows})
        return out

    # ------------------------------------------------------------------------------------------ keeping in step
    def _ensure_index(self) -> ExactIndex:
        last = int(self._read("SELECT COALESCE(MAX(seq), 0) FROM changes")[0][0])
        if self._index is not None and last == self._seq:
            return self._index
        with self._sync_lock:
            if self._index is None:
                t = time.perf_counter()
                index = ExactIndex(self.dim)
                index.replace_documents(
                    (), self._read("SELECT id, document_id, owner, tenant, session_id, workspaces, vector FROM rows")
                )
                self._index, self._seq = index, last
                log.info(
                    "exact_index.loaded", extra={"chunks": len(index), "ms": round((time.perf_counter() - t) * 1000)}
                )
            elif last != self._seq:
                changed = [
                    d
                    for (d,) in self._read(
                        "SELECT DISTINCT document_id FROM changes WHERE seq > ? AND seq <= ?", (self._seq, last)
                    )
                ]
                rows: list[tuple[Any, ...]] = []
                for i in range(0, len(changed), 500):
                    part = changed[i : i + 500]
                    rows += self._read(
                        "SELECT id, document_id, owner, tenant, session_id, workspaces, vector FROM rows "
                        f"WHERE document_id IN ({','.join('?' * len(part))})",
                        part,
                    )
                self._index.replace_documents(changed, rows)
                self._seq = last
            return self._index

    def _build_lexical(self, index: ExactIndex) -> None:
        t = time.perf_counter()
        version, rows, ids = index.live_rows()
        # the two fields BM25 reads, straight from SQLite: no Chunk is decoded for a rebuild
        stored = {
            cid: indexed_text(title, text)
            for cid, title, text in self._read(
                "SELECT id, json_extract(payload, '$.title'), json_extract(payload, '$.text') FROM rows"
            )
        }
        texts = [stored.get(c, "") for c in ids]
        built = LexicalIndex.build(rows, texts, version)
        with self._lexical_lock:
            if self._lexical is None or self._lexical.version < version:
                self._lexical = built
        log.info("exact_index.lexical_built", extra={"chunks": len(ids), "ms": round((time.perf_counter() - t) * 1000)})

    def _schedule_lexical(self, index: ExactIndex) -> None:
        """Rebuild the BM25 index in the background once writes have been quiet for a moment (one at a time)."""
        with self._lexical_lock:
            if self._lexical_thread is not None and self._lexical_thread.is_alive():
                return

            def run() -> None:
                while True:
                    seen = index.version
                    time.sleep(LEXICAL_REBUILD_DELAY)
                    self._ensure_index()
                    if index.version == seen:
                        break
                try:
                    self._build_lexical(index)
                except Exception as exc:  # noqa: BLE001 - Milvus keeps answering lexical searches
                    log.warning("exact_index.lexical_build_failed", extra={"reason": type(exc).__name__})

            self._lexical_thread = threading.Thread(target=run, name="bm25-rebuild", daemon=True)
            self._lexical_thread.start()

    def _backfill(self) -> None:
        """Copy a store ingested before the exact index existed over from Milvus, once (any process)."""
        if self._db.execute("SELECT 1 FROM meta WHERE key = 'backfilled'").fetchone():
            return
        iterate = getattr(self.inner, "iter_rows", None)
        with open(self._lock_path, "a+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                if self._db.execute("SELECT 1 FROM meta WHERE key = 'backfilled'").fetchone():
                    return
                copied = 0
                if iterate is not None and self.inner.count() > 0:
                    t = time.perf_counter()
                    for chunks, vectors in iterate(1000):
                        self._record(chunks, vectors)
                        copied += len(chunks)
                    log.warning(
                        "exact_index.backfilled", extra={"chunks": copied, "seconds": round(time.perf_counter() - t, 1)}
                    )
                self._db.execute("INSERT OR REPLACE INTO meta VALUES ('backfilled', ?)", (str(copied),))
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _warm_lexical(self) -> None:
        """Milvus Lite builds its BM25 index at the first lexical search after a start (22 s at 11k chunks):
        one search here, so no user's search waits for it."""
        try:
            if self.inner.count() > 0:
                from assistant_bridge.domain import Principal

                self.inner.search(
                    SearchQuery(text="warm up", scope=Scope(Principal("warm-up", admin=True)), mode="lexical", limit=1)
                )
        except Exception as exc:  # noqa: BLE001 - a warm-up must never stop the start
            log.warning("exact_index.lexical_warm_up_failed", extra={"reason": type(exc).__name__})
