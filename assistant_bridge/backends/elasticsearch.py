"""Elasticsearch backend (7.x, 8.x, 9.x) through the official ``elasticsearch`` client.

One index holds every chunk with its scope fields, its text and vector (layout and per-version request
bodies: :mod:`assistant_bridge.backends.es_compat`). Invariants:

* every search, ``get_chunks`` and ``document_chunks`` carries the scope as a ``bool.filter`` built from
  :func:`~assistant_bridge.core.scope.scope_clauses`, and every returned chunk is checked again with
  :func:`~assistant_bridge.core.scope.chunk_visible`;
* writes return once the chunks are searchable (``refresh=wait_for``; deletes refresh);
* an existing index whose mapping does not fit is never changed: :class:`ConfigurationError`;
* every client and transport failure becomes :class:`BackendUnavailable` in :func:`map_error` and nowhere
  else, with a message that names the cause and never a credential;
* the server's version is read at :meth:`ElasticsearchBackend.warm_up`, which any call repeats until it
  succeeds, so the service recovers from an outage at start without a restart.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from assistant_bridge.backends import es_compat as ec
from assistant_bridge.backends.base import chunk_from_record, chunk_record, mapped_errors, rrf_fuse
from assistant_bridge.core.scope import chunk_visible, scope_clauses
from assistant_bridge.core.textnorm import indexed_text, lexical_form
from assistant_bridge.domain import Chunk, Scope, SearchHit, SearchQuery
from assistant_bridge.errors import BackendUnavailable, BridgeError, ConfigurationError

if TYPE_CHECKING:
    from assistant_bridge.settings import Settings

log = logging.getLogger(__name__)

BULK_BATCH = 500
PAGE = 1000


def safe_url(url: str) -> str:
    """``url`` without any ``user:password@`` part, for messages and logs."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if parts.port:
            host = f"{host}:{parts.port}"
    except ValueError:
        return "<invalid url>"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _body_error_type(body: Any) -> str:
    """The ``error.type`` of an Elasticsearch error body (7.x may send a bare string)."""
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict):
        return str(err.get("type", ""))[:80]
    return err[:80] if isinstance(err, str) else ""


def _error_type(exc: Any) -> str:
    return _body_error_type(getattr(exc, "body", None)) or str(getattr(exc, "message", ""))[:80]


_PLAIN_JSON_HINT = (
    "set backend.es_compat_plain_json = true (needed with this client for Elasticsearch 7.x and 8.x clusters)"
)


def map_error(exc: BaseException, op: str, url: str, index: str, timeout: float) -> BackendUnavailable | None:
    """The one translation of ``elasticsearch``/``elastic_transport`` errors; ``None`` for anything else.

    Messages name the cluster by its URL without credentials and carry the HTTP status and error type,
    never the server's free-text reason (it can echo a query) nor a secret.
    """
    import elastic_transport as et
    import elasticsearch as es

    where = safe_url(url)
    if isinstance(exc, es.UnsupportedProductError):
        return BackendUnavailable(
            f"the server at {where} did not identify itself as Elasticsearch; for "
            f"Elasticsearch older than 7.14 {_PLAIN_JSON_HINT}",
            op=op,
        )
    if isinstance(exc, es.AuthenticationException):
        return BackendUnavailable(
            f"Elasticsearch at {where} rejected the credentials (HTTP 401); check "
            "backend.es_api_key or backend.es_username and backend.es_password",
            op=op,
        )
    if isinstance(exc, es.AuthorizationException):
        return BackendUnavailable(
            f"the Elasticsearch credentials may not {op} on index {index!r} (HTTP 403)", op=op, type=_error_type(exc)
        )
    if isinstance(exc, es.ApiError):
        status, kind = exc.meta.status, _error_type(exc)
        if status == 406 or kind == "media_type_header_exception" or "Content-Type header" in kind:
            return BackendUnavailable(
                f"Elasticsearch at {where} refused the client's media type (HTTP {status}); {_PLAIN_JSON_HINT}", op=op
            )
        return BackendUnavailable(f"Elasticsearch {op} failed (HTTP {status} {kind})", op=op, status=status, type=kind)
    if isinstance(exc, et.ConnectionTimeout):
        return BackendUnavailable(f"Elasticsearch at {where} did not answer {op} within {timeout:g} s", op=op)
    if isinstance(exc, et.TlsError):
        return BackendUnavailable(
            f"TLS with Elasticsearch at {where} failed; check its certificate (or backend.es_verify_certs)", op=op
        )
    if isinstance(exc, et.ConnectionError):
        return BackendUnavailable(f"cannot reach Elasticsearch at {where}", op=op)
    if isinstance(exc, (et.TransportError, es.SerializationError)):
        return BackendUnavailable(f"Elasticsearch {op} failed: {type(exc).__name__}", op=op)
    return None


class ElasticsearchBackend:
    name = "elasticsearch"

    def __init__(
        self,
        url: str,
        index: str,
        dim: int,
        *,
        api_key: str = "",
        username: str = "",
        password: str = "",
        verify_certs: bool = True,
        plain_json: bool = False,
        timeout: float = 10.0,
        node_class: type | None = None,
    ) -> None:
        self.url = url
        self.index = ec.check_index_name(index)
        self.dim = dim
        self.timeout = timeout
        self._api_key = api_key
        self._basic = (username, password) if username else None
        self._verify = verify_certs
        self._plain_json = plain_json
        self._node_class = node_class
        self._client: Any = None
        self._lock = threading.Lock()
        self._warm = False
        self.version: tuple[int, int] = (0, 0)
        self._knn = False
        self._rrf_key: str | None = None

    @classmethod
    def from_settings(cls, settings: Settings, dim: int) -> ElasticsearchBackend:
        b = settings.backend
        return cls(
            b.es_url,
            b.collection,
            dim,
            api_key=b.es_api_key.get() if b.es_api_key else "",
            username=b.es_username,
            password=b.es_password.get() if b.es_password else "",
            verify_certs=b.es_verify_certs,
            plain_json=b.es_compat_plain_json,
            timeout=b.timeout,
        )

    # -- lifecycle -----------------------------------------------------------------------------------
    def _errors(self, op: str) -> AbstractContextManager[None]:
        return mapped_errors(lambda exc: self._map_error(exc, op))

    def _map_error(self, exc: Exception, op: str) -> BridgeError | None:
        mapped = map_error(exc, op, self.url, self.index, self.timeout)
        if mapped is None:
            return None
        if mapped.details.get("type") == "index_not_found_exception":
            self._warm = False  # deleted behind our back: the next call re-creates it
        log.warning(
            "elasticsearch.error",
            extra={
                "op": op,
                "status": mapped.details.get("status"),
                "type": mapped.details.get("type", type(exc).__name__),
            },
        )
        return mapped

    def _connect(self) -> Any:
        if self._client is None:
            from elastic_transport import Urllib3HttpNode
            from elasticsearch import Elasticsearch

            node = self._node_class or Urllib3HttpNode
            kwargs: dict[str, Any] = {
                "request_timeout": self.timeout,
                "verify_certs": self._verify,
                "max_retries": 1,
                "retry_on_timeout": False,
                "node_class": ec.plain_json(node) if self._plain_json else node,
            }
            if self._api_key:
                kwargs["api_key"] = self._api_key
            elif self._basic:
                kwargs["basic_auth"] = self._basic
            try:
                self._client = Elasticsearch(self.url, **kwargs)
            except ValueError:  # raised by the client for a URL it cannot parse
                raise ConfigurationError(f"backend.es_url {safe_url(self.url)!r} is not a usable URL") from None
        return self._client

    def warm_up(self) -> None:
        """Read the server version, create the index if missing, check its mapping if present."""
        with self._lock:
            if self._warm:
                return
            client = self._connect()
            with self._errors("connect"):
                info = client.info()
            version = info.get("version", {})
            if version.get("distribution") == "opensearch":
                raise ConfigurationError(
                    f"{safe_url(self.url)} is OpenSearch; backend.kind = 'elasticsearch' needs "
                    "Elasticsearch 7.x, 8.x or 9.x"
                )
            self.version = ec.parse_version(str(version.get("number", "0")))
            with self._errors("create index"):
                if not client.indices.exists(index=self.index):
                    self._create(client)
                mapping = client.indices.get_mapping(index=self.index)
            indices: dict[str, Any] = dict(mapping.body)
            first: dict[str, Any] = next(iter(indices.values()), {})
            existing: dict[str, Any] = first.get("mappings", {})
            problems = ec.mapping_conflicts(existing, self.dim)
            if problems:
                raise ConfigurationError(
                    f"Elasticsearch index {self.index!r} exists but does not fit: "
                    + "; ".join(problems[:5])
                    + ". Nothing was changed; use another backend.collection or re-create the index."
                )
            self._knn = ec.uses_knn(existing, self.version)
            self._rrf_key = ec.rrf_window_key(self.version) if self._knn else None
            self._warm = True
            log.info(
                "elasticsearch.ready",
                extra={
                    "version": ".".join(map(str, self.version)),
                    "index": self.index,
                    "knn": self._knn,
                    "rrf": self._rrf_key is not None,
                },
            )

    def _create(self, client: Any) -> None:
        import elasticsearch as es

        body = ec.index_body(self.dim, self.version)
        try:
            client.indices.create(index=self.index, settings=body["settings"], mappings=body["mappings"])
            log.info("elasticsearch.index_created", extra={"index": self.index, "dim": self.dim})
        except es.BadRequestError as exc:  # another worker created it first
            if _error_type(exc) != "resource_already_exists_exception":
                raise

    def _ready_client(self) -> Any:
        if not self._warm:
            self.warm_up()
        return self._connect()

    def ready(self) -> bool:
        try:
            client = self._ready_client()
            return bool(client.options(request_timeout=min(self.timeout, 3.0)).indices.exists(index=self.index))
        except Exception:  # readiness probe: any failure means "not ready"
            return False

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                try:
                    self._client.close()
                finally:
                    self._client = None
                    self._warm = False

    # -- writes -------------------------------------------------------------------------------------
    def upsert(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None:
        if not chunks:
            return
        vecs = np.asarray(vectors, dtype=np.float32)
        client = self._ready_client()
        batches = [range(i, min(i + BULK_BATCH, len(chunks))) for i in range(0, len(chunks), BULK_BATCH)]
        for n, batch in enumerate(batches):
            ops: list[dict[str, Any]] = []
            for i in batch:
                ops.append({"index": {"_index": self.index, "_id": chunks[i].id}})
                ops.append(_document(chunks[i], vecs[i]))
            last = n == len(batches) - 1
            with self._errors("upsert"):
                res = client.bulk(operations=ops, refresh="wait_for" if last else False)
            if res.get("errors"):
                failed = [it for it in res["items"] if it.get("index", {}).get("error")]
                kind = _body_error_type(failed[0]["index"]) if failed else ""
                log.warning("elasticsearch.bulk_rejected", extra={"count": len(failed), "type": kind})
                raise BackendUnavailable(
                    f"Elasticsearch rejected {len(failed)} of {len(batch)} chunks ({kind})", op="upsert", type=kind
                )

    def delete_document(self, document_id: str) -> int:
        client = self._ready_client()
        with self._errors("delete"):
            res = client.delete_by_query(
                index=self.index, query={"term": {"document_id": document_id}}, refresh=True, conflicts="proceed"
            )
        return int(res.get("deleted", 0))

    # -- reads --------------------------------------------------------------------------------------
    def _filters(self, query: SearchQuery) -> list[dict[str, Any]]:
        filters = ec.scope_filter(scope_clauses(query.scope))
        if query.filter is not None:
            from assistant_bridge.core.filters import to_elasticsearch

            filters.append(to_elasticsearch(query.filter))
        return filters

    def search(self, query: SearchQuery) -> list[SearchHit]:
        if query.scope.document_ids == ():
            return []
        client = self._ready_client()
        limit = max(1, query.limit)
        filters = self._filters(query)
        text, lex = query.text, lexical_form(query.text)
        vector = list(query.vector or ())
        if not vector and query.mode == "dense":
            return []
        with self._errors("search"):
            if query.mode == "lexical" or not vector:  # hybrid without a vector is lexical
                res = client.search(index=self.index, **ec.lexical_body(text, lex, filters, limit))
                hits = self._hits(res, lambda s: s)
            elif query.mode == "dense":
                res = client.search(index=self.index, **ec.dense_body(text, vector, filters, limit, self._knn))
                hits = self._hits(res, lambda s: ec.dense_score(s, self._knn))
            else:
                hits = self._hybrid(client, text, lex, vector, filters, limit)
        return [h for h in hits if chunk_visible(h.chunk, query.scope)]

    def _hybrid(
        self, client: Any, text: str, lex: str, vector: list[float], filters: list[dict[str, Any]], limit: int
    ) -> list[SearchHit]:
        depth = max(limit * 4, 40)
        if self._rrf_key is not None:
            import elasticsearch as es

            try:
                res = client.search(
                    index=self.index, **ec.rrf_body(text, lex, vector, filters, limit, depth, self._rrf_key)
                )
                return self._hits(res, lambda s: s)
            except es.AuthorizationException as exc:  # RRF needs an Enterprise licence; fuse here instead
                if "licen" not in str(getattr(exc, "body", "")).lower():
                    raise
                log.info("elasticsearch.rrf_unlicensed", extra={"fallback": "client_side"})
                self._rrf_key = None
        searches: list[dict[str, Any]] = []
        for body in (
            ec.dense_body(text, vector, filters, depth, self._knn),
            ec.lexical_body(text, lex, filters, depth),
        ):
            searches += [{"index": self.index}, body]
        res = client.msearch(searches=searches)
        runs = []
        for _i, (r, score) in enumerate(
            zip(res["responses"], (lambda s: ec.dense_score(s, self._knn), lambda s: s), strict=False)
        ):
            if "error" in r:
                kind = _body_error_type(r)
                raise BackendUnavailable(
                    f"Elasticsearch search failed (HTTP {r.get('status')} {kind})",
                    op="search",
                    status=r.get("status"),
                    type=kind,
                )
            runs.append(self._hits(r, score))
        return rrf_fuse(runs, limit)

    @staticmethod
    def _hits(res: Any, score: Any) -> list[SearchHit]:
        out = []
        for h in res["hits"]["hits"]:
            frags = tuple(f for f in (h.get("highlight") or {}).get("text", ()) if f.strip())
            out.append(
                SearchHit(chunk=_chunk(h["_source"]), score=float(score(h.get("_score") or 0.0)), highlights=frags)
            )
        return out

    def _scan(self, filters: list[dict[str, Any]], limit: int | None = None) -> list[Chunk]:
        client = self._ready_client()
        out: list[Chunk] = []
        after: list[Any] | None = None
        while limit is None or len(out) < limit:
            size = PAGE if limit is None else min(PAGE, limit - len(out))
            kwargs: dict[str, Any] = {
                "query": {"bool": {"filter": filters}},
                "size": size,
                "sort": [{"position": "asc"}, {"id": "asc"}],
                "source": {"excludes": ec.SOURCE_EXCLUDES},
                "track_total_hits": False,
            }
            if after is not None:
                kwargs["search_after"] = after
            with self._errors("query"):
                hits = client.search(index=self.index, **kwargs)["hits"]["hits"]
            out.extend(_chunk(h["_source"]) for h in hits)
            if len(hits) < size:
                break
            after = hits[-1]["sort"]
        return out

    def get_chunks(self, chunk_ids: Sequence[str], scope: Scope) -> list[Chunk]:
        if not chunk_ids:
            return []
        filters = [{"terms": {"id": list(dict.fromkeys(chunk_ids))}}, *ec.scope_filter(scope_clauses(scope))]
        found = {c.id: c for c in self._scan(filters, limit=len(set(chunk_ids)))}
        return [found[i] for i in dict.fromkeys(chunk_ids) if i in found and chunk_visible(found[i], scope)]

    def document_chunks(self, document_id: str, scope: Scope) -> list[Chunk]:
        filters = [{"term": {"document_id": document_id}}, *ec.scope_filter(scope_clauses(scope))]
        return [c for c in self._scan(filters) if chunk_visible(c, scope)]

    def count(self) -> int:
        client = self._ready_client()
        with self._errors("count"):
            return int(client.count(index=self.index)["count"])


def _document(c: Chunk, vec: np.ndarray) -> dict[str, Any]:
    return {
        **chunk_record(c),
        "lexical": lexical_form(indexed_text(c.title, c.text)),
        ec.VECTOR_FIELD: [float(x) for x in vec],
    }


def _chunk(e: dict[str, Any]) -> Chunk:
    return chunk_from_record(e, e.get("bboxes") or ())
