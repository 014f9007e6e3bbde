"""Metrics, structured logs without user text, request ids, and per-key rate limits."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.logs import JsonFormatter
from tests.conftest import make_services, make_settings

pytestmark = pytest.mark.unit


def test_metrics_count_requests(client: Any) -> None:
    client.post("/v1/search", json={"query": "hello"})
    text = client.get("/metrics").get_data(as_text=True)
    assert 'assistant_bridge_http_requests_total{method="POST",route="/v1/search",status="200"}' in text
    assert "assistant_bridge_http_request_duration_seconds_bucket" in text


def test_metrics_need_admin_when_credentials_exist(secured: Any) -> None:
    from tests.conftest import headers_for

    assert secured.get("/metrics", headers=headers_for("alice")).status_code == 403
    assert secured.get("/metrics", headers=headers_for("admin")).status_code == 200


def test_request_id_is_echoed_and_generated(client: Any) -> None:
    r = client.get("/healthz", headers={"X-Request-ID": "abc123"})
    assert r.headers["X-Request-ID"] == "abc123"
    assert len(client.get("/healthz").headers["X-Request-ID"]) == 32


def test_logs_are_json_and_hold_no_user_text(client: Any, caplog: Any) -> None:
    secret_query = "zanzibar-confidential-merger"
    caplog.set_level(logging.DEBUG)
    client.post("/v1/documents", json={"title": "Board minutes", "text": f"The {secret_query} closes in May."})
    client.post("/v1/search", json={"query": secret_query}, headers={"X-Request-ID": "rid-1"})
    fmt = JsonFormatter()
    lines = [fmt.format(r) for r in caplog.records]
    assert lines, "expected log records"
    for line in lines:
        assert secret_query not in line
        json.loads(line)
    assert any(json.loads(ln)["msg"] == "request" and json.loads(ln)["route"] == "/v1/search" for ln in lines)


def test_rate_limit_per_key(tmp_path: Path) -> None:
    from assistant_bridge.web.app import create_app

    keys = [{"key": "limited-key-01", "user_id": "u", "rate_limit_per_minute": 3}]
    s = make_settings(tmp_path, auth={"keys": keys})
    # two app instances on one data dir stand for two gunicorn workers: the limit is shared
    apps = [create_app(s, make_services(s)) for _ in range(2)]
    codes = []
    for i in range(5):
        with apps[i % 2].test_client() as c:
            r = c.post("/v1/search", json={"query": "x"}, headers={"X-API-Key": "limited-key-01"})
            codes.append(r.status_code)
            if r.status_code == 429:
                assert int(r.headers["Retry-After"]) >= 1
                assert r.get_json()["error"]["code"] == "rate_limited"
    assert codes[:3] == [200, 200, 200] and codes[3:] == [429, 429]
