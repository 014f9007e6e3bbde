"""``POST /agenticRetrieveStream`` (alias ``/v1/agentic-retrieve-stream``): agentic retrieval (spec §C).

The request is the Bedrock ``AgenticRetrieveStream`` body (``schemas/agentic_request.schema.json``); the
response is a ``text/event-stream`` whose event names are the members of ``AgenticRetrieveStreamResponseOutput``
(``traceEvent``, ``responseEvent``, ``result``, or an exception member) and whose data are their JSON payloads
(``schemas/agentic_stream_event.schema.json``). Heartbeat comments keep an idle stream open.

Everything that can be checked before the stream starts is checked then and answered with a JSON error
(``{"error": {...}, "message": ...}`` plus an ``x-amzn-ErrorType`` header such as ``ValidationException``),
naming the field: credentials, the schema, retrievers, filters, the iteration bound, the guardrail and the
planner model. Failures after that arrive in the stream as exception members.

Scope: the credential's principal decides what can be read. ``userContext.userId`` narrows the search to that
end user only for credentials that may act for end users (service or admin keys, like ``X-End-User-ID``); a
user key may repeat its own user id, any other id is refused (403).
"""

from __future__ import annotations

import logging
import queue
import threading
from typing import Any, Callable, Iterator

from flask import Blueprint, Flask, g, jsonify, request

from assistant_bridge.agentic.events import StreamEvent
from assistant_bridge.agentic.request import parse_request
from assistant_bridge.agentic.runtime import runtime_for
from assistant_bridge.domain import Scope
from assistant_bridge.errors import BridgeError, DependencyError, ValidationFailed
from assistant_bridge.services import Services
from assistant_bridge.web.app import json_body, principal, services, settings
from assistant_bridge.web.auth import END_USER_HEADERS, identify
from assistant_bridge.web.sse import HEARTBEAT, comment, frame, json_payload, pump, sse_response

log = logging.getLogger(__name__)
bp = Blueprint("agentic", __name__)
_END = object()
_ERROR_TYPES = {400: "ValidationException", 401: "AccessDeniedException", 403: "AccessDeniedException",
                404: "ResourceNotFoundException", 413: "ValidationException", 415: "ValidationException",
                422: "ValidationException", 429: "ThrottlingException"}  # fmt: skip


def error_type(err: BridgeError) -> str:
    """The Bedrock error type of an error of the tree (``ValidationException``, ...)."""
    if isinstance(err, DependencyError):
        return "DependencyFailedException"
    return _ERROR_TYPES.get(err.status, "InternalServerException")


def init_app(app: Flask, svc: Services) -> None:
    runtime_for(svc)  # parses the agentic, retrievers and guardrails settings now: a bad table stops start-up


@bp.errorhandler(BridgeError)
def _error(err: BridgeError) -> Any:
    body = err.to_json()
    body["message"] = err.message
    resp = jsonify(body)
    resp.status_code = err.status
    resp.headers["x-amzn-ErrorType"] = error_type(err)
    return resp


class _Pump:
    """Runs the agentic loop in a thread and yields SSE frames, with heartbeat comments while it works.

    When the client goes away the loop is stopped at its next event (a search or model call already running
    finishes first). An unexpected error becomes an ``internalServerException`` event; the stream then ends.
    """

    def __init__(self, events: Callable[[], Iterator[StreamEvent]], heartbeat_seconds: float) -> None:
        self._events = events
        self._heartbeat = heartbeat_seconds
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=256)
        self._stop = threading.Event()

    def _put(self, item: Any) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.5)
                return True
            except queue.Full:
                continue
        return False

    def _run(self) -> None:
        events = self._events()
        try:
            for event in events:
                if not self._put(frame(event.name, json_payload(event.payload()))):
                    return
        except BridgeError as exc:
            log.warning("agentic.stream_failed code=%s", exc.code)
            member = error_type(exc)
            self._put(frame(member[0].lower() + member[1:], json_payload({"message": exc.message})))
        except Exception as exc:  # the stream is open: report in-band, never a stack trace
            log.exception("agentic.stream_failed type=%s", type(exc).__name__)
            self._put(frame("internalServerException", json_payload({"message": "internal error; see the server log"})))
        finally:
            close = getattr(events, "close", None)
            if close is not None:
                close()
            self._put(_END)

    def __iter__(self) -> Iterator[bytes]:
        thread = threading.Thread(target=self._run, name="agentic-stream", daemon=True)
        thread.start()
        try:
            for item in pump(self._queue, heartbeat_seconds=self._heartbeat, is_last=lambda i: i is _END):
                if item is HEARTBEAT:
                    yield comment()
                elif item is not _END:
                    yield item
        finally:
            self._stop.set()


@bp.post("/agenticRetrieveStream")
@bp.post("/v1/agentic-retrieve-stream")
def agentic_retrieve_stream() -> Any:
    caller, key = identify(request, settings().auth)  # 401 before anything else is revealed
    body = json_body("agentic_request")
    rt = runtime_for(services())
    req = parse_request(body, known_retrievers=rt.retrievers.keys(), max_iterations_cap=rt.settings.max_iterations,
                        max_results_cap=settings().search.max_limit)  # fmt: skip
    user = req.user_id
    header = next((request.headers[h] for h in END_USER_HEADERS if request.headers.get(h)), None)
    if user is not None and header is not None and header != user:
        raise ValidationFailed("$.userContext.userId: differs from the X-End-User-ID header", path="$.userContext.userId")
    if user is not None and key is not None and not (key.service or key.admin) and user == caller.user_id:
        user = None  # a user key naming itself narrows nothing
    scope = Scope(principal=principal(user))
    run = rt.build_run(req, scope, run_id=str(g.get("request_id", "run"))[:16])
    return sse_response(iter(_Pump(run.events, rt.settings.heartbeat_seconds)))
