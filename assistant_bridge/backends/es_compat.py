"""What differs between Elasticsearch 7.x, 8.x and 9.x, as data: the index definition, the request bodies
of each search mode, and a transport shim for servers the 9.x client cannot talk to as shipped.

Pure functions only (no I/O); :mod:`assistant_bridge.backends.elasticsearch` sends what these build.

* **Index**: keyword scope fields, an analysed ``text`` field (for highlighting), a ``lexical`` field holding
  :func:`~assistant_bridge.core.textnorm.lexical_form` of title and text, split on whitespace and
  punctuation like Milvus' ``standard`` analyser (so pre-split Japanese bigrams stay tokens and both
  backends rank alike), and the vector: ``dense_vector`` (HNSW, cosine) on 8.x/9.x, a non-indexed float
  array kept in ``_source`` on 7.x.
* **Dense**: top-level ``knn`` with a ``filter`` on 8.4+; elsewhere a brute-force cosine ``script_score``
  over ``params._source.vector`` (no x-pack function needed, so it runs on the OSS builds).
* **Hybrid**: the ``retriever: {rrf: ...}`` form on 8.14+ (``window_size`` on 8.14, ``rank_window_size``
  after); otherwise two sub-searches fused client-side.
* **Scores** are reported like Milvus: BM25 for lexical, cosine similarity in [-1, 1] for dense (kNN's
  ``(1 + cos) / 2`` and the script's ``1 + cos`` are mapped back), the RRF sum for hybrid.
* :class:`PlainJsonNode`: the 9.x client always sends ``application/vnd.elasticsearch+json;
  compatible-with=9``, which 7.x and 8.x servers reject, and insists on the ``X-Elastic-Product`` header
  that servers before 7.14 do not send. The shim sends plain ``application/json`` and supplies the header.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from assistant_bridge.backends.base import RRF_K
from assistant_bridge.core.scope import ScopeClauses
from assistant_bridge.errors import ConfigurationError

SCHEMA_VERSION = 1
VECTOR_FIELD = "vector"
SOURCE_EXCLUDES = [VECTOR_FIELD, "lexical"]
_KEYWORD_MAX = 8000  # longer keyword values are kept in _source but not indexed (Lucene's term limit)

ANALYSIS: dict[str, Any] = {
    "tokenizer": {
        # whitespace and punctuation split, letters/digits/marks of any script kept: "経費 費精" -> 経費, 費精
        "ab_words": {"type": "pattern", "pattern": "[^\\p{L}\\p{N}\\p{M}]+"},
    },
    "analyzer": {
        "ab_lexical": {"type": "custom", "tokenizer": "ab_words", "filter": ["lowercase"]},
        # for highlighting the raw text: CJK bigrams like Lucene's CJKAnalyzer, without stop words
        "ab_text": {"type": "custom", "tokenizer": "standard", "filter": ["cjk_width", "lowercase", "cjk_bigram"]},
    },
}

# cosine over the vector kept in _source; 1 + cos keeps the score non-negative as script_score requires
COSINE_SCRIPT = (
    "def v = params._source.vector; if (v == null) { return 0.0; } "
    "double dot = 0.0; double nv = 0.0; "
    "for (int i = 0; i < params.q.size(); ++i) { double x = v[i]; dot += params.q[i] * x; nv += x * x; } "
    "if (nv == 0.0 || params.qn == 0.0) { return 1.0; } "
    "return Math.max(0.0, 1.0 + dot / (Math.sqrt(nv) * params.qn));"
)

_INDEX_NAME = re.compile(r"[a-z0-9][a-z0-9_.\-]{0,254}\Z")


def check_index_name(name: str) -> str:
    """An Elasticsearch index name (lower case, no spaces or ``\\/*?"<>|,#:``), or ConfigurationError."""
    if not _INDEX_NAME.match(name) or name in (".", ".."):
        raise ConfigurationError(
            f"backend.collection {name!r} is not a valid Elasticsearch index name: use lower-case letters, digits, "
            "'-', '_' or '.', not starting with '-', '_' or '+'"
        )
    return name


def parse_version(number: str) -> tuple[int, int]:
    """``"8.15.1"`` -> ``(8, 15)``; ``"9.1.0-SNAPSHOT"`` -> ``(9, 1)``."""
    parts = re.findall(r"\d+", number)[:2]
    if not parts:
        raise ValueError(f"not a version number: {number!r}")
    return int(parts[0]), int(parts[1]) if len(parts) > 1 else 0


def knn_supported(version: tuple[int, int]) -> bool:
    """Top-level ``knn`` with ``filter`` in ``_search`` (8.4+)."""
    return version >= (8, 4)


def rrf_window_key(version: tuple[int, int]) -> str | None:
    """The name of the RRF retriever's window parameter, or ``None`` where there is no RRF retriever."""
    if version >= (8, 15):
        return "rank_window_size"
    if version >= (8, 14):
        return "window_size"
    return None


# ------------------------------------------------------------------------------------------------- index


def vector_mapping(dim: int, version: tuple[int, int]) -> dict[str, Any]:
    if version[0] >= 8:
        return {
            "type": "dense_vector",
            "dims": dim,
            "index": True,
            "similarity": "cosine",
            "index_options": {"type": "hnsw", "m": 16, "ef_construction": 100},
        }
    return {"type": "float", "index": False, "doc_values": False}


def index_body(dim: int, version: tuple[int, int]) -> dict[str, Any]:
    """``settings`` and ``mappings`` for a new index on a cluster of ``version``."""
    kw: dict[str, Any] = {"type": "keyword"}
    long_kw: dict[str, Any] = {"type": "keyword", "ignore_above": _KEYWORD_MAX}
    props: dict[str, Any] = {
        "id": kw,
        "document_id": kw,
        "position": {"type": "long"},
        "title": long_kw,
        "text": {"type": "text", "analyzer": "ab_text"},
        "lexical": {"type": "text", "analyzer": "ab_lexical"},
        "url": long_kw,
        "filename": long_kw,
        "language": kw,
        "modality": kw,
        "page_number": {"type": "long"},
        "start_time": {"type": "double"},
        "end_time": {"type": "double"},
        "start_char": {"type": "long"},
        "end_char": {"type": "long"},
        "bboxes": {"type": "object", "enabled": False},
        "tenant": kw,
        "owner": kw,
        "workspaces": kw,
        "session_id": kw,
        VECTOR_FIELD: vector_mapping(dim, version),
    }
    return {
        "settings": {"analysis": ANALYSIS},
        "mappings": {
            "dynamic": "strict",
            "_meta": {"assistant_bridge": {"schema": SCHEMA_VERSION, "dim": dim}},
            "properties": props,
        },
    }


def mapping_conflicts(existing: dict[str, Any], dim: int) -> list[str]:
    """Why an existing index's mapping cannot serve this backend (empty when it can).

    Every field must be present with the type this backend writes (analysers included); the vector may
    be either form, but its dimension must match ``dim``.
    """
    want = index_body(dim, (8, 0))["mappings"]["properties"]
    have = existing.get("properties") or {}
    problems: list[str] = []
    for name, spec in want.items():
        got = have.get(name)
        if got is None:
            problems.append(f"field {name!r} is missing")
            continue
        got_type = got.get("type", "object")
        if name == VECTOR_FIELD:
            if got_type == "dense_vector":
                got_dim = int(got.get("dims", dim))
                if got_dim != dim:
                    problems.append(f"it holds {got_dim}-d vectors but the embedder makes {dim}-d ones")
            elif got_type != "float":
                problems.append(f"field 'vector' is {got_type}, expected dense_vector or float")
            continue
        if got_type != spec.get("type", "object"):
            problems.append(f"field {name!r} is {got_type}, expected {spec.get('type')}")
        elif "analyzer" in spec and got.get("analyzer") != spec["analyzer"]:
            problems.append(
                f"field {name!r} uses analyzer {got.get('analyzer', 'standard')!r}, expected {spec['analyzer']!r}"
            )
    meta_dim = ((existing.get("_meta") or {}).get("assistant_bridge") or {}).get("dim")
    if meta_dim is not None and int(meta_dim) != dim and not any("-d vectors" in p for p in problems):
        problems.append(f"it holds {meta_dim}-d vectors but the embedder makes {dim}-d ones")
    return problems


def uses_knn(existing_mapping: dict[str, Any], version: tuple[int, int]) -> bool:
    """Whether dense search can use ``knn`` on this index (an indexed ``dense_vector`` on 8.4+)."""
    vec = (existing_mapping.get("properties") or {}).get(VECTOR_FIELD) or {}
    return knn_supported(version) and vec.get("type") == "dense_vector" and vec.get("index", True) is not False


# ----------------------------------------------------------------------------------------------- queries


def scope_filter(c: ScopeClauses) -> list[dict[str, Any]]:
    """The ES ``bool.filter`` clauses for :func:`~assistant_bridge.core.scope.scope_clauses` (all must hold)."""
    out: list[dict[str, Any]] = []
    if c.document_ids is not None:
        out.append({"terms": {"document_id": list(c.document_ids)}})
    session_ids = [""] if not c.session_id else ["", c.session_id]
    out.append(
        {
            "bool": {
                "should": [{"terms": {"session_id": session_ids}}, {"term": {"owner": c.user_id}}],
                "minimum_should_match": 1,
            }
        }
    )
    if c.restricted:
        rule: list[dict[str, Any]] = [
            {"term": {"owner": c.user_id}},
            {"bool": {"filter": [{"term": {"owner": ""}}], "must_not": [{"exists": {"field": "workspaces"}}]}},
        ]
        if c.session_id:
            rule.append({"term": {"session_id": c.session_id}})
        if c.workspaces:
            rule.append({"terms": {"workspaces": list(c.workspaces)}})
        global_rule = {"bool": {"filter": [{"term": {"tenant": ""}}], "should": rule, "minimum_should_match": 1}}
        if c.tenant is not None:
            out.append({"bool": {"should": [{"term": {"tenant": c.tenant}}, global_rule], "minimum_should_match": 1}})
        else:
            out.append(global_rule)
    return out


def highlight(text: str) -> dict[str, Any]:
    """Plain-text passages of the ``text`` field around the query's terms (no tags)."""
    return {
        "pre_tags": [""],
        "post_tags": [""],
        "encoder": "default",
        "order": "score",
        "fields": {
            "text": {
                "type": "unified",
                "fragment_size": 300,
                "number_of_fragments": 2,
                "no_match_size": 0,
                "highlight_query": {"match": {"text": {"query": text}}},
            }
        },
    }


def _common(size: int, text: str) -> dict[str, Any]:
    body: dict[str, Any] = {"size": size, "_source": {"excludes": SOURCE_EXCLUDES}, "track_total_hits": False}
    if text.strip():
        body["highlight"] = highlight(text)
    return body


def lexical_query(lexical: str, filters: list[dict[str, Any]]) -> dict[str, Any]:
    return {"bool": {"must": [{"match": {"lexical": {"query": lexical}}}], "filter": filters}}


def knn_clause(vector: Sequence[float], k: int, filters: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "field": VECTOR_FIELD,
        "query_vector": [float(x) for x in vector],
        "k": k,
        "num_candidates": min(10000, max(100, 4 * k)),
        "filter": {"bool": {"filter": filters}},
    }


def lexical_body(text: str, lexical: str, filters: list[dict[str, Any]], size: int) -> dict[str, Any]:
    return {**_common(size, text), "query": lexical_query(lexical, filters)}


def dense_body(
    text: str, vector: Sequence[float], filters: list[dict[str, Any]], size: int, knn: bool
) -> dict[str, Any]:
    if knn:
        return {**_common(size, text), "knn": knn_clause(vector, size, filters)}
    q = [float(x) for x in vector]
    script = {"source": COSINE_SCRIPT, "params": {"q": q, "qn": math.sqrt(sum(x * x for x in q))}}
    return {
        **_common(size, text),
        "query": {"script_score": {"query": {"bool": {"filter": filters}}, "script": script}},
    }


def rrf_body(
    text: str,
    lexical: str,
    vector: Sequence[float],
    filters: list[dict[str, Any]],
    size: int,
    depth: int,
    window_key: str,
) -> dict[str, Any]:
    """One ``_search`` fusing a kNN and a BM25 retriever server-side (8.14+)."""
    retrievers = [{"knn": knn_clause(vector, depth, filters)}, {"standard": {"query": lexical_query(lexical, filters)}}]
    body = _common(size, text)
    body.pop("track_total_hits")
    body["retriever"] = {"rrf": {"retrievers": retrievers, window_key: max(depth, size), "rank_constant": RRF_K}}
    return body


def dense_score(raw: float, knn: bool) -> float:
    """Cosine similarity from the ``_score`` of :func:`dense_body`."""
    return 2.0 * raw - 1.0 if knn else raw - 1.0


# ------------------------------------------------------------------------------------------ transport shim

_COMPAT = re.compile(r"application/vnd\.elasticsearch\+([a-z\-]+)\s*;\s*compatible-with=\d+")


def plain_json_headers(headers: Any) -> Any:
    """A copy of ``headers`` with ``vnd.elasticsearch+json; compatible-with=N`` turned into plain JSON."""
    if not headers:
        return headers
    headers = headers.copy()
    for key in ("accept", "content-type"):
        if key in headers:
            headers[key] = _COMPAT.sub(r"application/\1", headers[key])
    return headers


def plain_json(node_class: type) -> type:
    """A subclass of an ``elastic_transport`` node class that speaks plain JSON (see the module doc)."""

    class _PlainJson(node_class):  # type: ignore[misc]
        def perform_request(
            self,
            method: str,
            target: str,
            body: Any = None,
            headers: Any = None,
            request_timeout: Any = None,
            **kw: Any,
        ) -> Any:
            if request_timeout is not None:
                kw["request_timeout"] = request_timeout
            resp = super().perform_request(method, target, body=body, headers=plain_json_headers(headers), **kw)
            meta_headers = resp.meta.headers
            if "x-elastic-product" not in meta_headers:
                try:
                    meta_headers["x-elastic-product"] = "Elasticsearch"
                except TypeError:  # frozen headers: nothing to add to
                    pass
            return resp

    _PlainJson.__name__ = _PlainJson.__qualname__ = f"PlainJson{node_class.__name__}"
    return _PlainJson


def _default_node() -> type:
    from elastic_transport import Urllib3HttpNode

    return plain_json(Urllib3HttpNode)


def __getattr__(name: str) -> Any:  # PlainJsonNode is built on first use (keeps the import cheap)
    if name == "PlainJsonNode":
        node = _default_node()
        globals()["PlainJsonNode"] = node
        return node
    raise AttributeError(name)
