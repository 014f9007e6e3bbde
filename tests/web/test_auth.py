"""Authentication (none, API key, Bearer, Basic) and server-side scoping of every search."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import headers_for

pytestmark = pytest.mark.unit


def _ingest(c: Any, who: str, title: str, text: str, end_user: str | None = None, **extra: Any) -> str:
    resp = c.post("/v1/documents", json={"title": title, "text": text, **extra}, headers=headers_for(who, end_user))
    assert resp.status_code == 201, resp.get_json()
    doc_id: str = resp.get_json()["document"]["id"]
    return doc_id


def _titles(c: Any, who: str, query: str = "secret plan", end_user: str | None = None, **body: Any) -> set[str]:
    resp = c.post(
        "/v1/search", json={"query": query, "metadata": {"limit": 50}, **body}, headers=headers_for(who, end_user)
    )
    assert resp.status_code == 200, resp.get_json()
    return {r["title"] for r in resp.get_json()["search_results"]}


def test_missing_or_wrong_credentials_are_401(secured: Any) -> None:
    assert secured.post("/v1/search", json={"query": "x"}).status_code == 401
    assert secured.post("/v1/search", json={"query": "x"}, headers={"X-API-Key": "nope-nope"}).status_code == 401
    assert secured.post("/v1/search", json={"query": "x"}, headers={"Authorization": "Basic !!"}).status_code == 401
    for who in ("alice", "admin", "service", "carol"):
        assert secured.post("/v1/search", json={"query": "x"}, headers=headers_for(who)).status_code == 200


def test_users_see_only_their_scope(secured: Any) -> None:
    _ingest(secured, "admin", "Public", "secret plan for everyone", visibility="public")
    _ingest(secured, "alice", "Alice private", "secret plan of alice")
    _ingest(secured, "alice", "Sales shared", "secret plan of sales", workspaces=["w-sales"])
    _ingest(secured, "bob", "Bob private", "secret plan of bob")
    _ingest(secured, "service", "Tenant T1", "secret plan of tenant one", end_user="t1")
    _ingest(secured, "service", "Tenant T2", "secret plan of tenant two", end_user="t2")
    assert _titles(secured, "alice") == {"Public", "Alice private", "Sales shared"}
    assert _titles(secured, "bob") == {"Public", "Bob private"}
    assert _titles(secured, "service", end_user="t1") >= {"Tenant T1"}
    assert "Tenant T2" not in _titles(secured, "service", end_user="t1")
    assert "Tenant T1" not in _titles(secured, "service", end_user="t2")
    assert _titles(secured, "admin") >= {"Public", "Alice private", "Bob private", "Tenant T1", "Tenant T2"}
    # a filter string cannot widen the scope
    resp = secured.post("/v1/search", json={"query": "x", "filter": 'tenant == "t2"'}, headers=headers_for("alice"))
    assert resp.status_code == 400
    assert "Bob private" not in _titles(secured, "alice", filter='title == "Bob private" or title != "x"')


def test_documents_of_others_are_404(secured: Any) -> None:
    doc = _ingest(secured, "bob", "Bob private", "secret plan of bob")
    for path in (f"/v1/documents/{doc}", f"/v1/documents/{doc}/content"):
        assert secured.get(path, headers=headers_for("alice")).status_code == 404
        assert secured.get(path, headers=headers_for("bob")).status_code == 200
    assert secured.delete(f"/v1/documents/{doc}", headers=headers_for("alice")).status_code == 404
    assert secured.get(f"/v1/documents/{doc}", headers=headers_for("bob")).status_code == 200


def test_plain_users_cannot_act_for_end_users_or_share_outside(secured: Any) -> None:
    resp = secured.post("/v1/search", json={"query": "x"}, headers=headers_for("alice", "t1"))
    assert resp.status_code == 403
    resp = secured.post(
        "/v1/documents", json={"title": "T", "text": "x", "workspaces": ["w-eng"]}, headers=headers_for("alice")
    )
    assert resp.status_code == 403
    resp = secured.post(
        "/v1/documents", json={"title": "T", "text": "x", "visibility": "public"}, headers=headers_for("alice")
    )
    assert resp.status_code == 403
    resp = secured.post("/v1/search", json={"query": "x"}, headers=headers_for("service", "bad id!"))
    assert resp.status_code == 400


def test_documents_cannot_be_attached_to_another_callers_session(secured: Any) -> None:
    ok = secured.post(
        "/v1/documents", json={"title": "Mine", "text": "x", "session_id": "sess-bob-1"}, headers=headers_for("bob")
    )
    assert ok.status_code == 201
    resp = secured.post(
        "/v1/documents",
        json={"title": "Intruder", "text": "y", "session_id": "sess-bob-1"},
        headers=headers_for("alice"),
    )
    assert resp.status_code == 404
