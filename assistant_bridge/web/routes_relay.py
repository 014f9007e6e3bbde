"""The client-side search relay for webchat backends and browsers (:mod:`assistant_bridge.relay`).

::

    POST /v1/relay/message          {text, context?, session_id?, user_id?, options?} -> final response + "relay"
    POST /v1/relay/message_stream   the same as server-sent events (see assistant_bridge.relay.events)
    POST /v1/relay/sessions         -> {session_id} on the relayed assistant

A ``session_id`` that the assistant does not know (unknown or expired) is a 404 ``session_not_found`` on both
message routes, so that the caller creates a new session; other failures of the assistant are 502/503.

The target assistant and the search provider come from the ``[relay]`` settings table, checked at start-up.
By default the target is this service's own ``client-side`` assistant, called **in-process** through the
Flask app (an httpx WSGI transport): no socket, no second gunicorn thread waiting on the first, and the
caller's own credentials (``Authorization``, the API-key header, ``X-End-User-ID``) are forwarded, so the
assistant sees the same principal. The built-in search provider searches within the caller's scope: a user
never gets another tenant's documents through the relay.

"I don't know" is recognised from ``output.debug``, so the relay asks the assistant for it
(``relay.request_debug``) and removes it from the answer unless the caller set ``options.debug``.

Metrics (route ``relay``): each relayed turn's outcome, the time of each search it ran (stage ``search``) and
the searches that failed without failing the turn (``relay.on_search_error = "empty"``); an error that ends
the turn counts as outcome ``error`` (and as a backend error where it becomes the answer). The in-process
assistant counts its own turns under route ``message``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import httpx
from flask import Blueprint, Flask, current_app, g, jsonify, request

from assistant_bridge import metrics
from assistant_bridge.errors import BridgeError, DependencyError
from assistant_bridge.relay.config import RelayConfig
from assistant_bridge.relay.errors import SessionNotFound
from assistant_bridge.relay.providers import SearchProvider, ServicesProvider
from assistant_bridge.relay.relay import Relay, RelayResult, provider_from_config
from assistant_bridge.services import Services
from assistant_bridge.settings import Settings
from assistant_bridge.streaming.framing import comment, frame, json_payload
from assistant_bridge.streaming.pump import ThreadPump
from assistant_bridge.web.app import json_body, principal, scope, services, settings
from assistant_bridge.web.auth import END_USER_HEADERS
from assistant_bridge.web.sse import sse_response

log = logging.getLogger(__name__)
bp = Blueprint("relay", __name__)
ROUTE = "relay"
EXT_KEY = "relay"
HEARTBEAT_SECONDS = 10.0


class _RelayHolder:
    """The worker's relay, built on first use (after the gunicorn fork)."""

    def __init__(self, config: RelayConfig) -> None:
        self.config = config
        self._relay: Relay | None = None
        self._lock = threading.Lock()

    def relay(self, app: Flask, svc: Services) -> Relay:
        with self._lock:
            if self._relay is None:
                cfg = self.config
                transport = httpx.WSGITransport(app=app) if cfg.in_process else None
                shared: SearchProvider = (
                    provider_from_config(cfg, None, None)  # type: ignore[arg-type]
                    if cfg.search.type == "server"
                    else _NoProvider()
                )
                self._relay = Relay.from_config(cfg, shared, transport, log_user_text=svc.settings.server.log_user_text)
            return self._relay


class _NoProvider:
    """Placeholder of the shared relay when every request brings its own (scoped) provider."""

    name = "none"

    def search(self, query: str, filter: str | None, metadata: Mapping[str, Any]) -> list[dict[str, Any]]:
        raise AssertionError("a request-scoped provider was expected")


def init_app(app: Flask, svc: Services) -> None:
    app.extensions[EXT_KEY] = _RelayHolder(RelayConfig.from_settings(svc.settings))  # a bad table stops start-up


def _holder() -> _RelayHolder:
    holder: _RelayHolder = current_app.extensions[EXT_KEY]
    return holder


def _relay_for_request() -> tuple[Relay, dict[str, str]]:
    """The relay with this caller's provider, and the headers for the assistant."""
    holder = _holder()
    cfg = holder.config
    svc = services()
    relay = holder.relay(current_app._get_current_object(), svc)  # type: ignore[attr-defined]
    if cfg.search.type == "builtin":
        s = cfg.search
        relay = relay.with_provider(
            ServicesProvider(svc, scope(), mode=s.mode, limit=s.limit, passage_chars=s.passage_length)
        )
    headers: dict[str, str] = {"X-Request-ID": g.get("request_id", "")}
    if cfg.in_process:
        names = ("Authorization", settings().auth.api_key_header, *END_USER_HEADERS)
        headers.update({n: request.headers[n] for n in names if request.headers.get(n)})
    return relay, headers


def _options(body: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    opts = dict(body.get("options") or {})
    keep_debug = bool(opts.pop("debug", False))
    if keep_debug or _holder().config.request_debug:
        opts["debug"] = True
    return opts, keep_debug


def _strip_debug(response: Mapping[str, Any], keep: bool) -> dict[str, Any]:
    out = dict(response)
    if not keep and isinstance(out.get("output"), dict) and "debug" in out["output"]:
        out["output"] = {k: v for k, v in out["output"].items() if k != "debug"}
    return out


def record_turn(summary: Mapping[str, Any], conf: Settings) -> None:
    """Count a relayed turn from its summary (:meth:`RelayResult.summary`, the ``relay_end`` event)."""
    for search in summary.get("searches") or ():
        metrics.observe_stage(ROUTE, "search", float(search.get("ms") or 0.0) / 1000.0)
        code = search.get("error")
        if code:
            metrics.count_backend_error(metrics.backend_of(str(code), conf), str(code))
    metrics.count_outcome(ROUTE, str(summary.get("outcome") or ""))


def _failed(exc: BridgeError, conf: Settings, *, answered_in_band: bool) -> None:
    """Count a turn that an outside system failed (``exc`` is a dependency error; a ``session_not_found`` is
    the caller's and counts nothing), and that system when the failure is answered in the stream (one that
    becomes the HTTP answer is counted by the HTTP layer)."""
    if isinstance(exc, DependencyError):
        metrics.count_outcome(ROUTE, "error")
        if answered_in_band:
            metrics.count_backend_error(metrics.backend_of(exc.code, conf), exc.code)


def _turn_args(body: Mapping[str, Any]) -> dict[str, Any]:
    caller = principal()
    opts, _ = _options(body)
    return {
        "session_id": body.get("session_id"),
        "context": body.get("context"),
        "user_id": body.get("user_id") or caller.user_id,
        "options": opts,
    }


@bp.post("/v1/relay/message")
def relay_message() -> Any:
    body = json_body("relay_message_request")
    args = _turn_args(body)
    _, keep = _options(body)
    relay, headers = _relay_for_request()
    conf = settings()
    try:
        result: RelayResult = relay.send(body["text"], headers=headers, **args)
    except BridgeError as exc:
        _failed(exc, conf, answered_in_band=False)
        raise
    summary = result.summary()
    record_turn(summary, conf)
    out = _strip_debug(result.response, keep)
    out["relay"] = {**summary, "search_results": list(result.search_results)}
    return jsonify(out)


@bp.post("/v1/relay/message_stream")
def relay_message_stream() -> Any:
    """The turn runs in a thread that feeds a queue. The route waits for its first item (at most one heartbeat
    interval, before which nothing would have been sent anyway) so that an unknown or expired session is a 404
    like on ``/v1/relay/message``; any later failure is an in-band ``error`` event."""
    body = json_body("relay_message_request")
    args = _turn_args(body)
    _, keep = _options(body)
    relay, headers = _relay_for_request()
    conf = settings()

    def produce(put: Callable[[Any], bool]) -> None:
        stream = relay.stream(body["text"], headers=headers, **args)
        try:
            for name, payload in stream:
                if name == "final_response":
                    payload = _strip_debug(payload, keep)
                elif name == "relay_end":
                    record_turn(payload, conf)
                if not put((name, payload)):
                    return
        except SessionNotFound as exc:  # a 404 when it comes first, else reported in-band
            put(exc)
        except BridgeError as exc:  # the stream is open: report in-band
            _failed(exc, conf, answered_in_band=True)
            log.warning("relay.stream_failed", extra={"code": exc.code})
            put(("error", {"code": exc.code, "message": exc.message}))
        except Exception as exc:  # noqa: BLE001 - never a trace on the wire; logged with its type
            metrics.count_outcome(ROUTE, "error")
            log.exception("relay.stream_crashed", extra={"type": type(exc).__name__})
            put(("error", {"code": "internal_error", "message": "internal error; see the server log"}))
        finally:
            stream.close()

    events: ThreadPump[Any] = ThreadPump(produce, thread_name="relay-stream", heartbeat_seconds=HEARTBEAT_SECONDS)
    first = events.wait_first(HEARTBEAT_SECONDS)
    if isinstance(first, SessionNotFound):
        events.stop()
        raise first

    def generate() -> Iterator[bytes]:
        for item in events:
            if isinstance(item, BridgeError):
                yield frame("error", json_payload({"error": {"code": item.code, "message": item.message}}))
            elif isinstance(item, tuple):
                name, payload = item
                yield frame(name, json_payload({name: payload}))
            else:
                yield comment()

    resp = sse_response(generate())
    resp.call_on_close(events.stop)  # also when the body is never iterated: the producer must not wait forever
    return resp


@bp.post("/v1/relay/sessions")
def relay_session() -> Any:
    principal()  # 401 before anything else
    relay, headers = _relay_for_request()
    return jsonify({"session_id": relay.client.create_session(headers=headers)}), 201
