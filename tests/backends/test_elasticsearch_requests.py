"""The Elasticsearch backend's requests and failure handling, against a fake cluster.

No Elasticsearch 8 or 9 server can run on the test machines (the only server a package registry ships is
the 7.9.2 OSS build, which the contract suite uses), so the kNN and RRF request paths are checked here: a
fake ``elastic_transport`` node (or, for the recovery test, a small HTTP server) answers the official
9.x client with canned JSON in the shape Elasticsearch 8/9 returns, and records every request so the tests
can assert the exact bodies. It also plays the media-type and product-header behaviour of 7.x/8.x
servers, an outage and an authentication failure.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import elastic_transport as et
import numpy as np
import pytest
from elastic_transport import ApiResponseMeta, BaseNode, HttpHeaders
from elastic_transport._node._base import NodeApiResponse

from assistant_bridge.backends import elasticsearch as esb
from assistant_bridge.backends import es_compat as ec
from assistant_bridge.backends.elasticsearch import ElasticsearchBackend, map_error, safe_url
from assistant_bridge.backends.lite_server import free_port
from assistant_bridge.core.filters import parse_filter
from assistant_bridge.core.scope import scope_clauses
from assistant_bridge.domain import BBox, Chunk, Ownership, Principal, Scope, SearchQuery
from assistant_bridge.errors import BackendUnavailable, ConfigurationError

pytestmark = pytest.mark.unit

DIM = 4
INDEX = "chunks"
ALICE = Scope(Principal("alice", workspaces=("w-sales",)))
VEC = (0.5, 0.5, 0.5, 0.5)
EXCLUDES = {"excludes": ["vector", "lexical"]}


def _source(cid: str, doc: str, **own: Any) -> dict[str, Any]:
    return {
        "id": cid,
        "document_id": doc,
        "position": 0,
        "title": "Password reset",
        "text": "Reset it from the portal.",
        "url": "",
        "filename": "pw.pdf",
        "language": "en",
        "modality": "text",
        "page_number": 1,
        "start_time": None,
        "end_time": None,
        "start_char": 0,
        "end_char": 25,
        "bboxes": [{"bbox": [10, 20, 300, 40], "page_number": 1, "layout_width": 612, "layout_height": 792}],
        "tenant": "",
        "owner": own.get("owner", ""),
        "workspaces": [],
        "session_id": "",
    }


def _hit(cid: str, doc: str, score: float, highlight: list[str] | None = None, **own: Any) -> dict[str, Any]:
    h: dict[str, Any] = {"_index": INDEX, "_id": cid, "_score": score, "_source": _source(cid, doc, **own)}
    if highlight:
        h["highlight"] = {"text": highlight}
    return h


def _search_response(*hits: dict[str, Any]) -> dict[str, Any]:
    """The shape of an 8.x/9.x ``_search`` answer (``track_total_hits: false`` drops ``hits.total``)."""
    return {
        "took": 3,
        "timed_out": False,
        "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
        "hits": {"max_score": hits[0]["_score"] if hits else None, "hits": list(hits)},
    }


class FakeCluster:
    """Routes requests like a single-node cluster of ``version``; ``searches`` is a queue of canned answers."""

    def __init__(self, version: str = "9.1.3") -> None:
        self.version = version
        self.mapping: dict[str, Any] | None = None
        self.searches: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.down = False
        self.answer: tuple[int, Any] | None = None  # answer every request with this (status, body)

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])

    def handle(self, method: str, target: str, body: bytes | None, headers: Any) -> tuple[int, Any, dict[str, str]]:
        url = urlsplit(target)
        text = (body or b"").decode()
        if text and "ndjson" in (headers or {}).get("content-type", ""):
            parsed: Any = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            parsed = json.loads(text) if text else None
        self.requests.append(
            {
                "method": method,
                "path": url.path,
                "params": dict(parse_qsl(url.query)),
                "body": parsed,
                "headers": dict(headers or {}),
            }
        )
        out_headers = {"content-type": "application/json"}
        if (self.major, int(self.version.split(".")[1])) >= (7, 14):
            out_headers["x-elastic-product"] = "Elasticsearch"
        accept = (headers or {}).get("accept", "")
        wants = re.search(r"compatible-with=(\d+)", accept)
        if wants and self.major < 8:
            return 406, {"error": f"Content-Type header [{accept}] is not supported", "status": 406}, out_headers
        if wants and int(wants.group(1)) not in (self.major, self.major - 1):
            err = {"type": "media_type_header_exception", "reason": "Invalid media-type value on headers [Accept]"}
            return 400, {"error": {"root_cause": [err], **err}, "status": 400}, out_headers
        if wants:
            out_headers["content-type"] = f"application/vnd.elasticsearch+json;compatible-with={self.major}"
        if self.answer is not None:
            return self.answer[0], self.answer[1], out_headers
        return (*self._route(method, url.path, parsed), out_headers)

    def _route(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        if path == "/":
            return 200, {
                "name": "n1",
                "cluster_name": "fake",
                "tagline": "You Know, for Search",
                "version": {"number": self.version, "build_flavor": "default"},
            }
        if path == f"/{INDEX}" and method == "HEAD":
            return (200 if self.mapping is not None else 404), None
        if path == f"/{INDEX}" and method == "PUT":
            self.mapping = body["mappings"]
            return 200, {"acknowledged": True, "shards_acknowledged": True, "index": INDEX}
        if path == f"/{INDEX}/_mapping":
            return 200, {INDEX: {"mappings": self.mapping}}
        if path in (f"/{INDEX}/_search", "/_msearch"):
            return 200, self.searches.pop(0)
        if path == "/_bulk":
            items = [
                {"index": {"_index": INDEX, "_id": op["index"]["_id"], "status": 201, "result": "created"}}
                for op in body[::2]
            ]
            return 200, {"took": 2, "errors": False, "items": items}
        if path == f"/{INDEX}/_delete_by_query":
            return 200, {"took": 4, "timed_out": False, "total": 3, "deleted": 3, "failures": []}
        if path == f"/{INDEX}/_count":
            return 200, {"count": 7, "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0}}
        return 404, {"error": {"type": "fake_route_missing", "reason": path}, "status": 404}

    def bodies(self, path: str) -> list[Any]:
        return [r["body"] for r in self.requests if r["path"] == path]


def node_for(cluster: FakeCluster) -> type:
    class FakeNode(BaseNode):
        _CLIENT_META_HTTP_CLIENT = ("fk", "1.0")

        def perform_request(
            self, method: str, target: str, body: bytes | None = None, headers: Any = None, request_timeout: Any = None
        ) -> Any:
            if cluster.down:
                raise et.ConnectionError("Failed to establish a new connection: [Errno 111] Connection refused")
            status, payload, out = cluster.handle(method, target, body, headers)
            meta = ApiResponseMeta(
                status=status, http_version="1.1", headers=HttpHeaders(out), duration=0.001, node=self.config
            )
            return NodeApiResponse(meta, json.dumps(payload).encode() if payload is not None else b"")

        def close(self) -> None:
            return None

    return FakeNode


def backend_on(cluster: FakeCluster, **kw: Any) -> ElasticsearchBackend:
    return ElasticsearchBackend("http://es.example:9200", INDEX, DIM, node_class=node_for(cluster), **kw)


@pytest.fixture
def es9() -> Iterator[tuple[FakeCluster, ElasticsearchBackend]]:
    cluster = FakeCluster("9.1.3")
    b = backend_on(cluster)
    b.warm_up()
    yield cluster, b
    b.close()


def _query(mode: str, flt: str | None = None, scope: Scope = ALICE, limit: int = 3) -> SearchQuery:
    return SearchQuery(
        text="reset password",
        scope=scope,
        mode=mode,
        limit=limit,  # type: ignore[arg-type]
        filter=parse_filter(flt),
        vector=VEC,
    )


def _alice_filters() -> list[dict[str, Any]]:
    return ec.scope_filter(scope_clauses(ALICE))


# ----------------------------------------------------------------------------------------- index creation


def test_warm_up_on_9x_creates_a_dense_vector_index(es9: tuple[FakeCluster, ElasticsearchBackend]) -> None:
    cluster, b = es9
    (put,) = [r for r in cluster.requests if r["method"] == "PUT"]
    props = put["body"]["mappings"]["properties"]
    assert props["vector"] == {
        "type": "dense_vector",
        "dims": DIM,
        "index": True,
        "similarity": "cosine",
        "index_options": {"type": "hnsw", "m": 16, "ef_construction": 100},
    }
    assert props["lexical"]["analyzer"] == "ab_lexical" and props["tenant"] == {"type": "keyword"}
    assert put["body"]["mappings"]["dynamic"] == "strict"
    assert put["body"]["settings"]["analysis"] == ec.ANALYSIS
    assert (b.version, b._knn, b._rrf_key) == ((9, 1), True, "rank_window_size")
    b.warm_up()  # idempotent: no second info/create
    assert sum(r["path"] == "/" for r in cluster.requests) == 1


def test_7x_index_keeps_the_vector_in_source_only() -> None:
    body = ec.index_body(DIM, (7, 17))
    assert body["mappings"]["properties"]["vector"] == {"type": "float", "index": False, "doc_values": False}


@pytest.mark.parametrize(
    "change, needle",
    [
        (lambda m: m["properties"]["vector"].update(dims=384), "384-d vectors"),
        (lambda m: m["properties"]["tenant"].update(type="text"), "'tenant' is text"),
        (lambda m: m["properties"]["lexical"].update(analyzer="standard"), "analyzer 'standard'"),
        (lambda m: m["properties"].pop("session_id"), "'session_id' is missing"),
    ],
)
def test_an_index_that_does_not_fit_is_refused_and_left_alone(change: Any, needle: str) -> None:
    cluster = FakeCluster("8.15.0")
    cluster.mapping = ec.index_body(DIM, (8, 15))["mappings"]
    change(cluster.mapping)
    with pytest.raises(ConfigurationError, match=re.escape(needle)) as err:
        backend_on(cluster, plain_json=True).warm_up()
    assert "Nothing was changed" in err.value.message
    assert {r["method"] for r in cluster.requests} <= {"GET", "HEAD"}


# ------------------------------------------------------------------------------------------- search bodies


def test_dense_search_on_9x_is_a_filtered_knn(es9: tuple[FakeCluster, ElasticsearchBackend]) -> None:
    cluster, b = es9
    cluster.searches.append(
        _search_response(
            _hit("c1", "d-pass", 0.9, ["Reset it from the portal."]),
            _hit("c2", "d-bob", 0.8, owner="bob"),  # the server let it through: the double check drops it
        )
    )
    hits = b.search(_query("dense", flt='language == "en"'))
    body = cluster.bodies(f"/{INDEX}/_search")[-1]
    assert body == {
        "size": 3,
        "_source": EXCLUDES,
        "track_total_hits": False,
        "highlight": ec.highlight("reset password"),
        "knn": {
            "field": "vector",
            "query_vector": list(VEC),
            "k": 3,
            "num_candidates": 100,
            "filter": {"bool": {"filter": [*_alice_filters(), {"term": {"language": "en"}}]}},
        },
    }
    assert [h.chunk.id for h in hits] == ["c1"]
    assert hits[0].score == pytest.approx(0.8)  # kNN's (1 + cos) / 2 reported as the cosine
    assert hits[0].highlights == ("Reset it from the portal.",)
    assert hits[0].chunk.bboxes == (BBox(1, 10, 20, 300, 40, 612, 792),) and hits[0].chunk.url is None


def test_lexical_search_matches_the_lexical_form(es9: tuple[FakeCluster, ElasticsearchBackend]) -> None:
    cluster, b = es9
    cluster.searches.append(_search_response(_hit("c1", "d-pass", 4.2)))
    hits = b.search(SearchQuery(text="経費精算", scope=ALICE, mode="lexical", limit=5))
    body = cluster.bodies(f"/{INDEX}/_search")[-1]
    assert body["query"] == {
        "bool": {"must": [{"match": {"lexical": {"query": "経費 費精 精算"}}}], "filter": _alice_filters()}
    }
    assert "knn" not in body and hits[0].score == pytest.approx(4.2)


def test_hybrid_on_9x_is_one_rrf_retriever(es9: tuple[FakeCluster, ElasticsearchBackend]) -> None:
    cluster, b = es9
    cluster.searches.append(_search_response(_hit("c1", "d-pass", 0.0325), _hit("c3", "d-pub", 0.0161)))
    hits = b.search(_query("hybrid"))
    body = cluster.bodies(f"/{INDEX}/_search")[-1]
    filters = _alice_filters()
    assert body == {
        "size": 3,
        "_source": EXCLUDES,
        "highlight": ec.highlight("reset password"),
        "retriever": {
            "rrf": {
                "retrievers": [
                    {
                        "knn": {
                            "field": "vector",
                            "query_vector": list(VEC),
                            "k": 40,
                            "num_candidates": 160,
                            "filter": {"bool": {"filter": filters}},
                        }
                    },
                    {
                        "standard": {
                            "query": {
                                "bool": {
                                    "must": [{"match": {"lexical": {"query": "reset password"}}}],
                                    "filter": filters,
                                }
                            }
                        }
                    },
                ],
                "rank_window_size": 40,
                "rank_constant": 60,
            }
        },
    }
    assert [(h.chunk.id, h.score) for h in hits] == [("c1", 0.0325), ("c3", 0.0161)]


def test_hybrid_on_8_14_names_the_window_window_size() -> None:
    cluster = FakeCluster("8.14.3")
    b = backend_on(cluster, plain_json=True)
    cluster.searches.append(_search_response())
    b.search(_query("hybrid"))
    rrf = cluster.bodies(f"/{INDEX}/_search")[-1]["retriever"]["rrf"]
    assert rrf["window_size"] == 40 and "rank_window_size" not in rrf


def _msearch_answer() -> dict[str, Any]:
    dense = {**_search_response(_hit("c1", "d-pass", 0.9), _hit("c3", "d-pub", 0.7)), "status": 200}
    lexical = {**_search_response(_hit("c3", "d-pub", 5.0), _hit("c4", "d-four", 1.0)), "status": 200}
    return {"took": 5, "responses": [dense, lexical]}


def test_hybrid_before_8_14_fuses_knn_and_bm25_client_side() -> None:
    cluster = FakeCluster("8.10.4")
    b = backend_on(cluster, plain_json=True)
    cluster.searches.append(_msearch_answer())
    hits = b.search(_query("hybrid"))
    header1, dense, header2, lexical = cluster.bodies("/_msearch")[-1]
    assert header1 == header2 == {"index": INDEX}
    assert dense["knn"]["k"] == 40 and dense["size"] == 40
    assert lexical["query"]["bool"]["must"] == [{"match": {"lexical": {"query": "reset password"}}}]
    assert [h.chunk.id for h in hits] == ["c3", "c1", "c4"]  # c3 is in both runs
    assert hits[0].score == pytest.approx(1 / 62 + 1 / 61)


def test_unlicensed_rrf_falls_back_to_client_side_fusion_once(es9: tuple[FakeCluster, ElasticsearchBackend]) -> None:
    cluster, b = es9
    denied = {
        "error": {
            "root_cause": [
                {
                    "type": "security_exception",
                    "reason": "current license is non-compliant for [Reciprocal Rank Fusion (RRF)]",
                    "license.expired.feature": "Reciprocal Rank Fusion (RRF)",
                }
            ],
            "type": "security_exception",
            "reason": "current license is non-compliant for [Reciprocal Rank Fusion (RRF)]",
        },
        "status": 403,
    }
    cluster.answer = (403, denied)
    with pytest.raises(BackendUnavailable):  # the fake answers the msearch with 403 too
        b.search(_query("hybrid"))
    cluster.answer = None
    cluster.searches.append(_msearch_answer())
    assert [h.chunk.id for h in b.search(_query("hybrid"))] == ["c3", "c1", "c4"]
    assert b._rrf_key is None  # remembered: no more retriever requests
    tried = [r for r in cluster.requests if isinstance(r["body"], dict) and "retriever" in r["body"]]
    assert len(tried) == 1 and cluster.requests[-1]["path"] == "/_msearch"


def test_dense_on_7x_is_a_brute_force_cosine_script() -> None:
    cluster = FakeCluster("7.17.9")
    b = backend_on(cluster, plain_json=True)
    cluster.searches.append(_search_response(_hit("c1", "d-pass", 1.75)))
    hits = b.search(_query("dense"))
    query = cluster.bodies(f"/{INDEX}/_search")[-1]["query"]["script_score"]
    assert query["query"] == {"bool": {"filter": _alice_filters()}}
    assert query["script"]["params"] == {"q": list(VEC), "qn": pytest.approx(1.0)}
    assert "params._source.vector" in query["script"]["source"]
    assert hits[0].score == pytest.approx(0.75)


def test_scope_filter_per_kind_of_caller() -> None:
    admin = ec.scope_filter(scope_clauses(Scope(Principal("root", admin=True))))
    assert admin == [
        {"bool": {"should": [{"terms": {"session_id": [""]}}, {"term": {"owner": "root"}}], "minimum_should_match": 1}}
    ]
    public = {"bool": {"filter": [{"term": {"owner": ""}}], "must_not": [{"exists": {"field": "workspaces"}}]}}
    tenant = ec.scope_filter(scope_clauses(Scope(Principal("t1", tenant="t1"), document_ids=("d1",))))
    assert tenant[0] == {"terms": {"document_id": ["d1"]}}
    # the tenant's own documents, or global ones the user rule allows (public here): never others' private ones
    assert tenant[2] == {
        "bool": {
            "should": [
                {"term": {"tenant": "t1"}},
                {
                    "bool": {
                        "filter": [{"term": {"tenant": ""}}],
                        "should": [{"term": {"owner": "t1"}}, public],
                        "minimum_should_match": 1,
                    }
                },
            ],
            "minimum_should_match": 1,
        }
    }
    user = ec.scope_filter(scope_clauses(Scope(Principal("al", workspaces=("w",)), session_id="s1")))
    assert user[0]["bool"]["should"][0] == {"terms": {"session_id": ["", "s1"]}}
    assert user[1]["bool"]["filter"] == [{"term": {"tenant": ""}}]
    assert user[1]["bool"]["should"] == [
        {"term": {"owner": "al"}},
        public,
        {"term": {"session_id": "s1"}},
        {"terms": {"workspaces": ["w"]}},
    ]


# ----------------------------------------------------------------------------------------------- writes


def _chunks(n: int) -> list[Chunk]:
    return [
        Chunk(
            id=f"c{i}", document_id="d", title="T", text=f"text {i}", position=i, ownership=Ownership(owner_user_id="u")
        )
        for i in range(n)
    ]


def test_upsert_bulk_waits_for_refresh_on_the_last_batch(
    es9: tuple[FakeCluster, ElasticsearchBackend], monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster, b = es9
    monkeypatch.setattr(esb, "BULK_BATCH", 2)
    b.upsert(_chunks(3), np.ones((3, DIM), dtype=np.float32))
    bulks = [r for r in cluster.requests if r["path"] == "/_bulk"]
    assert [r["params"].get("refresh") for r in bulks] == ["false", "wait_for"]
    action, doc = bulks[0]["body"][:2]
    assert action == {"index": {"_index": INDEX, "_id": "c0"}}
    assert doc["lexical"] == "t\n\ntext 0" and doc["vector"] == [1.0] * DIM and doc["owner"] == "u"


def test_rejected_chunks_raise(es9: tuple[FakeCluster, ElasticsearchBackend]) -> None:
    cluster, b = es9
    err = {"type": "strict_dynamic_mapping_exception", "reason": "mapping set to strict"}
    cluster.answer = (
        200,
        {"took": 1, "errors": True, "items": [{"index": {"_id": "c0", "status": 400, "error": err}}]},
    )
    with pytest.raises(BackendUnavailable, match="rejected 1 of 1 chunks") as info:
        b.upsert(_chunks(1), np.ones((1, DIM), dtype=np.float32))
    assert info.value.details["type"] == "strict_dynamic_mapping_exception"


def test_delete_by_document_id_refreshes(es9: tuple[FakeCluster, ElasticsearchBackend]) -> None:
    cluster, b = es9
    assert b.delete_document("d-pass") == 3
    req = cluster.requests[-1]
    assert req["body"] == {"query": {"term": {"document_id": "d-pass"}}}
    assert req["params"] == {"refresh": "true", "conflicts": "proceed"}
    assert b.count() == 7


# ---------------------------------------------------------------------------- compatibility and failures


@pytest.mark.parametrize("version", ["7.9.2", "8.15.0"])
def test_old_clusters_need_plain_json_and_say_so(version: str) -> None:
    cluster = FakeCluster(version)
    with pytest.raises(BackendUnavailable, match="es_compat_plain_json = true"):
        backend_on(cluster).warm_up()
    b = backend_on(cluster, plain_json=True)
    b.warm_up()  # 7.9 sends no X-Elastic-Product header either: the shim supplies it
    last = cluster.requests[-1]["headers"]
    assert last["accept"] == "application/json"
    assert b.version == ec.parse_version(version)


def _serve(cluster: FakeCluster, port: int) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def _any(self) -> None:
            size = int(self.headers.get("content-length") or 0)
            status, payload, out = cluster.handle(
                self.command, self.path, self.rfile.read(size), {k.lower(): v for k, v in self.headers.items()}
            )
            data = json.dumps(payload).encode() if payload is not None else b""
            self.send_response(status)
            for k, v in out.items():
                self.send_header(k, v)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _any

        def log_message(self, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_unreachable_cluster_then_recovery_without_restart() -> None:
    port = free_port()
    b = ElasticsearchBackend(f"http://127.0.0.1:{port}", INDEX, DIM, timeout=2.0)
    with pytest.raises(BackendUnavailable, match=f"cannot reach Elasticsearch at http://127.0.0.1:{port}"):
        b.warm_up()
    assert b.ready() is False
    with pytest.raises(BackendUnavailable):
        b.search(_query("dense"))
    cluster = FakeCluster("9.0.2")
    server = _serve(cluster, port)
    try:
        assert b.ready() is True  # the next call warms up: index created, version read
        cluster.searches.append(_search_response(_hit("c1", "d-pass", 0.9)))
        assert [h.chunk.id for h in b.search(_query("dense"))] == ["c1"]
        assert cluster.mapping is not None and b.version == (9, 0)
    finally:
        server.shutdown()
        server.server_close()
        b.close()


def test_outage_after_start_is_reported_and_passes(es9: tuple[FakeCluster, ElasticsearchBackend]) -> None:
    cluster, b = es9
    cluster.down = True
    with pytest.raises(BackendUnavailable, match="cannot reach Elasticsearch at http://es.example:9200"):
        b.count()
    assert b.ready() is False
    cluster.down = False
    assert b.ready() is True and b.count() == 7


def test_auth_failure_names_the_settings_and_never_the_secret(caplog: pytest.LogCaptureFixture) -> None:
    secret = "c2VjcmV0LWFwaS1rZXktOTk5"
    cluster = FakeCluster("9.1.3")
    cluster.answer = (
        401,
        {
            "error": {
                "type": "security_exception",
                "reason": f"unable to authenticate with provided credentials [{secret}]",
            },
            "status": 401,
        },
    )
    b = ElasticsearchBackend(
        "https://elastic:pw-in-url@es.example:9200", INDEX, DIM, api_key=secret, node_class=node_for(cluster)
    )
    with caplog.at_level(logging.DEBUG), pytest.raises(BackendUnavailable) as info:
        b.warm_up()
    err = info.value
    assert "rejected the credentials (HTTP 401)" in err.message and "backend.es_api_key" in err.message
    shown = err.message + json.dumps(err.to_json()) + caplog.text
    assert secret not in shown and "pw-in-url" not in shown
    assert cluster.requests[0]["headers"]["authorization"] == f"ApiKey {secret}"  # it was sent, not shown


def test_basic_auth_is_sent_from_username_and_password() -> None:
    cluster = FakeCluster("9.1.3")
    backend_on(cluster, username="elastic", password="pw").warm_up()
    assert cluster.requests[0]["headers"]["authorization"] == "Basic ZWxhc3RpYzpwdw=="


def test_error_mapping() -> None:
    kw: dict[str, Any] = {"op": "search", "url": "http://u:p@h:9200/", "index": INDEX, "timeout": 2.0}
    timeout = map_error(et.ConnectionTimeout("read timed out"), **kw)
    assert timeout is not None and timeout.message == "Elasticsearch at http://h:9200/ did not answer search within 2 s"
    tls = map_error(et.TlsError("certificate verify failed"), **kw)
    assert tls is not None and "es_verify_certs" in tls.message
    assert map_error(ValueError("not ours"), **kw) is None
    assert safe_url("https://user:pw@host:9243/prefix?x=1") == "https://host:9243/prefix"


def test_invalid_index_name_or_url_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="not a valid Elasticsearch index name"):
        ElasticsearchBackend("http://h:9200", "My Chunks", DIM)
    for url in ("http://user:pw-secret@[bad", "http://user:pw-secret@host:port"):
        with pytest.raises(ConfigurationError, match="is not a usable URL") as info:
            ElasticsearchBackend(url, INDEX, DIM).warm_up()
        assert "pw-secret" not in info.value.message


def test_dense_without_a_vector_finds_nothing_and_hybrid_falls_back_to_lexical(
    es9: tuple[FakeCluster, ElasticsearchBackend],
) -> None:
    cluster, b = es9
    assert b.search(SearchQuery(text="reset", scope=ALICE, mode="dense")) == []
    cluster.searches.append(_search_response(_hit("c1", "d-pass", 4.2)))
    (hit,) = b.search(SearchQuery(text="reset", scope=ALICE, mode="hybrid"))
    assert "query" in cluster.bodies(f"/{INDEX}/_search")[-1] and hit.score == pytest.approx(4.2)


def test_opensearch_is_refused() -> None:
    cluster = FakeCluster("7.10.2")
    orig = cluster._route

    def route(method: str, path: str, body: Any) -> tuple[int, Any]:
        status, payload = orig(method, path, body)
        if path == "/":
            payload["version"]["distribution"] = "opensearch"
        return status, payload

    cluster._route = route  # type: ignore[method-assign]
    with pytest.raises(ConfigurationError, match="is OpenSearch"):
        backend_on(cluster, plain_json=True).warm_up()
