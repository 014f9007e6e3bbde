"""POST /v1/search: the custom search server contract (spec §A.1), over the in-memory backend."""

from __future__ import annotations

import json
from typing import Any

import pytest

from assistant_bridge.validation import validate
from tests.conftest import post_document

pytestmark = pytest.mark.unit

DOCS = [
    (
        "Reset your password",
        "To reset your password open the self-service portal and choose Forgot password. A code is sent by SMS.",
    ),
    ("Expense reports", "Submit expense reports within 30 days with receipts attached in the finance tool."),
    ("VPN setup", "Install the VPN client and sign in with your company account before connecting."),
]


def ingest(client: Any, title: str, text: str, **extra: Any) -> dict[str, Any]:
    resp = post_document(client, {"title": title, "text": text, **extra})
    assert resp.status_code in (200, 201), resp.get_json()
    doc: dict[str, Any] = resp.get_json()["document"]
    return doc


@pytest.fixture
def loaded(client: Any) -> Any:
    for title, text in DOCS:
        ingest(client, title, text)
    return client


def test_search_returns_results_in_the_wire_shape(loaded: Any) -> None:
    resp = loaded.post("/v1/search", json={"query": "how do I reset my password"})
    assert resp.status_code == 200
    body = resp.get_json()
    validate("search_response", body)
    top = body["search_results"][0]
    assert top["title"] == "Reset your password"
    assert "self-service portal" in top["body"]
    assert isinstance(top["result_metadata"]["score"], float)
    assert resp.headers["X-Request-ID"]


@pytest.mark.parametrize("mode", ["lexical", "dense", "hybrid"])
def test_each_mode_finds_the_expense_document(loaded: Any, mode: str) -> None:
    resp = loaded.post("/v1/search", json={"query": "expense reports receipts", "metadata": {"mode": mode}})
    assert resp.status_code == 200
    assert resp.get_json()["search_results"][0]["title"] == "Expense reports"


def test_metadata_limit_and_unknown_keys(loaded: Any) -> None:
    resp = loaded.post("/v1/search", json={"query": "company", "metadata": {"limit": 1, "boost": "title"}})
    assert resp.status_code == 200
    assert len(resp.get_json()["search_results"]) == 1


def test_passage_length_gives_highlight(loaded: Any) -> None:
    resp = loaded.post("/v1/search", json={"query": "SMS code", "metadata": {"passage_length": 40, "limit": 1}})
    top = resp.get_json()["search_results"][0]
    assert top["highlight"]["body"] and len(top["highlight"]["body"][0]) <= 40
    assert "SMS" in top["highlight"]["body"][0]


def test_filter_language_restricts_results(loaded: Any) -> None:
    resp = loaded.post("/v1/search", json={"query": "password", "filter": 'title == "VPN setup"'})
    assert resp.status_code == 200
    titles = [r["title"] for r in resp.get_json()["search_results"]]
    assert titles == ["VPN setup"]


@pytest.mark.parametrize(
    "body, status, fragment",
    [
        ({}, 400, "query"),
        ({"query": 3}, 400, "$.query"),
        ({"query": ""}, 400, "$.query"),
        ({"query": "x", "filter": 'colour == "red"'}, 400, "unknown field"),
        ({"query": "x", "filter": 'owner == "bob"'}, 400, "scope field"),
        ({"query": "x", "filter": "title == "}, 400, ""),
        ({"query": "x", "metadata": {"limit": 0}}, 400, "limit"),
        ({"query": "x", "metadata": {"mode": "magic"}}, 400, "mode"),
        ({"query": "x", "metadata": {"collection": "other"}}, 400, "collection"),
        ({"query": "x", "metadata": []}, 400, "metadata"),
    ],
)
def test_bad_requests_get_a_clear_4xx(client: Any, body: Any, status: int, fragment: str) -> None:
    resp = client.post("/v1/search", json=body)
    assert resp.status_code == status
    err = resp.get_json()
    validate("error", err)
    assert fragment in err["error"]["message"]


def test_malformed_json_and_oversized_body(client: Any) -> None:
    resp = client.post("/v1/search", data=b"{not json", content_type="application/json")
    assert resp.status_code == 400 and "JSON" in resp.get_json()["error"]["message"]
    big = json.dumps({"query": "x", "metadata": {"pad": "a" * 200_000}})
    resp = client.post("/v1/search", data=big, content_type="application/json")
    assert resp.status_code == 413


def test_response_never_exceeds_100kb(client: Any) -> None:
    long = "pneumonoultramicroscopicsilicovolcanoconiosis-word " * 900
    for i in range(5):
        ingest(client, f"Long {i}", f"{long} unique{i}")
    resp = client.post("/v1/search", json={"query": "word", "metadata": {"limit": 50}})
    assert resp.status_code == 200
    assert len(resp.data) <= 100_000
    assert int(resp.headers["X-Results-Trimmed"]) >= 1
    validate("search_response", resp.get_json())


def test_backend_failure_is_a_503_without_trace(client: Any, services: Any) -> None:
    from assistant_bridge.errors import BackendUnavailable

    services.warm_up()
    services.backend.fail_next = BackendUnavailable("Milvus search failed")
    resp = client.post("/v1/search", json={"query": "x"})
    assert resp.status_code == 503
    assert resp.get_json()["error"]["code"] == "backend_unavailable"
    assert "Traceback" not in resp.get_data(as_text=True)
