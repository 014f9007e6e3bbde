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

Metrics (route ``agentic``) are read off the stream as it passes (:func:`observed`): the time from each
step's ``IN_PROGRESS`` trace to its end (``planning``, ``speculative_retrieval``, ``retrieval``,
``document_expansion``), ``generation`` from the last trace to the result and the outcome of the run; and
from the run's stats the searches and document reads an outside system failed, the generator's error code
and the rounds the planner model failed (backend ``planner_llm``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Flask, Response, g, jsonify, request

from assistant_bridge import metrics
from assistant_bridge.agentic.events import ExceptionEvent, ResultEvent, StreamEvent, TraceEvent
from assistant_bridge.agentic.loop import AgenticRun
from assistant_bridge.agentic.request import parse_request
from assistant_bridge.agentic.runtime import runtime_for
from assistant_bridge.aws import eventstream, sigv4
from assistant_bridge.domain import Scope
from assistant_bridge.errors import BridgeError, DependencyError, ServiceBusy, ValidationFailed
from assistant_bridge.services import Services
from assistant_bridge.settings import Settings
from assistant_bridge.streaming.framing import frame, json_payload
from assistant_bridge.streaming.pump import EventPump
from assistant_bridge.web.app import credential, json_body, principal, services, settings
from assistant_bridge.web.auth import END_USER_HEADERS
from assistant_bridge.web.errors import add_error_headers
from assistant_bridge.web.sse import sse_response, streaming_response

log = logging.getLogger(__name__)
bp = Blueprint("agentic", __name__)
_ERROR_TYPES = {
    400: "ValidationException",
    401: "AccessDeniedException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    413: "ValidationException",
    415: "ValidationException",
    422: "ValidationException",
    429: "ThrottlingException",
}
ROUTE = "agentic"
_STAGES = {
    "Planning": "planning",
    "SpeculativeRetrieval": "speculative_retrieval",
    "Retrieval": "retrieval",
    "FullDocumentExpansion": "document_expansion",
}


def error_type(err: BridgeError) -> str:
    """The Bedrock error type of an error of the tree (``ValidationException``, ...)."""
    if isinstance(err, DependencyError):
        return "DependencyFailedException"
    if isinstance(err, ServiceBusy):
        return "ThrottlingException"  # the AWS SDKs retry it
    return _ERROR_TYPES.get(err.status, "InternalServerException")


def init_app(app: Flask, svc: Services) -> None:
    runtime_for(svc)  # parses the agentic, retrievers and guardrails settings now: a bad table stops start-up


@bp.errorhandler(BridgeError)
def bedrock_error(err: BridgeError) -> Any:
    """A modelled Bedrock error: the status, ``x-amzn-ErrorType`` and a body whose ``message`` the AWS SDKs
    read (beside this service's own error body)."""
    if isinstance(err, DependencyError):
        metrics.count_http_error(err, settings())
    body = err.to_json()
    body["message"] = err.message
    resp = jsonify(body)
    resp.status_code = err.status
    resp.headers["x-amzn-ErrorType"] = error_type(err)
    add_error_headers(resp, err)
    return resp


class _Pump(EventPump):
    """Runs the agentic loop in a thread and yields SSE frames, with heartbeat comments while it works.

    When the client goes away the loop is stopped at its next event (a search or model call already running
    finishes first). An error of the tree becomes its exception member (``dependencyFailedException``, ...),
    any other an ``internalServerException`` event; the stream then ends.
    """

    thread_name = "agentic-stream"

    def encode(self, event: StreamEvent) -> bytes:
        return frame(event.name, json_payload(event.payload()))

    def error_frame(self, exc: Exception) -> bytes:
        if isinstance(exc, BridgeError):
            log.warning("agentic.stream_failed", extra={"code": exc.code})
            member = error_type(exc)
            return frame(member[0].lower() + member[1:], json_payload({"message": exc.message}))
        log.exception("agentic.stream_failed", extra={"type": type(exc).__name__})
        return frame("internalServerException", json_payload({"message": "internal error; see the server log"}))


class _AwsPump(_Pump):
    """The same stream in the AWS event-stream framing, for the AWS SDKs (boto3's
    ``agentic_retrieve_stream``): one message per event, the modelled errors as exception messages, and no
    heartbeat (the framing has no comments; the loop's own events are frequent)."""

    def heartbeat(self) -> bytes:
        return b""

    def encode(self, event: StreamEvent) -> bytes:
        payload = event.payload()
        if isinstance(event, ResultEvent):
            # the SSE extensions the service model has no room for; a guardrail's verdict and every warning
            # are in the trace events' warnings, where the model has them
            payload = {k: v for k, v in payload.items() if k not in ("guardrailAction", "warnings")}
        return eventstream.event(event.name, payload)

    def error_frame(self, exc: Exception) -> bytes:
        if isinstance(exc, BridgeError):
            log.warning("agentic.stream_failed", extra={"code": exc.code})
            member = error_type(exc)
            return eventstream.exception(member[0].lower() + member[1:], exc.message)
        log.exception("agentic.stream_failed", extra={"type": type(exc).__name__})
        return eventstream.exception("internalServerException", "internal error; see the server log")


def wants_eventstream() -> bool:
    """Whether the caller is an AWS SDK: its request is signed with SigV4, or it asks for the event-stream
    content type. Anyone else gets SSE."""
    return sigv4.is_signed(request.headers.get("Authorization", "")) or eventstream.MIMETYPE in request.headers.get(
        "Accept", ""
    )


def eventstream_response(body: Iterator[bytes]) -> Response:
    """An AWS event-stream response, in one of the worker's stream slots like every stream."""
    resp = streaming_response(body, eventstream.MIMETYPE)
    resp.headers["x-amzn-RequestId"] = str(g.get("request_id", ""))
    return resp


def observed(run: AgenticRun, settings: Settings) -> Iterator[StreamEvent]:
    """``run.events()`` unchanged, recording the run's metrics on the way: step durations, the outcome
    (``answer``; ``idk`` when the result says the decline text, with reason ``no_results`` when nothing was
    found; ``blocked`` by a guardrail; ``error`` for an exception member or a crash; nothing when the client
    left first), and from the run's stats, when it ends, each search or document read an outside system
    failed, the generator's failure, and each round the planner model failed and the embedded planner
    planned."""
    started: dict[str, float] = {}
    last = time.perf_counter()
    outcome: str | None = None
    reason: str | None = None
    events = run.events()
    try:
        for event in events:
            now = time.perf_counter()
            if isinstance(event, TraceEvent):
                stage = _STAGES.get(event.step, "other")
                if event.status == "IN_PROGRESS":
                    started[stage] = now
                elif stage in started:
                    metrics.observe_stage(ROUTE, stage, now - started.pop(stage))
                last = now
            elif isinstance(event, ResultEvent):
                if event.guardrail_action == "INTERVENED":
                    outcome = "blocked"
                elif not event.results:
                    outcome = "no_results"
                elif event.answer == run.options.no_results_text:  # declined, or nothing fit the context
                    outcome, reason = "idk", "other"
                else:
                    outcome = "answer"
                if event.answer is not None and outcome == "answer":
                    metrics.observe_stage(ROUTE, "generation", now - last)
            elif isinstance(event, ExceptionEvent):
                outcome = "error"
            yield event
    except Exception as exc:
        outcome = "error"
        if isinstance(exc, DependencyError):
            metrics.count_backend_error(metrics.backend_of(exc.code, settings), exc.code)
        raise
    finally:
        close = getattr(events, "close", None)
        if close is not None:
            close()
        stats = run.stats
        for code in stats.dependency_failures:
            metrics.count_backend_error(metrics.backend_of(code, settings), code)
        if stats.generator_error is not None:
            backend = metrics.backend_of("generator_error", settings, getattr(run.generator, "name", None))
            metrics.count_backend_error(backend, stats.generator_error)
        for code in stats.planner_fallbacks:
            metrics.count_fallback("planner", code)
        if outcome is not None:
            metrics.count_outcome(ROUTE, outcome, reason)


@bp.post("/agenticRetrieveStream")
@bp.post("/v1/agentic-retrieve-stream")
def agentic_retrieve_stream() -> Any:
    credential()  # 401 before anything else is revealed
    run = start_run(json_body("agentic_request"))
    conf = settings()
    heartbeat = runtime_for(services()).settings.heartbeat_seconds
    if wants_eventstream():
        return eventstream_response(iter(_AwsPump(lambda: observed(run, conf), heartbeat)))
    return sse_response(iter(_Pump(lambda: observed(run, conf), heartbeat)))


def start_run(body: dict[str, Any]) -> AgenticRun:
    """The run of a schema-valid agentic request, for the caller (and the end user it names).

    :raises ValidationFailed: for a request the service cannot serve, naming its JSON path.
    """
    caller, key = credential()
    rt = runtime_for(services())
    req = parse_request(
        body,
        known_retrievers=rt.retrievers.keys(),
        max_iterations_cap=rt.settings.max_iterations,
        max_results_cap=settings().search.max_limit,
    )
    user = req.user_id
    header = next((request.headers[h] for h in END_USER_HEADERS if request.headers.get(h)), None)
    if user is not None and header is not None and header != user:
        raise ValidationFailed(
            "$.userContext.userId: differs from the X-End-User-ID header", path="$.userContext.userId"
        )
    if user is not None and key is not None and not (key.service or key.admin) and user == caller.user_id:
        user = None  # a user key naming itself narrows nothing
    scope = Scope(principal=principal(user))
    return rt.build_run(req, scope, run_id=str(g.get("request_id", "run"))[:16])
