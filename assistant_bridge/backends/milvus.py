"""Milvus backend: embedded Milvus Lite (default) or a Milvus server/cluster by URI, through pymilvus.

One collection holds every chunk with its dense vector, a BM25 sparse vector computed by Milvus from the
``lexical`` field (text rewritten by :func:`~assistant_bridge.core.textnorm.lexical_form` so Japanese is
searchable), and the scope fields. Invariants: every search carries the scope expression; the collection
is flushed after each write batch (unflushed Milvus Lite rows are scanned in Python, ~1 s a search) and
loaded at start (load state is not persisted across restarts).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from assistant_bridge.backends.base import RRF_K, chunk_from_record, chunk_record, mapped_errors
from assistant_bridge.core.scope import chunk_visible, scope_clauses
from assistant_bridge.core.textnorm import indexed_text, lexical_form
from assistant_bridge.domain import Chunk, Scope, SearchHit, SearchQuery
from assistant_bridge.errors import BackendUnavailable, BridgeError, ConfigurationError, InsufficientStorage

if TYPE_CHECKING:
    from assistant_bridge.settings import Settings

log = logging.getLogger(__name__)
_T = TypeVar("_T")

SCALAR_FIELDS = [
    "id",
    "document_id",
    "position",
    "title",
    "text",
    "url",
    "filename",
    "language",
    "modality",
    "page_number",
    "start_time",
    "end_time",
    "start_char",
    "end_char",
    "bboxes",
    "tenant",
    "owner",
    "workspaces",
    "session_id",
]
MAX_TEXT = 65535
# a write (upsert, delete, flush) may take this many times backend.timeout, and at least WRITE_TIMEOUT_MIN seconds:
# a flush of a large batch on a busy machine takes longer than a search
WRITE_TIMEOUT_FACTOR = 6
WRITE_TIMEOUT_MIN = 60.0
# the readiness probe's own deadline (at most backend.timeout): probers give up after a second or a few
READY_TIMEOUT = 2.0


def quote(value: str) -> str:
    """A Milvus string literal. JSON escaping covers quotes, backslashes and control characters."""
    return json.dumps(str(value), ensure_ascii=False)


def quote_list(values: Sequence[str]) -> str:
    return "[" + ", ".join(quote(v) for v in values) + "]"


def scope_expression(scope: Scope) -> str | None:
    """The Milvus boolean expression for :func:`~assistant_bridge.core.scope.scope_clauses`."""
    c = scope_clauses(scope)
    parts: list[str] = []
    if c.document_ids is not None:
        parts.append(f"document_id in {quote_list(c.document_ids)}")
    parts.append(f'(session_id == "" or session_id == {quote(c.session_id)} or owner == {quote(c.user_id)})')
    if c.restricted:
        rule = f'owner == {quote(c.user_id)} or (owner == "" and array_length(workspaces) == 0)'
        if c.session_id:
            rule += f" or session_id == {quote(c.session_id)}"
        if c.workspaces:
            rule += f" or array_contains_any(workspaces, {quote_list(c.workspaces)})"
        global_rule = f'(tenant == "" and ({rule}))'
        parts.append(f"(tenant == {quote(c.tenant)} or {global_rule})" if c.tenant is not None else global_rule)
    return " and ".join(parts) if parts else None


def _silence_grpc() -> None:
    # pymilvus 3 calls AllocTimestamp, which Milvus Lite does not implement; the call still succeeds
    logging.getLogger("grpc._server").setLevel(logging.CRITICAL)
    # pymilvus logs every failed call with multi-line tracebacks through handlers of its own (set up when it
    # is imported): about 240 plain-text lines per failed search while the backend is down. Each failure is
    # logged once by MilvusBackend._errors instead, as one structured line without request text.
    import pymilvus  # noqa: F401

    for name in ("pymilvus", "pymilvus.milvus_client", "pymilvus.bulk_writer"):
        logger = logging.getLogger(name)
        logger.handlers[:] = []
        logger.propagate = True
        logger.setLevel(logging.CRITICAL if name == "pymilvus" else logging.NOTSET)


class MilvusBackend:
    name = "milvus"

    def __init__(
        self,
        uri: str,
        collection: str,
        dim: int,
        *,
        token: str = "",
        timeout: float = 10.0,
        write_lock_path: Path | None = None,
        vector_index: str = "FLAT",
        hnsw_m: int = 32,
        hnsw_ef_construction: int = 400,
        hnsw_ef: int = 128,
        flush_seconds: float = 0.0,
        local_path: Path | None = None,
    ) -> None:
        self.uri = uri
        self._remote = uri.startswith(("http://", "https://", "tcp://", "unix:"))
        # the Milvus Lite data directory when it is on this machine (embedded, or served by our side process)
        self.local_path = local_path if local_path is not None else (None if self._remote else Path(uri))
        # 0: every write is flushed before it returns. A bulk writer (the ingest worker, `ingest`) flushes at most
        # this often, and when it goes idle (flush()): a flush costs about as much as the write of a small
        # document, and unflushed rows are still read, only more slowly, by the searches Milvus serves
        self.flush_seconds = flush_seconds
        self._dirty = False
        self._flushed_at = 0.0
        self.vector_index = vector_index
        self._hnsw = {"M": hnsw_m, "efConstruction": hnsw_ef_construction}
        self._ef = hnsw_ef
        self.collection = collection
        self.dim = dim
        self._token = token
        # every read (search, query, readiness) has this deadline; pymilvus's own default is none: a frozen
        # server held a search for 80 s (its retries) and a readiness probe until the prober gave up
        self._timeout = timeout
        self._write_timeout = max(WRITE_TIMEOUT_MIN, WRITE_TIMEOUT_FACTOR * timeout)
        self._client: Any = None
        self._lock = threading.RLock()
        self._write_lock_path = write_lock_path

    @classmethod
    def from_settings(cls, settings: Settings, dim: int) -> MilvusBackend:
        b = settings.backend
        uri = b.uri
        lock = None
        if not uri:
            if b.kind == "milvus":
                raise ConfigurationError("backend.kind = 'milvus' needs backend.uri (e.g. http://milvus:19530)")
            settings.data_path.mkdir(parents=True, exist_ok=True)
            uri = str(settings.data_path / "milvus.db")
        if b.kind == "milvus-lite":
            settings.data_path.mkdir(parents=True, exist_ok=True)
            lock = settings.data_path / "milvus.write.lock"
        token = b.token.get() if b.token else ""
        index = b.vector_index if b.vector_index != "auto" else ("FLAT" if b.kind == "milvus-lite" else "HNSW")
        return cls(
            uri,
            b.collection,
            dim,
            token=token,
            timeout=b.timeout,
            write_lock_path=lock,
            vector_index=index,
            hnsw_m=b.hnsw_m,
            hnsw_ef_construction=b.hnsw_ef_construction,
            hnsw_ef=b.hnsw_ef,
            flush_seconds=b.flush_seconds,
            local_path=settings.data_path / "milvus.db" if b.kind == "milvus-lite" else None,
        )

    # -- lifecycle -----------------------------------------------------------------------------------
    def _connect(self) -> Any:
        if self._client is None:
            _silence_grpc()
            from pymilvus import MilvusClient

            with self._errors("connect"):
                kwargs: dict[str, Any] = {"uri": self.uri}
                if self._token:
                    kwargs["token"] = self._token
                if self.uri.startswith("http"):
                    kwargs["timeout"] = self._timeout
                self._client = MilvusClient(**kwargs)
        return self._client

    def warm_up(self) -> None:
        with self._lock:
            client = self._connect()
            with self._errors("create collection"):
                if not client.has_collection(self.collection):
                    self._create_or_join(client)
                else:
                    self._check_dim(client)
            try:
                with self._errors("load collection"):
                    client.load_collection(self.collection)
            except BackendUnavailable:
                if not self._set_indexes_aside():
                    raise
                with self._errors("load collection"):
                    client.load_collection(self.collection)

    def _create_or_join(self, client: Any, wait: float = 10.0) -> None:
        """Create the collection; when another process created it between our check and our create (``serve``
        and its ingest worker start together: Milvus Lite then answers "File exists"), use theirs once it is
        listed, within ``wait`` seconds."""
        from pymilvus.exceptions import MilvusException

        try:
            self._create(client)
        except MilvusException:
            deadline = time.monotonic() + wait
            while not client.has_collection(self.collection):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
            log.info("milvus.collection_created_elsewhere", extra={"collection": self.collection})
            self._check_dim(client)

    def _set_indexes_aside(self) -> bool:
        """Milvus Lite writes its index files in place: a process killed while it wrote one (right after a
        flush) left an empty or cut file, and every later load of the collection failed ("No data left in
        file"). The indexes are derived from the segments, which are whole, so they are moved aside and the load
        builds them again. Only for an embedded store on this machine (``local_path``); returns whether any
        were moved."""
        if self.local_path is None:
            return False
        root = self.local_path / "collections" / self.collection / "partitions"
        moved = 0
        for index_dir in sorted(root.glob("*/indexes")):
            if any(index_dir.iterdir()):
                index_dir.rename(index_dir.with_name(f"indexes.set-aside-{int(time.time())}"))
                index_dir.mkdir()
                moved += 1
        if moved:
            log.warning(
                "milvus.indexes_set_aside",
                extra={"collection": self.collection, "partitions": moved, "path": str(root)},
            )
        return moved > 0

    def _check_dim(self, client: Any) -> None:
        info = client.describe_collection(self.collection)
        for f in info.get("fields", []):
            if f.get("name") == "vector":
                dim = int(f.get("params", {}).get("dim", self.dim))
                if dim != self.dim:
                    raise ConfigurationError(
                        f"collection {self.collection!r} holds {dim}-d vectors but the embedder makes "
                        f"{self.dim}-d ones; use another backend.collection or re-ingest"
                    )

    def _create(self, client: Any) -> None:
        from pymilvus import DataType, Function, FunctionType, MilvusClient

        s = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
        s.add_field("id", DataType.VARCHAR, is_primary=True, max_length=64)
        s.add_field("document_id", DataType.VARCHAR, max_length=64)
        s.add_field("position", DataType.INT64)
        s.add_field("title", DataType.VARCHAR, max_length=2048)
        s.add_field("text", DataType.VARCHAR, max_length=MAX_TEXT)
        s.add_field("lexical", DataType.VARCHAR, max_length=MAX_TEXT, enable_analyzer=True)
        s.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        s.add_field("vector", DataType.FLOAT_VECTOR, dim=self.dim)
        s.add_field("url", DataType.VARCHAR, max_length=2048)
        s.add_field("filename", DataType.VARCHAR, max_length=1024)
        s.add_field("language", DataType.VARCHAR, max_length=16)
        s.add_field("modality", DataType.VARCHAR, max_length=32)
        s.add_field("page_number", DataType.INT64, nullable=True)
        s.add_field("start_time", DataType.DOUBLE, nullable=True)
        s.add_field("end_time", DataType.DOUBLE, nullable=True)
        s.add_field("start_char", DataType.INT64)
        s.add_field("end_char", DataType.INT64)
        s.add_field("bboxes", DataType.VARCHAR, max_length=MAX_TEXT)
        s.add_field("tenant", DataType.VARCHAR, max_length=256)
        s.add_field("owner", DataType.VARCHAR, max_length=256)
        s.add_field("workspaces", DataType.ARRAY, element_type=DataType.VARCHAR, max_capacity=256, max_length=256)
        s.add_field("session_id", DataType.VARCHAR, max_length=256)
        s.add_function(
            Function(
                name="bm25",
                function_type=FunctionType.BM25,
                input_field_names=["lexical"],
                output_field_names=["sparse"],
            )
        )
        ip = client.prepare_index_params()
        if self.vector_index == "HNSW":
            ip.add_index("vector", index_type="HNSW", metric_type="COSINE", params=dict(self._hnsw))
        else:
            ip.add_index("vector", index_type="FLAT", metric_type="COSINE")
        ip.add_index(
            "sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25", params={"bm25_k1": 1.2, "bm25_b": 0.75}
        )
        for name in ("document_id", "tenant", "owner", "session_id"):
            ip.add_index(name, index_type="INVERTED")
        client.create_collection(self.collection, schema=s, index_params=ip)
        log.info("milvus.collection_created", extra={"collection": self.collection, "dim": self.dim})

    def ready(self) -> bool:
        try:
            with self._lock:
                client = self._connect()
                client.get_load_state(self.collection, timeout=min(self._timeout, READY_TIMEOUT))
            return True
        except Exception:  # readiness probe: any failure means "not ready"
            return False

    def close(self) -> None:
        """Close the client; for embedded Milvus Lite also stop its in-process server, which flushes and
        releases the data directory lock (so a side process can take it over)."""
        try:
            self.flush()
        except BackendUnavailable:
            log.warning("milvus.flush_on_close_failed")
        with self._lock:
            if self._client is not None:
                try:
                    self._client.close()
                finally:
                    self._client = None
            if not self._remote:
                from milvus_lite.server_manager import server_manager_instance

                server_manager_instance.release_server(self.uri)

    def _errors(self, what: str) -> AbstractContextManager[None]:
        return mapped_errors(lambda exc: self._map_error(exc, what))

    def _map_error(self, exc: Exception, what: str) -> BridgeError | None:
        """pymilvus/grpc failures as BackendUnavailable (the one place that maps them)."""
        from pymilvus.exceptions import MilvusException

        if isinstance(exc, MilvusException):
            if _released(exc):
                self._reload()
            code = getattr(exc, "code", None)
            # the message can quote the query expression, scope clauses included: the log has it, a body never
            log.warning(
                "milvus.error", extra={"op": what, "code": code, "reason": str(getattr(exc, "message", exc))[:200]}
            )
            if "No space left on device" in str(exc):
                return InsufficientStorage(f"Milvus {what} failed: out of space; nothing was written")
            return BackendUnavailable(f"Milvus {what} failed", milvus_code=code)
        import grpc

        if isinstance(exc, grpc.RpcError):  # pymilvus passes some through as they are: a deadline that expired
            code = exc.code() if isinstance(exc, grpc.Call) else None
            log.warning("milvus.error", extra={"op": what, "grpc_code": code.name if code is not None else None})
            return BackendUnavailable(f"Milvus {what} failed: {code.name.lower() if code is not None else 'rpc error'}")
        if isinstance(exc, OSError | RuntimeError | ValueError):
            log.warning("milvus.error", extra={"op": what, "type": type(exc).__name__})
            self._client = None
            return BackendUnavailable(f"Milvus {what} failed: {type(exc).__name__}")
        return None

    def _reload(self) -> None:
        """Load the collection again, within a request: at most ``backend.timeout``. Without a timeout pymilvus
        retries an unavailable server some 75 times, minutes during which the request hangs (a side process
        restarting under load); a load that takes longer goes on in Milvus, and a later read finds it loaded or
        reloads it again."""
        try:
            if self._client is not None:
                self._client.load_collection(self.collection, timeout=self._timeout)
        except Exception:  # best effort; the caller already reports the original failure
            self._client = None

    @contextmanager
    def _write_lock(self) -> Iterator[None]:
        """Milvus Lite wants writes to one collection serialised, across gunicorn workers too."""
        with self._lock:
            if self._write_lock_path is None:
                yield
                return
            with open(self._write_lock_path, "a+") as fh:
                fcntl.flock(fh, fcntl.LOCK_EX)
                try:
                    yield
                finally:
                    fcntl.flock(fh, fcntl.LOCK_UN)

    # -- writes -------------------------------------------------------------------------------------
    def upsert(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None:
        if not chunks:
            return
        rows = [self._row(c, v) for c, v in zip(chunks, np.asarray(vectors, dtype=np.float32), strict=False)]
        with self._write_lock(), self._errors("upsert"):
            client = self._connect()
            client.upsert(self.collection, rows, timeout=self._write_timeout)
            self._after_write(client)

    def delete_document(self, document_id: str) -> int:
        with self._write_lock(), self._errors("delete"):
            client = self._connect()
            res = client.delete(
                self.collection, filter=f"document_id == {quote(document_id)}", timeout=self._write_timeout
            )
            self._after_write(client)
        if isinstance(res, dict):
            return int(res.get("delete_count", 0))
        return len(res) if isinstance(res, list) else 0

    def _after_write(self, client: Any) -> None:
        now = time.monotonic()
        if self.flush_seconds <= 0 or now - self._flushed_at >= self.flush_seconds:
            client.flush(self.collection, timeout=self._write_timeout)
            self._flushed_at, self._dirty = now, False
        else:
            self._dirty = True

    def flush(self) -> None:
        """Flush writes a bulk writer left unflushed (a no-op when there are none)."""
        if not self._dirty:
            return
        with self._write_lock(), self._errors("flush"):
            self._connect().flush(self.collection, timeout=self._write_timeout)
            self._flushed_at, self._dirty = time.monotonic(), False

    @staticmethod
    def _row(c: Chunk, vec: np.ndarray) -> dict[str, Any]:
        record = chunk_record(c)
        record.update(
            title=c.title[:2000],
            text=c.text[: MAX_TEXT // 3],
            lexical=lexical_form(indexed_text(c.title, c.text))[: MAX_TEXT // 3],
            vector=vec.tolist(),
            filename=c.filename[:1000],
            bboxes=json.dumps(record["bboxes"]),
        )
        return record

    # -- reads --------------------------------------------------------------------------------------
    def _expr(self, query: SearchQuery) -> str:
        parts = []
        scope = scope_expression(query.scope)
        if scope:
            parts.append(scope)
        if query.filter is not None:
            from assistant_bridge.core.filters import to_milvus

            parts.append(f"({to_milvus(query.filter)})")
        return " and ".join(parts)

    def _reading(self) -> Any:
        """What a read holds: nothing against a Milvus server (gRPC calls on one channel run concurrently, and
        serialising them capped a worker's searches at one at a time), the lock for an embedded Milvus Lite
        file, which is not safe to call from several threads."""
        return self._lock if not self._remote else contextlib.nullcontext()

    def _read(self, what: str, call: Callable[[Any], _T]) -> _T:
        """Runs one read with the client. A collection Milvus reports as released (the server restarted,
        another client released it, or nothing loaded it yet) is loaded again by :meth:`_map_error`, and the
        read is run once more: the request that found it released is answered, not failed."""
        for attempt in range(2):
            with self._lock:
                client = self._connect()
            try:
                with self._reading(), self._errors(what):
                    return call(client)
            except BackendUnavailable as exc:
                if attempt or not _released(exc.__cause__):
                    raise
                log.info("milvus.reloaded", extra={"op": what})
        raise AssertionError("unreachable")

    def search(self, query: SearchQuery) -> list[SearchHit]:
        if query.scope.document_ids == ():
            return []
        expr = self._expr(query)
        limit = max(1, query.limit)

        def run(client: Any) -> list[tuple[Any, float]]:
            if query.mode == "lexical":
                res = client.search(
                    self.collection,
                    data=[lexical_form(query.text)],
                    anns_field="sparse",
                    limit=limit,
                    filter=expr,
                    output_fields=SCALAR_FIELDS,
                    search_params={"metric_type": "BM25"},
                    timeout=self._timeout,
                )
                return [(h, abs(float(h["distance"]))) for h in res[0]]
            if query.mode == "dense":
                res = client.search(
                    self.collection,
                    data=[list(query.vector or ())],
                    anns_field="vector",
                    limit=limit,
                    filter=expr,
                    output_fields=SCALAR_FIELDS,
                    search_params={"metric_type": "COSINE", "params": {"ef": max(self._ef, limit)}},
                    timeout=self._timeout,
                )
                return [(h, float(h["distance"])) for h in res[0]]
            from pymilvus import AnnSearchRequest, RRFRanker

            depth = max(limit * 4, 40)
            reqs = [
                AnnSearchRequest(
                    data=[list(query.vector or ())],
                    anns_field="vector",
                    param={"metric_type": "COSINE", "params": {"ef": max(self._ef, depth)}},
                    limit=depth,
                    expr=expr,
                ),
                AnnSearchRequest(
                    data=[lexical_form(query.text)],
                    anns_field="sparse",
                    param={"metric_type": "BM25"},
                    limit=depth,
                    expr=expr,
                ),
            ]
            res = client.hybrid_search(
                self.collection,
                reqs=reqs,
                ranker=RRFRanker(RRF_K),
                limit=limit,
                output_fields=SCALAR_FIELDS,
                timeout=self._timeout,
            )
            return [(h, float(h["distance"])) for h in res[0]]

        hits = [SearchHit(chunk=self._chunk(h.get("entity", h)), score=s) for h, s in self._read("search", run)]
        return [h for h in hits if chunk_visible(h.chunk, query.scope)]

    def _query(self, expr: str, limit: int | None = None) -> list[Chunk]:
        kwargs: dict[str, Any] = {"filter": expr, "output_fields": SCALAR_FIELDS, "timeout": self._timeout}
        if limit:
            kwargs["limit"] = limit
        rows = self._read("query", lambda client: client.query(self.collection, **kwargs))
        return [self._chunk(r) for r in rows]

    def get_chunks(self, chunk_ids: Sequence[str], scope: Scope) -> list[Chunk]:
        if not chunk_ids:
            return []
        scope_expr = scope_expression(scope)
        expr = f"id in {quote_list(chunk_ids)}" + (f" and {scope_expr}" if scope_expr else "")
        return [c for c in self._query(expr) if chunk_visible(c, scope)]

    def document_chunks(self, document_id: str, scope: Scope) -> list[Chunk]:
        scope_expr = scope_expression(scope)
        expr = f"document_id == {quote(document_id)}" + (f" and {scope_expr}" if scope_expr else "")
        chunks = [c for c in self._query(expr, limit=16384) if chunk_visible(c, scope)]
        return sorted(chunks, key=lambda c: c.position)

    def iter_rows(self, batch: int = 1000) -> Iterator[tuple[list[Chunk], np.ndarray]]:
        """Every chunk with its vector, ``batch`` at a time (the exact index's one-time copy)."""
        with self._lock:
            client = self._connect()
        with self._reading(), self._errors("query"):
            it = client.query_iterator(
                self.collection, batch_size=batch, filter="", output_fields=[*SCALAR_FIELDS, "vector"]
            )
            try:
                while True:
                    rows = it.next()
                    if not rows:
                        return
                    yield [self._chunk(r) for r in rows], np.asarray([r["vector"] for r in rows], dtype=np.float32)
            finally:
                it.close()

    def count(self) -> int:
        res = self._read(
            "count",
            lambda client: client.query(self.collection, filter="", output_fields=["count(*)"], timeout=self._timeout),
        )
        return int(res[0]["count(*)"]) if res else 0

    @staticmethod
    def _chunk(e: dict[str, Any]) -> Chunk:
        return chunk_from_record(e, json.loads(e.get("bboxes") or "[]"))


def _released(exc: BaseException | None) -> bool:
    """Milvus says the collection is not loaded ("collection … is in state 'released'", "collection not loaded")."""
    text = str(exc or "")
    return "released" in text or "not loaded" in text.lower()
