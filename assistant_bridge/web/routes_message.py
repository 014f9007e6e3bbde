"""The assistant-compatible ``/message`` API (watsonx Assistant v2 shape; spec §A.2–A.4).

::

    POST   /v2/assistants/{assistant_id}/environments/{environment_id}/message              stateless
    POST   /v2/assistants/{assistant_id}/environments/{environment_id}/message_stream       stateless, SSE
    POST   /v2/assistants/{assistant_id}/environments/{environment_id}/sessions             -> {session_id}
    DELETE /v2/assistants/{assistant_id}/environments/{environment_id}/sessions/{session_id}
    POST   /v2/assistants/{assistant_id}/environments/{environment_id}/sessions/{session_id}/message
    POST   /v2/assistants/{assistant_id}/environments/{environment_id}/sessions/{session_id}/message_stream

The same paths without ``/environments/{environment_id}`` use the assistant's first environment. Every
route accepts the ``version`` query parameter (``YYYY-MM-DD``). Bodies are validated against
``schemas/message_*.schema.json``; unknown assistants, environments and sessions are 404 JSON errors. The
turn itself lives in :mod:`assistant_bridge.conversation.turn`; see ``docs/message-api.md``.

A session turn reads the session's remembered turns (for query rewriting) and records its own; a stateless
turn has no memory. An expired session is a 404 like an unknown one: the client creates a new session, which
starts with an empty memory (``docs/conversation-and-safety.md``).

Every turn that ran is counted in the metrics (route ``message``): its stage durations, its outcome, why it
did not answer, and the outside system that failed, from the turn's trace (:func:`record_turn`).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from flask import Blueprint, Flask, g, jsonify, request

from assistant_bridge import metrics
from assistant_bridge.conversation.assistants import Assistant
from assistant_bridge.conversation.envelope import context_pending, previous_turns, response_body, turn_request
from assistant_bridge.conversation.runtime import ConversationRuntime, runtime_for
from assistant_bridge.conversation.sessions import Session
from assistant_bridge.conversation.turn import Turn, TurnResult
from assistant_bridge.errors import BridgeError, ValidationFailed
from assistant_bridge.services import Services
from assistant_bridge.settings import Settings
from assistant_bridge.streaming.pump import EventPump
from assistant_bridge.web.app import credential, json_body, principal, scope, services, settings
from assistant_bridge.web.sse import sse_response

bp = Blueprint("message", __name__)
ROUTE = "message"  # of the metrics
_ENV = "/v2/assistants/<assistant_id>/environments/<environment_id>"
_NOENV = "/v2/assistants/<assistant_id>"
_VERSION = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def init_app(app: Flask, svc: Services) -> None:
    runtime = runtime_for(svc)  # parses the assistants table now: a bad one stops the app at start-up
    runtime.preload = lambda: not app.config.get("TESTING", False)  # tests load models on first use


def _runtime() -> ConversationRuntime:
    return runtime_for(services())


def _assistant(assistant_id: str, environment_id: str | None) -> tuple[ConversationRuntime, Assistant]:
    credential()  # 401 before anything else is revealed
    version = request.args.get("version")
    if version is not None and not _VERSION.match(version):
        raise ValidationFailed("version must be a date, YYYY-MM-DD", path="version")
    rt = _runtime()
    return rt, rt.assistants.get(assistant_id, environment_id)


def record_turn(result: TurnResult, settings: Settings) -> None:
    """Count a finished turn in the metrics: the time of each stage that ran (``rewrite`` when a rewrite was
    attempted, ``search``, then the loop's stages), its outcome with the IDK reason, the outside system
    whose failure gave the connectivity answer, and a failed LLM rewrite (backend ``rewrite_llm``; the turn
    searched the message as sent)."""
    trace = result.trace
    if trace is None:
        return
    stages: dict[str, float] = {}
    if trace.rewrite is not None and trace.rewrite.method != "none":
        stages["rewrite"] = trace.rewrite.ms
    if trace.rewrite is not None and trace.rewrite.error_code is not None:
        metrics.count_fallback("rewrite", trace.rewrite.error_code)
    if trace.search_called:
        stages["search"] = trace.search_ms
    outcome = trace.outcome_obj
    if outcome is not None:
        stages.update(outcome.timings)
    metrics.observe_stages(ROUTE, stages)
    metrics.count_outcome(ROUTE, result.outcome, getattr(outcome, "reason", None))
    if trace.error_code:
        backend = (
            trace.generator
            if trace.error_stage == "generation" and trace.generator
            else metrics.backend_of(trace.error_code, settings)
        )
        metrics.count_backend_error(backend, trace.error_code)


def _optional_body(schema: str) -> dict[str, Any]:
    if not request.get_data(cache=True).strip():
        return {}
    body: dict[str, Any] = json_body(schema)
    return body


def _message(assistant_id: str, environment_id: str | None, session_id: str | None, stream: bool) -> Any:
    rt, assistant = _assistant(assistant_id, environment_id)
    body = json_body("message_request")
    caller = principal(body.get("external_user_id"))
    session: Session | None = None
    history: tuple[Any, ...] = ()
    if session_id is not None:
        session = rt.sessions.get(session_id, assistant.id, assistant.environment_id, caller.owner_key)
        pending = session.pending
        turns = session.turn_count
        history = tuple(rt.sessions.history(session))
    else:
        pending = context_pending(body.get("context"))
        turns = previous_turns(body.get("context"))
    raw_size = len(request.get_data(cache=True))
    req = dataclasses.replace(turn_request(body, raw_size, rt, assistant, pending), history=history)
    turn = Turn(rt, assistant, req, scope(session_id=session_id))
    user_id = body.get("user_id") or caller.user_id
    context = body.get("context")
    conf = settings()

    def finish(result: TurnResult) -> dict[str, Any]:
        if session is not None:
            rt.sessions.record_turn(session, result.pending, result.memory, assistant.conversational.memory)
        out = response_body(result, user_id=user_id, context=context, turn_count=turns + 1, session_id=session_id)
        record_turn(result, conf)
        return out

    if not stream:
        try:
            result = turn.run()
        except BridgeError:  # a model that failed to load: the turn could not run
            metrics.count_outcome(ROUTE, "error")
            raise
        return jsonify(finish(result))

    response_id = g.get("request_id", "")  # read here: the events are produced in another thread

    def produce() -> Any:
        for name, payload in turn.events():
            if name != "final":
                yield name, payload
                continue
            final = finish(payload)
            # required by the SDKs' FinalResponseOutput (MessageStreamMetadata: {streaming_metadata: {id}});
            # response_id is what IBM's web chat reads
            final["output"]["streaming_metadata"] = {
                "response_id": response_id,
                "streaming_metadata": {"id": len(final["output"]["generic"])},
            }
            yield "final_response", final

    def on_error(exc: BaseException) -> dict[str, Any]:
        metrics.count_outcome(ROUTE, "error")
        if isinstance(exc, BridgeError):
            return {"code": exc.code, "message": exc.message}
        return {"code": "internal_error", "message": "internal error; see the server log"}

    pump = EventPump(produce, rt.settings.heartbeat_seconds, on_error)
    return sse_response(iter(pump))


def _create_session(assistant_id: str, environment_id: str | None) -> Any:
    rt, assistant = _assistant(assistant_id, environment_id)
    body = _optional_body("message_session_create")
    caller = principal(body.get("external_user_id"))
    session = rt.sessions.create(
        assistant.id, assistant.environment_id, caller.owner_key, assistant.session_ttl_seconds
    )
    return jsonify({"session_id": session.id}), 201


def _delete_session(assistant_id: str, environment_id: str | None, session_id: str) -> Any:
    rt, assistant = _assistant(assistant_id, environment_id)
    rt.sessions.delete(session_id, assistant.id, assistant.environment_id, principal().owner_key)
    return jsonify({})


@bp.post(_ENV + "/message")
@bp.post(_NOENV + "/message", defaults={"environment_id": None})
def message(assistant_id: str, environment_id: str | None) -> Any:
    return _message(assistant_id, environment_id, None, stream=False)


@bp.post(_ENV + "/message_stream")
@bp.post(_NOENV + "/message_stream", defaults={"environment_id": None})
def message_stream(assistant_id: str, environment_id: str | None) -> Any:
    return _message(assistant_id, environment_id, None, stream=True)


@bp.post(_ENV + "/sessions")
@bp.post(_NOENV + "/sessions", defaults={"environment_id": None})
def create_session(assistant_id: str, environment_id: str | None) -> Any:
    return _create_session(assistant_id, environment_id)


@bp.delete(_ENV + "/sessions/<session_id>")
@bp.delete(_NOENV + "/sessions/<session_id>", defaults={"environment_id": None})
def delete_session(assistant_id: str, environment_id: str | None, session_id: str) -> Any:
    return _delete_session(assistant_id, environment_id, session_id)


@bp.post(_ENV + "/sessions/<session_id>/message")
@bp.post(_NOENV + "/sessions/<session_id>/message", defaults={"environment_id": None})
def session_message(assistant_id: str, environment_id: str | None, session_id: str) -> Any:
    return _message(assistant_id, environment_id, session_id, stream=False)


@bp.post(_ENV + "/sessions/<session_id>/message_stream")
@bp.post(_NOENV + "/sessions/<session_id>/message_stream", defaults={"environment_id": None})
def session_message_stream(assistant_id: str, environment_id: str | None, session_id: str) -> Any:
    return _message(assistant_id, environment_id, session_id, stream=True)
