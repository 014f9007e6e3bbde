"""The API key as the ``api_key`` query parameter, for browsers' ``EventSource``: accepted only by the GET
routes that answer ``text/event-stream``, compared like the header, and never written to a log line."""

from __future__ import annotations

import io
import json
import logging
import sys
from pathlib import Path
from typing import Any

import pytest
from flask import request
from gunicorn.config import Config

from assistant_bridge.logs import JsonFormatter, RedactQuerySecrets, configure, redact
from assistant_bridge.web.auth import query_api_key_allowed
from assistant_bridge.web.server import BridgeApplication, RedactingLogger
from tests.conftest import KEYS, headers_for, make_settings
from tests.tools.helpers import events_of, execute, ingest, make_app, wait_status

pytestmark = pytest.mark.unit
ALICE_KEY = "key-alice-0001"
BEARER_KEY = "key-service-01"


@pytest.fixture
def app(tmp_path: Path) -> Any:
    return make_app(tmp_path, keys=KEYS)


@pytest.fixture
def stream_url(app: Any) -> str:
    """The stream of a finished asynchronous rag_search execution of alice's."""
    with app.test_client() as c:
        ingest(c, "Remote work", "Employees may work remotely two days a week.", headers_for("alice"))
        accepted = execute(c, {"query": "remote work"}, headers_for("alice"), mode="async").get_json()
        assert wait_status(c, accepted["execution_id"], headers_for("alice"))["status"] == "completed"
    url: str = accepted["stream_url"]
    return url


def test_the_key_in_the_query_opens_an_event_stream(app: Any, stream_url: str) -> None:
    c = app.test_client()
    by_header = events_of(c.get(stream_url, headers=headers_for("alice")))
    resp = c.get(f"{stream_url}?api_key={ALICE_KEY}")
    assert resp.status_code == 200 and resp.mimetype == "text/event-stream"
    assert events_of(resp) == by_header and by_header[-1][0] == "tool_end"
    resumed = c.get(f"{stream_url}?last_event_id=3&api_key={ALICE_KEY}")
    assert events_of(resumed) == by_header[3:]
    # the key is alice's: another caller's key still sees a 404, as with the header
    bob = c.get(f"{stream_url}?api_key=key-bob-000001")
    assert bob.status_code == 404


def test_a_wrong_or_non_api_key_credential_in_the_query_is_401(app: Any, stream_url: str) -> None:
    c = app.test_client()
    for value in ("wrong-key-0001", ALICE_KEY[:-1], ALICE_KEY + "x", "", BEARER_KEY, "carol:key-basic-0001"):
        resp = c.get(stream_url, query_string={"api_key": value})
        assert resp.status_code == 401, value
        assert resp.get_json()["error"]["code"] == "unauthorized"
    # the header wins when both are sent: a wrong header is not rescued by a right query key
    resp = c.get(f"{stream_url}?api_key={ALICE_KEY}", headers={"X-API-Key": "wrong-key-0001"})
    assert resp.status_code == 401
    # ... and so does an Authorization header: a query key does not stand in for a wrong Bearer token
    resp = c.get(f"{stream_url}?api_key={ALICE_KEY}", headers={"Authorization": "Bearer wrong-token-01"})
    assert resp.status_code == 401
    resp = c.get(f"{stream_url}?api_key=key-bob-000001", headers=headers_for("alice"))  # header: alice's
    assert resp.status_code == 200


def test_json_routes_and_other_methods_ignore_the_query_key(app: Any, stream_url: str) -> None:
    c = app.test_client()
    details_url = stream_url.removesuffix("/stream")
    assert c.get(details_url, headers=headers_for("alice")).status_code == 200
    for url in (details_url, "/v1/tools", "/v1/documents", "/metrics"):
        resp = c.get(url, query_string={"api_key": ALICE_KEY})
        assert resp.status_code == 401, url
        assert resp.mimetype == "application/json"
    resp = c.post("/v1/search", query_string={"api_key": ALICE_KEY}, json={"query": "remote"})
    assert resp.status_code == 401
    resp = c.post(
        "/v1/tools/rag_search/execute",
        query_string={"api_key": ALICE_KEY, "mode": "stream"},
        json={"inputs": {"query": "remote"}},
        headers={"Accept": "text/event-stream"},
    )
    assert resp.status_code == 401
    assert c.head(f"{stream_url}?api_key={ALICE_KEY}").status_code == 401
    with app.test_request_context(f"{stream_url}?api_key={ALICE_KEY}"):
        assert query_api_key_allowed(request)
    with app.test_request_context(f"{details_url}?api_key={ALICE_KEY}"):
        assert not query_api_key_allowed(request)


def test_only_event_stream_get_routes_take_the_query_key(app: Any) -> None:
    """Every GET route whose documented 200 answer is an event stream is marked, and no other route."""
    from assistant_bridge.web.openapi import is_event_stream_get

    doc = app.test_client().get("/openapi.json").get_json()
    documented = {
        path.replace("{", "<").replace("}", ">")
        for path, item in doc["paths"].items()
        for method, op in item.items()
        if method != "parameters" and is_event_stream_get(doc, method, op)
    }
    marked = {
        rule.rule
        for rule in app.url_map.iter_rules()
        if getattr(app.view_functions[rule.endpoint], "accepts_query_api_key", False)
    }
    assert marked == documented == {"/v1/tool-executions/<execution_id>/stream"}
    op = doc["paths"]["/v1/tool-executions/{execution_id}/stream"]["get"]
    assert {"ApiKeyQuery": []} in op["security"] and {} not in op["security"]
    assert doc["components"]["securitySchemes"]["ApiKeyQuery"]["in"] == "query"
    assert all(
        "ApiKeyQuery" not in json.dumps(o.get("security", []))
        for p, item in doc["paths"].items()
        for m, o in item.items()
        if m != "parameters" and not p.endswith("/stream")
    )


def test_the_key_is_not_in_the_logs(app: Any, stream_url: str, caplog: Any) -> None:
    caplog.set_level(logging.DEBUG)
    c = app.test_client()
    assert c.get(f"{stream_url}?api_key={ALICE_KEY}").status_code == 200
    assert c.get(f"{stream_url}?api_key=wrong-key-0001").status_code == 401
    assert c.get(f"{stream_url.removesuffix('/stream')}?api_key={ALICE_KEY}").status_code == 401
    lines = [JsonFormatter().format(r) for r in caplog.records]
    assert any('"route": "/v1/tool-executions/<execution_id>/stream"' in ln for ln in lines)
    assert not [ln for ln in lines if ALICE_KEY in ln or "wrong-key-0001" in ln]


@pytest.mark.parametrize(
    "line",
    [
        "Error handling request GET /v1/tool-executions/x/stream?api_key={key}",
        "GET /v1/tool-executions/x/stream?last_event_id=3&api_key={key}&x=1 HTTP/1.1",
        "url=http://h/s?API_KEY={key}#frag",
        "/s?api%5Fkey={key}",
        '"GET /s?api_key={key}" 401',
    ],
)
def test_redact_removes_keys_from_urls(line: str) -> None:
    text = line.format(key=ALICE_KEY)
    clean = redact(text)
    assert ALICE_KEY not in clean and "[redacted]" in clean
    assert clean.replace("[redacted]", ALICE_KEY) == text  # nothing else changes


def test_the_service_log_handler_redacts_messages_and_tracebacks(monkeypatch: Any) -> None:
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    try:
        configure("info", "json")
        log = logging.getLogger("werkzeug")
        log.info('127.0.0.1 - - "GET %s HTTP/1.1" 200 -', f"/v1/tool-executions/x/stream?api_key={ALICE_KEY}")
        try:
            raise ValueError(f"bad url /s?api_key={ALICE_KEY}")
        except ValueError:
            log.exception("request failed")
    finally:
        root.handlers[:], level = saved
        root.setLevel(level)
    out = stream.getvalue()
    assert out.count("[redacted]") >= 2 and "request failed" in out
    assert ALICE_KEY not in out
    assert all(json.loads(line) for line in out.splitlines())


def test_gunicorn_logs_the_failed_request_uri_without_the_key(tmp_path: Path, monkeypatch: Any) -> None:
    app = BridgeApplication(make_settings(tmp_path, auth={"keys": KEYS}))
    assert app.cfg.logger_class is RedactingLogger
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    cfg = Config()
    cfg.set("errorlog", "-")
    logger = RedactingLogger(cfg)
    try:
        raise RuntimeError("boom")
    except RuntimeError:  # what gunicorn's worker logs when the app fails
        logger.exception("Error handling request %s %s", "GET", f"/v1/tool-executions/x/stream?api_key={ALICE_KEY}")
    logger.setup(cfg)  # a configuration reload sets the handlers up again
    logger.error("again %s", f"/s?api_key={ALICE_KEY}")
    out = stream.getvalue()
    assert "Error handling request GET /v1/tool-executions/x/stream?api_key=[redacted]" in out
    assert "again /s?api_key=[redacted]" in out and ALICE_KEY not in out
    assert [type(f) for f in logger.error_log.filters] == [RedactQuerySecrets]  # once, after the reload too
