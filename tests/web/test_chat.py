"""``/chat`` and its assets: security headers, no remote origin anywhere, no HTML built from strings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from assistant_bridge.web.routes_chat import STATIC_DIR
from tests.conftest import KEYS
from tests.relay.helpers import build_app

pytestmark = pytest.mark.unit
REMOTE = re.compile(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}", re.I)


def test_page_has_the_security_headers(client: object) -> None:
    resp = client.get("/chat")  # type: ignore[attr-defined]
    assert resp.status_code == 200 and resp.mimetype == "text/html"
    csp = resp.headers["Content-Security-Policy"]
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
    assert directives["default-src"] == "'none'" and directives["script-src"] == "'self'"
    assert directives["connect-src"] == "'self'" and directives["frame-ancestors"] == "'none'"
    assert "http" not in csp and "unsafe" not in csp and "*" not in csp
    assert resp.headers["X-Frame-Options"] == "DENY"
    assert resp.headers["Referrer-Policy"] == "no-referrer"
    assert resp.headers["X-Content-Type-Options"] == "nosniff"
    assert resp.headers["Cache-Control"] == "no-cache"


@pytest.mark.parametrize(
    "name, mimetype", [("chat.js", "text/javascript"), ("chat.css", "text/css"), ("favicon.svg", "image/svg+xml")]
)
def test_assets_are_served_with_the_same_headers(client: object, name: str, mimetype: str) -> None:
    resp = client.get(f"/chat/static/{name}")  # type: ignore[attr-defined]
    assert resp.status_code == 200 and resp.mimetype == mimetype
    assert resp.headers["X-Frame-Options"] == "DENY" and "default-src 'none'" in resp.headers["Content-Security-Policy"]


@pytest.mark.parametrize("name", ["chat.html", "../routes_chat.py", "..%2Froutes_chat.py", "missing.js"])
def test_only_the_listed_assets_are_served(client: object, name: str) -> None:
    assert client.get(f"/chat/static/{name}").status_code == 404  # type: ignore[attr-defined]


def test_no_remote_origin_inline_code_or_html_sinks() -> None:
    page = (STATIC_DIR / "chat.html").read_text()
    script = (STATIC_DIR / "chat.js").read_text()
    style = (STATIC_DIR / "chat.css").read_text()
    for text in (page, script, style):
        assert not REMOTE.search(text.replace("http://www.w3.org/2000/svg", "")), "a remote origin"
    assert re.findall(r"<script[^>]*>", page) == ['<script src="/chat/static/chat.js" defer>']
    assert not re.search(r"\son[a-z]+=", page) and "style=" not in page
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
        assert sink not in script, sink
    assert "textContent" in script


def test_the_api_key_header_name_reaches_the_page_escaped(tmp_path: Path) -> None:
    app, _ = build_app(tmp_path, docs=[], auth={"keys": KEYS, "api_key_header": 'X-Key"><script>'})
    page = app.test_client().get("/chat").get_data(as_text=True)
    assert '<meta name="ab-api-key-header" content="X-Key&quot;&gt;&lt;script&gt;">' in page
    assert '<meta name="ab-auth-required" content="true">' in page
