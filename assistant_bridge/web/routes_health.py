"""Liveness (``/healthz``: the process answers) and readiness (``/readyz``: the backend answers)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, current_app, jsonify

from assistant_bridge import metrics
from assistant_bridge.errors import BridgeError, Forbidden
from assistant_bridge.services import Services
from assistant_bridge.web.auth import anonymous_allowed

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz() -> Any:
    return jsonify({"status": "ok"})


@bp.get("/readyz")
def readyz() -> Any:
    svc: Services = current_app.extensions["services"]
    try:
        svc.warm_up()
        ok = svc.backend.ready()
    except BridgeError as exc:
        return jsonify({"ready": False, "reason": exc.message}), 503
    for component in svc.components():  # e.g. a /message model that failed to load at warm-up
        why = getattr(component, "not_ready_reason", None)
        reason = why() if callable(why) else None
        if isinstance(reason, str) and reason:
            return jsonify({"ready": False, "reason": reason}), 503
    body = {"ready": ok, "backend": svc.backend.name, "embedder": svc.embedder.name}
    return jsonify(body), 200 if ok else 503


@bp.get("/metrics")
def prometheus_metrics() -> Any:
    """Prometheus exposition. Open on an unauthenticated (loopback-only) service that allows anonymous
    callers; with credentials configured it needs an admin credential, and with ``auth.allow_anonymous`` off
    and no credentials nobody may read it (401)."""
    from assistant_bridge.web.app import principal, settings

    if not anonymous_allowed(settings().auth) and not principal().admin:
        raise Forbidden("metrics need an admin credential")
    body, ctype = metrics.render()
    return Response(body, content_type=ctype)
