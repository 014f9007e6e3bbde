"""The web chat page: ``GET /chat`` and its assets under ``GET /chat/static/<name>``.

Plain HTML, CSS and JavaScript from ``assistant_bridge/web/static`` (no build step, no CDN, works offline).
The page talks to ``POST /v1/relay/message_stream`` on the same origin. Every response carries a strict
Content-Security-Policy with no remote origin (scripts, styles, fetches and images from ``'self'`` only, no
inline script, no framing), ``X-Frame-Options: DENY``, ``Referrer-Policy: no-referrer`` and ``nosniff``.
The page itself never writes model or document text as HTML (``textContent`` only).
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, abort, send_from_directory

from assistant_bridge.web.app import settings
from assistant_bridge.web.auth import anonymous_allowed

bp = Blueprint("chat", __name__)
STATIC_DIR = Path(__file__).resolve().parent / "static"
ASSETS = {"chat.js": "text/javascript", "chat.css": "text/css", "favicon.svg": "image/svg+xml"}
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
}


def _secure(resp: Response, cache: str) -> Response:
    resp.headers.update(SECURITY_HEADERS)
    resp.headers["Cache-Control"] = cache
    return resp


@bp.get("/chat")
def chat_page() -> Any:
    s = settings()
    page = (STATIC_DIR / "chat.html").read_text(encoding="utf-8")
    page = page.replace("{{API_KEY_HEADER}}", html.escape(s.auth.api_key_header, quote=True))
    page = page.replace("{{AUTH_REQUIRED}}", "false" if anonymous_allowed(s.auth) else "true")
    return _secure(Response(page, mimetype="text/html"), "no-cache")


@bp.get("/chat/static/<name>")
def chat_asset(name: str) -> Any:
    if name not in ASSETS:
        abort(404)
    resp = send_from_directory(STATIC_DIR, name, mimetype=ASSETS[name], max_age=300)
    return _secure(resp, "public, max-age=300")
