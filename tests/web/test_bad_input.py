"""Every client mistake is a 4xx with a JSON body, on every route, and changes nothing stored.

The classes of bad input that once reached a handler and ended in a 5xx: nesting deeper than the handlers
and the schema validator can follow, integers beyond Python's digit limit, NaN and Infinity, lone UTF-16
surrogates, NUL characters (in a body, a path or a query string), and chunked bodies over the size limit (tested under gunicorn, which hands them on as such:
``test_serve_operability.py``). Each is sent to every operation of the OpenAPI document (a body to those that take one, the URL forms to all).
"""

from __future__ import annotations

import io
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assistant_bridge.core import strict_json
from assistant_bridge.errors import ValidationFailed
from assistant_bridge.validation import validate
from assistant_bridge.web.openapi import build_document
from tests.conftest import KEYS, make_services, make_settings

pytestmark = pytest.mark.unit
ADMIN = {"X-API-Key": "key-admin-0001"}
HTTP_METHODS = ("get", "post", "put", "patch", "delete")
BAD_BODIES: dict[str, bytes] = {
    "deep nesting": b'{"query": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    "nesting under the recursion limit": b'{"query": "x", "filter": ' + b'{"a": ' * 900 + b"1" + b"}" * 900 + b"}",
    "huge integer": b'{"query": "x", "metadata": {"limit": 1' + b"0" * 5000 + b"}}",
    "NaN": b'{"query": "x", "thresholds": NaN}',
    "Infinity": b'{"query": "x", "metadata": {"limit": -Infinity}}',
    "overflowing float": b'{"query": "x", "metadata": {"limit": 1e999}}',
    "lone surrogate": b'{"query": "\\ud800", "text": "\\udfff", "title": "t", "input": {"text": "\\ud800"}}',
    "surrogate in a key": b'{"\\ud800": 1}',
    "NUL": b'{"query": "a\\u0000b", "text": "a\\u0000b", "title": "t", "input": {"text": "\\u0000"}}',
    "invalid UTF-8": b'{"query": "\xff\xfe"}',
}


@pytest.fixture(scope="module")
def app(tmp_path_factory: Any) -> Any:
    from assistant_bridge.web.app import create_app

    s = make_settings(Path(tmp_path_factory.mktemp("bad-input")), auth={"keys": KEYS})
    app = create_app(s, make_services(s))
    with app.test_client() as c:
        assert c.post("/v1/documents", json={"title": "Keep", "text": "Kept text."}, headers=ADMIN).status_code == 201
    return app


def _operations(*, with_body: bool) -> list[tuple[str, str]]:
    doc = build_document(None)
    return [
        (method, path)
        for path, item in doc["paths"].items()
        for method in HTTP_METHODS
        if method in item and (not with_body or "requestBody" in item[method])
    ]


def _url(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "x1", path.replace("{session_id}", str(uuid.uuid4())))


def _stored(app: Any) -> tuple[Any, ...]:
    svc = app.extensions["services"]
    return tuple(svc.store.list_documents()), svc.backend.count()


def _is_clear_4xx(resp: Any) -> bool:
    if not 400 <= resp.status_code < 500:
        return False
    body = resp.get_json(silent=True)
    if not isinstance(body, dict):
        return False
    error = body.get("error", body)  # the agentic routes carry the Bedrock shape beside it
    return isinstance(error, dict) and isinstance(error.get("message", body.get("message")), str)


@pytest.mark.parametrize("kind", list(BAD_BODIES))
def test_bad_json_bodies_are_a_4xx_on_every_route_that_takes_one(app: Any, kind: str) -> None:
    before = _stored(app)
    with app.test_client() as c:
        for method, path in _operations(with_body=True):
            resp = c.open(
                _url(path), method=method.upper(), data=BAD_BODIES[kind], content_type="application/json", headers=ADMIN
            )
            assert _is_clear_4xx(resp), (kind, method, path, resp.status_code, resp.get_data()[:300])
    assert _stored(app) == before


def test_nul_in_a_url_is_a_400_on_every_route_and_never_reaches_a_backend(app: Any) -> None:
    with app.test_client() as c:
        for method, path in _operations(with_body=False):
            for url in (
                _url(path).replace("x1", "%00") if "x1" in _url(path) else _url(path) + "?q=%00",
                _url(path) + "?limit=%00",
            ):
                resp = c.open(url, method=method.upper(), headers=ADMIN, json={})
                assert resp.status_code == 400, (method, url, resp.status_code)
                text = resp.get_data(as_text=True)
                assert "validation_error" in text and "tenant" not in text and "owner" not in text


def test_upload_fields_are_validated_like_json_ones(app: Any) -> None:
    before = _stored(app)
    with app.test_client() as c:
        for field, value in (
            ("visibility", "everyone"),
            ("session_id", "bad id!"),
            ("external_user_id", "a b"),
            ("colour", "red"),
            ("title", "x" * 2000),
            ("workspaces", ",".join(["w"] * 65)),
        ):
            resp = c.post(
                "/v1/documents",
                data={"file": (io.BytesIO(b"Some text."), "a.txt"), field: value},
                content_type="multipart/form-data",
                headers=ADMIN,
            )
            assert resp.status_code == 400, (field, resp.get_json())
            validate("error", resp.get_json())
    assert _stored(app) == before


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
        max_leaves=30,
    )
)
def test_strict_json_accepts_what_it_should_and_says_why_it_refuses(value: Any) -> None:
    """Any JSON value parses to itself unless it holds one of the refused forms, which is a ValidationFailed
    (never another exception)."""
    import json

    try:
        raw = json.dumps(value)
    except (ValueError, UnicodeEncodeError):
        return
    try:
        assert strict_json.loads(raw) == json.loads(raw) or raw.find("NaN") >= 0
    except ValidationFailed:
        assert (
            any(mark in raw for mark in ("NaN", "Infinity", "\\u0000", "\\ud", "[" * 10, "{" * 10))
            or re.search(r"\d{4301}", raw)
            or raw.count("[") + raw.count("{") > 64
        )
