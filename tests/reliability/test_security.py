"""Security under stress: body size limits on every route, tenant isolation under concurrency, and the web
chat's security headers."""

from __future__ import annotations

import json
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_services, make_settings
from tests.conversation.helpers import fake_runtime

pytestmark = pytest.mark.unit
ADMIN = {"X-API-Key": "key-admin-0001"}
KEYS = [
    {"key": "key-admin-0001", "user_id": "admin", "admin": True},
    {"key": "key-service-01", "user_id": "svc", "service": True, "kind": "bearer"},
]
JSON_LIMIT = 20_000
SEARCH_LIMIT = 10_000
UPLOAD_LIMIT = 60_000
PATH_VALUES = {
    "assistant_id": "default",
    "environment_id": "default",
    "tool_id": "rag_search",
    "session_id": "s-1",
    "document_id": "d-1",
    "chunk_id": "c-1",
    "execution_id": "e-1",
    "knowledgeBaseId": "DEFAULTKB0",
    "dataSourceId": "default",
    "documentId": "d-1",
}


@pytest.fixture(scope="module")
def limited(tmp_path_factory: Any) -> Any:
    from assistant_bridge.web.app import create_app

    settings = make_settings(
        Path(tmp_path_factory.mktemp("limits")),
        auth={"keys": KEYS},
        server={"max_request_bytes": JSON_LIMIT},
        search={"max_response_bytes": SEARCH_LIMIT},
        ingest={"max_upload_bytes": UPLOAD_LIMIT},
    )
    return create_app(settings, make_services(settings))


def _post_rules(app: Any) -> list[str]:
    rules = sorted({r.rule for r in app.url_map.iter_rules() if "POST" in r.methods})
    assert len(rules) >= 15
    return [re.sub(r"<(?:\w+:)?(\w+)>", lambda m: PATH_VALUES[m.group(1)], rule) for rule in rules]


def _json_of_size(size: int) -> bytes:
    return json.dumps({"text": "x" * size}).encode()


@pytest.mark.parametrize("size", [JSON_LIMIT + 1_000, UPLOAD_LIMIT + 100_000])
def test_every_post_route_refuses_an_oversized_body_with_413_json(limited: Any, size: int) -> None:
    client = limited.test_client()
    for path in _post_rules(limited):
        resp = client.post(path, data=_json_of_size(size), content_type="application/json", headers=ADMIN)
        assert resp.status_code == 413, (path, resp.status_code, resp.get_data(as_text=True)[:200])
        assert resp.get_json()["error"]["code"] == "payload_too_large", path


def test_the_search_route_has_its_own_smaller_limit(limited: Any) -> None:
    resp = limited.test_client().post(
        "/v1/search", data=_json_of_size(SEARCH_LIMIT + 100), content_type="application/json", headers=ADMIN
    )
    assert resp.status_code == 413 and resp.get_json()["error"]["details"]["limit"] == SEARCH_LIMIT


def test_a_body_without_content_length_is_cut_at_the_limit(limited: Any) -> None:
    """A chunked body announces no size (gunicorn marks its stream as terminated): reading it stops at the
    limit with a 413."""
    import io

    client = limited.test_client()
    for path in _post_rules(limited):
        resp = client.post(
            path,
            input_stream=io.BytesIO(_json_of_size(UPLOAD_LIMIT + 10_000)),
            headers=ADMIN,
            content_type="application/json",
            environ_overrides={"wsgi.input_terminated": True},
        )
        assert resp.status_code == 413, (path, resp.status_code, resp.get_data(as_text=True)[:200])


def test_uploads_use_the_upload_limit(limited: Any) -> None:
    import io

    client = limited.test_client()
    ok = client.post(
        "/v1/documents",
        data={"file": (io.BytesIO(b"Upload limit check. " * 1500), "a.txt")},
        content_type="multipart/form-data",
        headers=ADMIN,
    )
    assert ok.status_code == 201, ok.get_data(as_text=True)[:300]  # 30 KB: over the JSON limit, within the upload one
    big = client.post(
        "/v1/documents",
        data={"file": (io.BytesIO(b"y" * (UPLOAD_LIMIT + 10)), "b.txt")},
        content_type="multipart/form-data",
        headers=ADMIN,
    )
    assert big.status_code == 413 and big.get_json()["error"]["code"] == "payload_too_large"


# -- tenant isolation under concurrency -------------------------------------------------------------------

TENANTS = {"tenant-a": "aardvark", "tenant-b": "bumblebee"}  # end user -> the word only its documents carry
SERVICE = {"Authorization": "Bearer key-service-01"}


@pytest.fixture(scope="module")
def two_tenants(tmp_path_factory: Any) -> Any:
    from assistant_bridge.web.app import create_app

    # eight client threads in one process: as many streams at once as threads (the budget is gunicorn's)
    settings = make_settings(Path(tmp_path_factory.mktemp("tenants")), auth={"keys": KEYS}, server={"max_streams": 16})
    services = make_services(settings)
    fake_runtime(services)
    app = create_app(settings, services)
    owned: dict[str, dict[str, list[str]]] = {}
    with app.test_client() as c:
        for tenant, word in TENANTS.items():
            docs, chunks = [], []
            for i in range(6):
                r = c.post(
                    "/v1/documents",
                    headers={**SERVICE, "X-End-User-ID": tenant},
                    json={
                        "title": f"{word} budget note {i}",
                        "text": f"The {word} team budget for quarter {i} covers travel and the {word} offsite.",
                    },
                )
                assert r.status_code == 201, r.get_data(as_text=True)
                docs.append(r.get_json()["document"]["id"])
            hits = c.post(
                "/v1/search",
                headers={**SERVICE, "X-End-User-ID": tenant},
                json={"query": f"{word} budget", "metadata": {"limit": 20}},
            ).get_json()["search_results"]
            chunks = [h["result_metadata"]["chunk_id"] for h in hits]
            assert len(chunks) == 6
            owned[tenant] = {"docs": docs, "chunks": chunks}
    return app, owned


def _one_request(app: Any, owned: dict[str, dict[str, list[str]]], tenant: str, n: int) -> tuple[str, str, int]:
    other = next(t for t in TENANTS if t != tenant)
    h = {**SERVICE, "X-End-User-ID": tenant}
    kind = ["search", "rag", "message", "list", "other_doc", "other_chunk", "stream"][n % 7]
    with app.test_client() as c:
        if kind == "search":
            r = c.post("/v1/search", headers=h, json={"query": "team budget travel offsite", "metadata": {"limit": 50}})
        elif kind == "rag":
            r = c.post("/v1/tools/rag_search/execute", headers=h, json={"inputs": {"query": "team budget offsite"}})
        elif kind == "message":
            r = c.post(
                "/v2/assistants/default/environments/default/message",
                headers=h,
                json={"input": {"text": "What does the team budget cover?"}},
            )
        elif kind == "list":
            r = c.get("/v1/documents", headers=h)
        elif kind == "other_doc":
            r = c.get(f"/v1/documents/{owned[other]['docs'][n % 6]}/content", headers=h)
        elif kind == "other_chunk":
            r = c.get(f"/v1/chunks/{owned[other]['chunks'][n % 6]}", headers=h)
        else:
            r = c.post(
                "/v1/tools/rag_search/execute?mode=stream", headers=h, json={"inputs": {"query": "team budget travel"}}
            )
        return kind, r.get_data(as_text=True), r.status_code


def test_two_tenants_in_parallel_never_see_each_other(two_tenants: Any) -> None:
    app, owned = two_tenants
    jobs = [(tenant, n) for n in range(70) for tenant in TENANTS]
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda job: (job[0], *_one_request(app, owned, *job)), jobs))
    seen_own = 0
    for tenant, kind, body, status in results:
        other_word = next(w for t, w in TENANTS.items() if t != tenant)
        assert other_word not in body, (tenant, kind, body[:300])
        if kind in ("other_doc", "other_chunk"):
            assert status == 404, (tenant, kind, status)
        else:
            assert status == 200, (tenant, kind, status, body[:300])
            seen_own += TENANTS[tenant] in body
    assert seen_own >= 0.9 * sum(1 for r in results if r[1] not in ("other_doc", "other_chunk"))


def test_threads_of_one_app_keep_their_own_principal(two_tenants: Any) -> None:
    """The principal lives in the request context: a request never answers with another thread's caller."""
    app, _ = two_tenants
    errors: list[str] = []
    barrier = threading.Barrier(8)

    def run(i: int) -> None:
        tenant = list(TENANTS)[i % 2]
        barrier.wait()
        for _ in range(15):
            with app.test_client() as c:
                body = c.post(
                    "/v2/assistants/default/environments/default/message",
                    headers={**SERVICE, "X-End-User-ID": tenant},
                    json={"input": {"text": "team budget"}},
                ).get_json()
            if body.get("user_id") != tenant:
                errors.append(f"{tenant} got {body.get('user_id')}")

    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []


# -- web chat headers -------------------------------------------------------------------------------------


def test_the_web_chat_keeps_its_security_headers_on_every_answer(tmp_path: Path) -> None:
    from assistant_bridge.web.app import create_app
    from assistant_bridge.web.routes_chat import SECURITY_HEADERS

    settings = make_settings(tmp_path, auth={"keys": KEYS})
    client = create_app(settings, make_services(settings)).test_client()
    first = client.get("/chat/static/chat.js")
    answers = {
        "page": client.get("/chat"),
        "page HEAD": client.head("/chat"),
        "asset": first,
        "asset 304": client.get("/chat/static/chat.js", headers={"If-None-Match": first.headers["ETag"]}),
        "stylesheet": client.get("/chat/static/chat.css"),
    }
    assert answers["asset 304"].status_code == 304
    for name, resp in answers.items():
        for header, value in SECURITY_HEADERS.items():
            assert resp.headers.get(header) == value, (name, header)
    csp = SECURITY_HEADERS["Content-Security-Policy"]
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp and "http" not in csp
    assert "frame-ancestors 'none'" in csp and "default-src 'none'" in csp
    assert answers["page"].headers["Cache-Control"] == "no-cache"
