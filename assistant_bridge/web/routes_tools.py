"""Tool execution API (UBIK shape, spec §D.1) and chat-session documents.

::

    GET  /v1/tools                                   the tools (today: rag_search)
    GET  /v1/tools/{tool_id}                         one tool; tool_id is its name or its UUID
    POST /v1/tools/{tool_id}/execute                 {"inputs": {...}, "session_id"?}
    GET  /v1/tool-executions/{execution_id}          status, inputs, outputs, error, timestamps
    GET  /v1/tool-executions/{execution_id}/stream   SSE from the first event (or after Last-Event-ID);
                                                     the API key may be the api_key query parameter
    POST /v1/sessions/{session_id}/documents         {"document_id"}: attach a document to a chat session
    GET  /v1/sessions/{session_id}/documents         the documents attached to it

``execute`` answers in one of three ways:

* synchronously by default: ``200`` with the result;
* streamed when the request has ``Accept: text/event-stream`` (or ``?mode=stream``): SSE events, the last
  one ``tool_end`` (or ``error``); closing the connection cancels the execution;
* asynchronously with ``?mode=async`` or ``Prefer: respond-async``: ``202`` with
  ``{execution_id, status, tool_id, details_url, stream_url}``; the execution runs in the worker that
  accepted it, and any worker serves ``details_url`` and ``stream_url``. This form wins over the others.

Errors in the request (unknown tool, missing query, a ``document_ids`` item that is not a UUID, a bad
filter, a session of someone else) are 4xx JSON errors naming the field, sent before any execution starts.
"""

from __future__ import annotations

import uuid
from typing import Any

from flask import Blueprint, Flask, jsonify, request

from assistant_bridge.core.filters import parse_filter
from assistant_bridge.domain import Principal, Scope
from assistant_bridge.errors import ValidationFailed
from assistant_bridge.services import Services
from assistant_bridge.streaming.framing import MIMETYPE
from assistant_bridge.tools.rag_search import RagSearchInputs
from assistant_bridge.tools.registry import TOOLS, resolve
from assistant_bridge.tools.service import Job, ToolsRuntime, tools_for
from assistant_bridge.validation import load_schema
from assistant_bridge.web.app import credential, json_body, principal, services
from assistant_bridge.web.auth import accepts_query_api_key
from assistant_bridge.web.routes_documents import document_json, document_page
from assistant_bridge.web.sse import sse_response, stream_slot

bp = Blueprint("tools", __name__)
MODES = ("sync", "stream", "async")


def init_app(app: Flask, svc: Services) -> None:
    rt = tools_for(svc)  # reads the [tools] settings now: a bad table stops the app at start-up
    if rt.settings.rag_search.assistant:
        rt.assistant()


def _runtime() -> ToolsRuntime:
    return tools_for(services())


def _mode() -> str:
    mode = request.args.get("mode")
    if mode is not None and mode not in MODES:
        raise ValidationFailed("mode must be sync, stream or async", path="mode")
    prefer = {p.strip().lower() for p in request.headers.get("Prefer", "").replace(";", ",").split(",")}
    if mode == "async" or "respond-async" in prefer:
        return "async"
    if mode is not None:
        return mode
    if any(m == MIMETYPE and q > 0 for m, q in request.accept_mimetypes):
        return "stream"
    return "sync"


def _job(body: dict[str, Any], caller: Principal, rt: ToolsRuntime) -> tuple[Job, dict[str, Any]]:
    inputs = body["inputs"]
    query = inputs["query"].strip()
    if not query:
        raise ValidationFailed("$.inputs.query: must not be blank", path="$.inputs.query")
    session_id = body.get("session_id")
    inner = inputs.get("session_id")
    if session_id and inner and inner != session_id:
        raise ValidationFailed("$.inputs.session_id: differs from $.session_id", path="$.inputs.session_id")
    session_id = session_id or inner
    if session_id:
        rt.sessions.check(session_id, caller, field="$.session_id" if body.get("session_id") else "$.inputs.session_id")
    ids = inputs.get("document_ids") or None
    document_ids = tuple(str(uuid.UUID(i)) for i in ids) if ids else None  # canonical form; format checked
    expr = parse_filter(inputs.get("filter"))
    stored = {
        "query": query,
        "document_ids": list(document_ids) if document_ids else None,
        "filter": inputs.get("filter"),
        "session_id": session_id,
    }
    job = Job(
        RagSearchInputs(query=query, document_ids=document_ids, filter=expr),
        Scope(principal=caller, session_id=session_id),
    )
    return job, stored


def _urls(execution_id: str) -> tuple[str, str]:
    base = f"{request.script_root}/v1/tool-executions/{execution_id}"
    return base, base + "/stream"


@bp.get("/v1/tools")
def list_tools() -> Any:
    principal()
    return jsonify({"tools": [t.to_json() for t in TOOLS.values()], "total": len(TOOLS)})


@bp.get("/v1/tools/<tool_id>")
def get_tool(tool_id: str) -> Any:
    principal()
    spec = resolve(tool_id)
    return jsonify(spec.to_json(load_schema(spec.input_schema)["properties"]["inputs"]))


@bp.post("/v1/tools/<tool_id>/execute")
def execute(tool_id: str) -> Any:
    credential()  # 401 before anything else is revealed
    spec = resolve(tool_id)
    mode = _mode()
    body = json_body(spec.input_schema)
    caller = principal(body.get("external_user_id"))
    rt = _runtime()
    job, stored = _job(body, caller, rt)
    if mode == "async":
        rt.runner.acquire()
        try:
            record = rt.executions.create(spec.id, spec.name, caller, stored, "async")
        except BaseException:
            rt.runner.release()
            raise
        rt.start_async(record, job)
        details, stream = _urls(record.id)
        resp = jsonify(
            {
                "execution_id": record.id,
                "status": "pending",
                "tool_id": spec.id,
                "tool_name": spec.name,
                "details_url": details,
                "stream_url": stream,
            }
        )
        resp.status_code = 202
        resp.headers["Location"] = details
        return resp
    if mode == "stream":
        stream_slot()  # a 503 before an execution is recorded that no stream would run
    record = rt.executions.create(spec.id, spec.name, caller, stored, mode)
    if mode == "stream":
        return sse_response(rt.stream_live(record, job), headers={"X-Execution-ID": record.id})
    return jsonify(rt.run_sync(record, job))


@bp.get("/v1/tool-executions/<execution_id>")
def get_execution(execution_id: str) -> Any:
    return jsonify(_runtime().executions.get_visible(execution_id, principal()).to_json())


@bp.get("/v1/tool-executions/<execution_id>/stream")
@accepts_query_api_key  # for EventSource, which cannot send the header (docs/security-model.md)
def stream_execution(execution_id: str) -> Any:
    rt = _runtime()
    record = rt.executions.get_visible(execution_id, principal())
    raw = request.headers.get("Last-Event-ID") or request.args.get("last_event_id") or "0"
    if not raw.isdigit() or len(raw) > 9:
        raise ValidationFailed("Last-Event-ID must be a non-negative integer", path="Last-Event-ID")
    return sse_response(rt.stream_stored(record, int(raw)), headers={"X-Execution-ID": record.id})


@bp.post("/v1/sessions/<session_id>/documents")
def attach_document(session_id: str) -> Any:
    body = json_body("rag_search_session_attach")
    caller = principal(body.get("external_user_id"))
    rt = _runtime()
    rt.sessions.check(session_id, caller, field="session_id")
    svc = services()
    document_id = str(uuid.UUID(body["document_id"]))
    scope = Scope(principal=caller)
    attached = svc.ingestor.attach_to_session(document_id, session_id, scope)
    return jsonify({"session_id": session_id, "document": document_json(attached)})


@bp.get("/v1/sessions/<session_id>/documents")
def session_documents(session_id: str) -> Any:
    caller = principal()
    _runtime().sessions.check(session_id, caller, field="session_id")
    page = document_page(Scope(principal=caller, session_id=session_id), session_id=session_id)
    return jsonify({"session_id": session_id, **page})
