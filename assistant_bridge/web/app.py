"""Flask application factory.

``create_app(settings, services=None)`` builds the app lightly; the heavy components (models, backend
clients) are warmed up once per worker on first use or by gunicorn's ``post_worker_init`` hook.
"""

from __future__ import annotations

import importlib
import io
import logging
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from flask import Flask, Response, current_app, g, request

from assistant_bridge import metrics
from assistant_bridge.aws import sigv4
from assistant_bridge.core import strict_json
from assistant_bridge.domain import Principal, Scope
from assistant_bridge.errors import AuthenticationRequired, PayloadTooLarge, SignatureRejected, ValidationFailed
from assistant_bridge.relay.config import RelayConfig
from assistant_bridge.relay.relay import Relay
from assistant_bridge.services import Services
from assistant_bridge.settings import ApiKey, Settings, load_settings
from assistant_bridge.validation import validate
from assistant_bridge.web.auth import acting_for, anonymous_allowed, identify, presented_credential
from assistant_bridge.web.errors import install_error_handlers
from assistant_bridge.web.ratelimit import LoginThrottle, RateLimiter, ReplayGuard
from assistant_bridge.web.sse import StreamBudget

log = logging.getLogger("assistant_bridge.http")
UPLOAD_ENDPOINTS = frozenset({"documents.create_document"})  # multipart bodies up to ingest.max_upload_bytes

# Each module exposes ``bp`` (a Blueprint) and optionally ``init_app(app, services)``.
ROUTE_MODULES = (
    "assistant_bridge.web.routes_health",
    "assistant_bridge.web.routes_search",
    "assistant_bridge.web.routes_documents",
    "assistant_bridge.web.routes_message",
    "assistant_bridge.web.routes_tools",
    "assistant_bridge.web.routes_chunks",
    "assistant_bridge.web.routes_relay",
    "assistant_bridge.web.routes_chat",
    "assistant_bridge.web.routes_agentic",
    "assistant_bridge.web.routes_bedrock",
    "assistant_bridge.web.openapi",
)


def create_app(settings: Settings | None = None, services: Services | None = None) -> Flask:
    settings = settings or load_settings()
    app = Flask("assistant_bridge")
    app.config["SETTINGS"] = settings
    app.config["MAX_CONTENT_LENGTH"] = max(settings.server.max_request_bytes, settings.ingest.max_upload_bytes)
    app.json.ensure_ascii = False  # type: ignore[attr-defined]
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.extensions["services"] = services or Services.from_settings(settings)
    app.extensions["rate_limiter"] = RateLimiter(app.extensions["services"].store)
    app.extensions["stream_budget"] = StreamBudget(settings.server.max_streams or settings.server.threads - 1)
    app.extensions["replay_guard"] = ReplayGuard(app.extensions["services"].store, sigv4.CLOCK_SKEW_SECONDS)
    app.extensions["login_throttle"] = LoginThrottle(
        app.extensions["services"].store, settings.auth.failed_logins_per_minute
    )
    install_error_handlers(app)
    for name in ROUTE_MODULES:
        module = importlib.import_module(name)
        app.register_blueprint(module.bp)
        init = getattr(module, "init_app", None)
        if init is not None:
            init(app, app.extensions["services"])

    @app.before_request
    def _start() -> None:
        g.request_id = request.headers.get("X-Request-ID") or uuid.uuid4().hex
        g.started = time.perf_counter()
        _refuse_nul(request.path, request.query_string)
        _limit_body(settings)

    @app.after_request
    def _finish(resp: Response) -> Response:
        resp.headers["X-Request-ID"] = g.get("request_id", "")
        resp.headers.setdefault("X-Content-Type-Options", "nosniff")
        resp.headers.setdefault("Referrer-Policy", "no-referrer")
        route = request.url_rule.rule if request.url_rule else "<unmatched>"
        seconds = time.perf_counter() - g.get("started", time.perf_counter())
        metrics.REQUESTS.labels(route=route, method=request.method, status=str(resp.status_code)).inc()
        metrics.LATENCY.labels(route=route).observe(seconds)
        log.info(
            "request",
            extra={
                "method": request.method,
                "route": route,
                "status": resp.status_code,
                "ms": round(seconds * 1000, 1),
            },
        )
        return resp

    return app


def _refuse_nul(path: str, query: bytes) -> None:
    """A NUL in the path or the query string is no id or value of this service (and would reach SQLite and
    backend expressions): 400, like a NUL in a JSON body (:mod:`assistant_bridge.core.strict_json`)."""
    if "\x00" in path or b"%00" in query or b"\x00" in query:
        raise ValidationFailed("the URL holds a NUL character, which is not allowed")


def _limit_body(s: Settings) -> None:
    """Every route refuses a body over ``server.max_request_bytes`` (uploads: ``ingest.max_upload_bytes`` plus
    room for the form fields), whether or not it reads it; a body without Content-Length is cut at the limit."""
    upload = request.mimetype == "multipart/form-data" and request.endpoint in UPLOAD_ENDPOINTS
    limit = s.ingest.max_upload_bytes + 65_536 if upload else s.server.max_request_bytes
    request.max_content_length = limit
    if request.content_length is not None and request.content_length > limit:
        raise PayloadTooLarge(f"request body is over the {limit}-byte limit of this route", limit=limit)
    if request.content_length is None and request.environ.get("wsgi.input_terminated"):
        # a chunked body: werkzeug would stop reading at the limit and hand on what it read, so count it here
        # as it streams in, and give the route the whole of it (or refuse it) like a body with a length
        raw = request.environ["wsgi.input"].read(limit + 1)
        if len(raw) > limit:
            raise PayloadTooLarge(f"request body is over the {limit}-byte limit of this route", limit=limit)
        request.environ["wsgi.input"] = io.BytesIO(raw)
        request.environ["CONTENT_LENGTH"] = str(len(raw))
        request.environ.pop("wsgi.input_terminated", None)
        request.environ.pop("HTTP_TRANSFER_ENCODING", None)  # werkzeug ignores a length beside "chunked"
        for cached in ("stream", "content_length"):  # werkzeug caches both on first access
            request.__dict__.pop(cached, None)


def services() -> Services:
    svc: Services = current_app.extensions["services"]
    svc.warm_up()
    return svc


def settings() -> Settings:
    s: Settings = current_app.config["SETTINGS"]
    return s


def principal(body_end_user: str | None = None) -> Principal:
    if "principal" not in g:
        found, key = credential()
        g.principal = acting_for(request, found, key, body_end_user)
        if key is not None and key.rate_limit_per_minute:
            limiter: RateLimiter = current_app.extensions["rate_limiter"]
            limiter.hit(g.principal.key_id, key.rate_limit_per_minute)
    p: Principal = g.principal
    return p


def credential() -> tuple[Principal, ApiKey | None]:
    """The request's credential and the principal it maps to, before any end user is applied: found once per
    request (a route calls it first, so that a 401 comes before anything else is revealed), with failed logins
    throttled and a SigV4 signature accepted only once."""
    if "credential" not in g:
        with _throttled():  # a replayed signature counts as a failed login too
            found = identify(request, settings().auth)
            _fresh(found[1])
        g.credential = found
    cached: tuple[Principal, ApiKey | None] = g.credential
    return cached


def _fresh(key: ApiKey | None) -> None:
    """A SigV4 signature is good once: the same signed request sent again is refused."""
    if key is None or key.kind != "sigv4":
        return
    guard: ReplayGuard = current_app.extensions["replay_guard"]
    if not guard.first_use(request.headers.get("Authorization", "").rpartition("Signature=")[2]):
        raise SignatureRejected("this signed request was already received: sign each request anew")


@contextmanager
def _throttled() -> Iterator[None]:
    """Refuse a client over ``auth.failed_logins_per_minute`` with 429, and count a failed login."""
    auth = settings().auth
    if anonymous_allowed(auth):
        yield
        return
    throttle: LoginThrottle = current_app.extensions["login_throttle"]
    address, offered = request.remote_addr or "", presented_credential(request, auth)
    throttle.check(address, offered)
    try:
        yield
    except AuthenticationRequired:
        throttle.failed(address, offered)
        raise


def scope(session_id: str | None = None, document_ids: tuple[str, ...] | None = None) -> Scope:
    return Scope(principal=principal(), session_id=session_id, document_ids=document_ids)


def json_body(schema: str, *, max_bytes: int | None = None) -> Any:
    """Parse and validate the JSON body against ``schemas/<schema>.schema.json``."""
    limit = max_bytes or settings().server.max_request_bytes
    if request.content_length is not None and request.content_length > limit:
        raise PayloadTooLarge(f"request body is over the {limit}-byte limit of this route", limit=limit)
    raw = request.get_data(cache=True)
    if len(raw) > limit:
        raise PayloadTooLarge(f"request body is over the {limit}-byte limit of this route", limit=limit)
    if not raw:
        raise ValidationFailed("request body is empty; a JSON object is expected")
    return validate(schema, strict_json.loads(raw))


def relay_from_settings(settings: Settings, *, services: Services | None = None, scope: Scope | None = None) -> Relay:
    """:meth:`Relay.from_settings <assistant_bridge.relay.relay.Relay.from_settings>`, with this service's own
    app built for the in-process target when ``[relay]`` names no ``url`` (the default)."""
    if not RelayConfig.from_settings(settings).in_process:
        return Relay.from_settings(settings, services=services, scope=scope)
    services = services or Services.from_settings(settings)
    return Relay.from_settings(settings, services=services, scope=scope, app=create_app(settings, services))
