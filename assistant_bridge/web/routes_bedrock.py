"""The Bedrock knowledge-base operations beside agentic retrieval, in the shapes of Amazon Bedrock's
``bedrock-agent-runtime`` service model, so that boto3 scripts work unchanged (``docs/agentic-retrieval.md``)::

    POST /knowledgebases/{kb}/retrieve                                        Retrieve
    POST /knowledgebases/{kb}/datasources/{ds}/documents/{doc}/content        GetDocumentContent
    POST /retrieveAndGenerate                                                 RetrieveAndGenerate
    POST /retrieveAndGenerateStream                                           RetrieveAndGenerateStream

A knowledge base id names a retriever of ``[retrievers]`` (``DEFAULTKB0`` the default one: the service's own
backend). Every search runs in the caller's scope (and the end user's, ``userContext.userId``), exactly as
agentic retrieval does; RetrieveAndGenerate *is* an agentic run with one retriever and generation on. Errors
are the modelled ones: the agentic blueprint's handler answers them with ``x-amzn-ErrorType``.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, jsonify, request

from assistant_bridge.agentic.events import ExceptionEvent, ResponseEvent, ResultEvent, StreamEvent
from assistant_bridge.agentic.request import KNOWLEDGE_BASE_ALIASES
from assistant_bridge.agentic.runtime import runtime_for
from assistant_bridge.aws import eventstream
from assistant_bridge.core.filters import And
from assistant_bridge.core.filters.retrieval_filter import from_retrieval_filter
from assistant_bridge.domain import Scope
from assistant_bridge.errors import BridgeError, FilterSyntaxError, GeneratorError, NotFound, ValidationFailed
from assistant_bridge.ingest.service import document_visible
from assistant_bridge.web.app import credential, json_body, principal, services, settings
from assistant_bridge.web.routes_agentic import bedrock_error, eventstream_response, start_run

bp = Blueprint("bedrock", __name__)
bp.register_error_handler(BridgeError, bedrock_error)
SESSION_HEADER = "x-amzn-bedrock-knowledge-base-session-id"


def _retriever_id(kb: str) -> str:
    known = runtime_for(services()).retrievers
    rid = kb if kb in known else KNOWLEDGE_BASE_ALIASES.get(kb, kb)
    if rid not in known:
        raise NotFound(
            f"knowledge base {kb[:64]!r} not found; configured: DEFAULTKB0 (the default), "
            + ", ".join(sorted(k for k in known if k != "default")),
            resource="knowledgeBase",
        )
    return rid


def _caller_scope(body: dict[str, Any]) -> Scope:
    user = (body.get("userContext") or {}).get("userId")
    return Scope(principal=principal(user))


def _result(hit: Any) -> dict[str, Any]:
    c = hit.chunk
    location: dict[str, Any] = {"type": "CUSTOM", "customDocumentLocation": {"id": c.document_id}}
    if c.url:
        location = {"type": "WEB", "webLocation": {"url": c.url}}
    meta: dict[str, Any] = {
        "x-amz-bedrock-kb-source-uri": c.url or c.document_id,
        "document_id": c.document_id,
        "chunk_id": c.id,
        "title": c.title,
        "language": c.language,
    }
    if c.page_number is not None:
        meta["x-amz-bedrock-kb-document-page-number"] = c.page_number
    return {
        "content": {"type": "TEXT", "text": c.text},
        "location": location,
        "metadata": meta,
        "score": round(float(hit.score), 6),
        "documentId": c.document_id,
    }


@bp.post("/knowledgebases/<knowledgeBaseId>/retrieve")
def retrieve(knowledgeBaseId: str) -> Any:  # noqa: N803 (the service model's name, as in the OpenAPI document)
    kb = knowledgeBaseId
    credential()  # 401 before anything else is revealed
    body = json_body("bedrock_retrieve_request")
    scope = _caller_scope(body)
    rid = _retriever_id(kb)
    if body.get("nextToken"):
        raise ValidationFailed(
            "$.nextToken: pagination is not supported; every result is in one answer", path="$.nextToken"
        )
    conf = body.get("retrievalConfiguration") or {}
    search = conf.get("vectorSearchConfiguration") or conf.get("managedSearchConfiguration") or {}
    retriever = runtime_for(services()).retrievers[rid]
    expr = retriever.filter
    if search.get("filter") is not None:
        try:
            extra = from_retrieval_filter(search["filter"])
        except FilterSyntaxError as exc:
            raise ValidationFailed(
                f"$.retrievalConfiguration.vectorSearchConfiguration.filter: {exc.message}",
                path="$.retrievalConfiguration.vectorSearchConfiguration.filter",
            ) from None
        expr = extra if expr is None else And((expr, extra))
    mode = {"HYBRID": "hybrid", "SEMANTIC": "dense"}.get(search.get("overrideSearchType", ""), retriever.mode)
    limit = min(int(search.get("numberOfResults") or 5), settings().search.max_limit)
    hits = services().search(body["retrievalQuery"].get("text") or "", scope, mode=mode, limit=limit, filter=expr)
    return jsonify({"retrievalResults": [_result(h) for h in hits]})


@bp.post("/knowledgebases/<knowledgeBaseId>/datasources/<dataSourceId>/documents/<documentId>/content")
def get_document_content(knowledgeBaseId: str, dataSourceId: str, documentId: str) -> Any:  # noqa: N803
    """The document's text, as a ``data:`` URL: a "presigned" URL that needs no second request to this
    service nor any credential (the SDKs hand it to an HTTP client or a browser as it is)."""
    credential()
    body = json_body("bedrock_document_content_request") if request.get_data(cache=True).strip() else {}
    scope = _caller_scope(body)
    _retriever_id(knowledgeBaseId)
    doc = services().store.get_document(documentId)
    if doc is None or not document_visible(doc, scope):
        raise NotFound(f"document {documentId[:64]} not found", resource="document")
    raw = doc.text.encode("utf-8")
    url = "data:text/plain;charset=utf-8;base64," + base64.b64encode(raw).decode("ascii")
    return jsonify({"mimeType": "text/plain", "presignedUrl": url, "documentContentLength": len(raw)})


def _agentic_body(body: dict[str, Any]) -> dict[str, Any]:
    """The agentic request that answers a RetrieveAndGenerate request."""
    conf = body["retrieveAndGenerateConfiguration"]
    if conf.get("type") != "KNOWLEDGE_BASE":
        raise ValidationFailed(
            "$.retrieveAndGenerateConfiguration.type: only KNOWLEDGE_BASE sources are served "
            "(EXTERNAL_SOURCES are not)",
            path="$.retrieveAndGenerateConfiguration.type",
        )
    kb = conf.get("knowledgeBaseConfiguration") or {}
    rid = _retriever_id(str(kb.get("knowledgeBaseId") or ""))
    search = (kb.get("retrievalConfiguration") or {}).get("vectorSearchConfiguration") or {}
    overrides = {
        k: v
        for k, v in (("filter", search.get("filter")), ("maxNumberOfResults", search.get("numberOfResults")))
        if v is not None
    }
    out: dict[str, Any] = {
        "messages": [{"role": "user", "content": {"text": body["input"]["text"]}}],
        "retrievers": [{"configuration": {"knowledgeBase": {"knowledgeBaseId": rid, "retrievalOverrides": overrides}}}],
        "generateResponse": True,
    }
    guard = (kb.get("generationConfiguration") or {}).get("guardrailConfiguration")
    if guard:
        out["policyConfiguration"] = {"bedrockGuardrailConfiguration": guard}
    if body.get("userContext"):
        out["userContext"] = body["userContext"]
    return out


def _citations(result: ResultEvent) -> list[dict[str, Any]]:
    answer = result.answer or ""
    refs = [r.to_json() for r in result.results]
    out = []
    for span in result.citations:
        out.append(
            {
                "generatedResponsePart": {
                    "textResponsePart": {
                        "text": answer[span.start : span.end],
                        "span": {"start": span.start, "end": span.end - 1},
                    }
                },
                "retrievedReferences": [
                    {
                        "content": refs[i]["content"] | {"type": "TEXT"},
                        "location": {
                            "type": "CUSTOM",
                            "customDocumentLocation": {"id": str(refs[i]["metadata"].get("document_id", ""))},
                        },
                        "metadata": refs[i]["metadata"],
                    }
                    for i in span.result_indexes
                    if i < len(refs)
                ],
            }
        )
    return out


def _run_events(body: dict[str, Any]) -> tuple[str, Iterator[StreamEvent]]:
    session = body.get("sessionId") or str(uuid.uuid4())
    return session, start_run(_agentic_body(body)).events()


@bp.post("/retrieveAndGenerate")
def retrieve_and_generate() -> Any:
    credential()
    body = json_body("bedrock_rag_request")
    session, events = _run_events(body)
    result: ResultEvent | None = None
    for event in events:
        if isinstance(event, ExceptionEvent):
            raise (
                ValidationFailed(event.message)
                if event.member == "validationException"
                else GeneratorError(event.message)
            )
        if isinstance(event, ResultEvent):
            result = event
    assert result is not None
    out: dict[str, Any] = {
        "output": {"text": result.answer or ""},
        "citations": _citations(result),
        "sessionId": session,
    }
    if result.guardrail_action is not None:
        out["guardrailAction"] = result.guardrail_action
    return jsonify(out)


@bp.post("/retrieveAndGenerateStream")
def retrieve_and_generate_stream() -> Any:
    credential()
    body = json_body("bedrock_rag_request")
    session, events = _run_events(body)

    def frames() -> Iterator[bytes]:
        try:
            for event in events:
                if isinstance(event, ResponseEvent):
                    yield eventstream.event("output", {"text": event.text})
                elif isinstance(event, ResultEvent):
                    for citation in _citations(event):
                        yield eventstream.event("citation", citation)
                    if event.guardrail_action is not None:
                        yield eventstream.event("guardrail", {"action": event.guardrail_action})
                elif isinstance(event, ExceptionEvent):
                    yield eventstream.exception(event.member, event.message, **dict(event.extra))
                    return
        except BridgeError as exc:
            yield eventstream.exception("dependencyFailedException", exc.message)
        finally:
            close = getattr(events, "close", None)
            if close is not None:
                close()

    resp = eventstream_response(frames())
    resp.headers[SESSION_HEADER] = session
    return resp
