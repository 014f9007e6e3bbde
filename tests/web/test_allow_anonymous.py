"""``auth.allow_anonymous = false`` with no credential configured: every route that needs a principal answers
401, however the app is served (``create_app`` under any WSGI server, not only ``serve``); the routes the
OpenAPI document marks open (health, readiness, the API document, the chat page) stay open."""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.domain import Ownership
from assistant_bridge.validation import validate
from assistant_bridge.web.app import create_app
from assistant_bridge.web.openapi import HTTP_METHODS, build_document
from tests.conftest import KEYS, headers_for, make_services, make_settings

pytestmark = pytest.mark.unit
# bodies that pass validation, so that authentication is what decides
BODIES = {
    "/v1/search": {"query": "x"},
    "/v1/documents": {"title": "t", "text": "x"},
    "/v1/relay/message": {"text": "hi"},
    "/v1/relay/message_stream": {"text": "hi"},
    "/v1/sessions/{session_id}/documents": {"document_id": str(uuid.uuid4())},
}


def _app(tmp_path: Path, name: str, **auth: Any) -> tuple[Any, str]:
    """An app and the id of one document stored in it."""
    s = make_settings(tmp_path / name, auth=auth)
    svc = make_services(s)
    doc = svc.ingestor.ingest_text("Holiday policy text.", title="Holidays", ownership=Ownership(owner_user_id="u"))
    app = create_app(s, svc)
    app.config["TESTING"] = True
    return app, doc.document.id


def _protected() -> list[tuple[str, str]]:
    doc = build_document(None)
    return [
        (method, path)
        for path, item in doc["paths"].items()
        for method in HTTP_METHODS
        if method in item and item[method].get("security") != []
    ]


def _call(app: Any, method: str, path: str, doc_id: str, headers: dict[str, str] | None = None) -> Any:
    url = path.replace("{document_id}", doc_id).replace("{session_id}", str(uuid.uuid4()))
    url = re.sub(r"\{[^}]+\}", "x1", url)
    return app.test_client().open(url, method=method.upper(), json=BODIES.get(path, {}), headers=headers or {})


def test_every_protected_route_refuses_an_anonymous_caller_like_a_secured_app(tmp_path: Path) -> None:
    closed, closed_doc = _app(tmp_path, "closed", allow_anonymous=False)
    secured, secured_doc = _app(tmp_path, "secured", keys=KEYS)
    routes = _protected()
    assert len(routes) > 25
    for method, path in routes:
        got = _call(closed, method, path, closed_doc)
        assert got.status_code == _call(secured, method, path, secured_doc).status_code == 401, (method, path)
        assert validate("error", got.get_json())["error"]["code"] == "unauthorized"


def test_credentials_are_then_refused_too_and_open_routes_stay_open(tmp_path: Path) -> None:
    closed, _ = _app(tmp_path, "closed", allow_anonymous=False)
    c = closed.test_client()
    # no credential is configured, so none can be right
    assert c.post("/v1/search", json={"query": "x"}, headers=headers_for("alice")).status_code == 401
    assert c.get("/v1/tool-executions/x1/stream?api_key=key-alice-0001").status_code == 401
    for path in ("/healthz", "/readyz", "/openapi.json", "/chat"):
        assert c.get(path).status_code == 200, path


def test_with_credentials_configured_allow_anonymous_false_changes_nothing(tmp_path: Path) -> None:
    app, _ = _app(tmp_path, "keys", keys=KEYS, allow_anonymous=False)
    c = app.test_client()
    assert c.post("/v1/search", json={"query": "x"}).status_code == 401
    assert c.post("/v1/search", json={"query": "x"}, headers=headers_for("alice")).status_code == 200


def test_anonymous_use_stays_the_default(tmp_path: Path) -> None:
    app, doc_id = _app(tmp_path, "open")
    c = app.test_client()
    assert c.post("/v1/search", json={"query": "holiday"}).status_code == 200
    assert c.get(f"/v1/documents/{doc_id}").status_code == 200


def test_metrics_refuse_an_anonymous_caller(tmp_path: Path) -> None:
    closed, _ = _app(tmp_path, "closed", allow_anonymous=False)
    assert closed.test_client().get("/metrics").status_code == 401


def test_the_api_document_and_the_chat_page_do_not_offer_anonymous_access(tmp_path: Path) -> None:
    closed, _ = _app(tmp_path, "closed", allow_anonymous=False)
    open_, _ = _app(tmp_path, "open")
    assert {} not in closed.test_client().get("/openapi.json").get_json()["security"]
    assert {} in open_.test_client().get("/openapi.json").get_json()["security"]
    closed_page = closed.test_client().get("/chat").get_data(as_text=True)
    open_page = open_.test_client().get("/chat").get_data(as_text=True)
    # the page asks for a key only where one is needed
    assert '<meta name="ab-auth-required" content="true">' in closed_page
    assert '<meta name="ab-auth-required" content="false">' in open_page
