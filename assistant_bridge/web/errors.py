"""Maps the error tree to HTTP: a JSON body that says what is wrong, never a stack trace.

A :class:`~assistant_bridge.errors.DependencyError` that becomes an HTTP answer here is counted in
``assistant_bridge_backend_errors_total`` unless the layer that raised it counted it already; failures a
route answers in another way (a connectivity message, an error event in a stream) are counted by that route.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, current_app, jsonify
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from assistant_bridge import metrics
from assistant_bridge.errors import AuthenticationRequired, BridgeError, DependencyError, PayloadTooLarge
from assistant_bridge.web.auth import challenge

log = logging.getLogger(__name__)


def error_body(code: str, message: str, details: Any = None) -> dict[str, Any]:
    """``{"error": {code, message, details?}, "errors": [{code, message}]}``: the second form is what the IBM
    Cloud SDKs (``ibm-cloud-sdk-core``) take an exception's message from, so theirs reads as ours does."""
    error: dict[str, Any] = {"code": code, "message": message}
    if details:
        error["details"] = details
    return {"error": error, "errors": [{"code": code, "message": message}]}


def error_response(err: BridgeError) -> tuple[Any, int]:
    resp = jsonify(error_body(err.code, err.message, err.details))
    add_error_headers(resp, err)
    return resp, err.status


def add_error_headers(resp: Any, err: BridgeError) -> None:
    """``Retry-After`` of a 429/503 that knows it, ``WWW-Authenticate`` on a 401."""
    if "retry_after" in err.details:
        resp.headers["Retry-After"] = str(err.details["retry_after"])
    if isinstance(err, AuthenticationRequired) and err.status == 401:
        resp.headers["WWW-Authenticate"] = challenge(current_app.config["SETTINGS"].auth)


def install_error_handlers(app: Flask) -> None:
    @app.errorhandler(BridgeError)
    def _bridge(err: BridgeError) -> tuple[Any, int]:
        if err.status >= 500:
            log.warning("request.dependency_error", extra={"code": err.code})
        if isinstance(err, DependencyError):
            metrics.count_http_error(err, current_app.config["SETTINGS"])
        return error_response(err)

    @app.errorhandler(RequestEntityTooLarge)
    def _too_large(err: RequestEntityTooLarge) -> tuple[Any, int]:
        return error_response(PayloadTooLarge("request body exceeds the size limit for this route"))

    @app.errorhandler(HTTPException)
    def _http(err: HTTPException) -> tuple[Any, int]:
        code = (err.name or "error").lower().replace(" ", "_")
        resp = jsonify(error_body(code, err.description or ""))
        for name, value in err.get_headers():  # e.g. Allow on a 405 (RFC 9110)
            if name.lower() != "content-type":
                resp.headers[name] = value
        return resp, err.code or 500

    @app.errorhandler(Exception)
    def _unexpected(err: Exception) -> tuple[Any, int]:
        log.exception("request.unhandled", extra={"type": type(err).__name__})
        return jsonify(error_body("internal_error", "internal error; see the server log")), 500
