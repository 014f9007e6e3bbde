"""Stream event shapes against schemas/agentic_stream_event.schema.json."""

from __future__ import annotations

import pytest

from assistant_bridge.agentic.events import (
    CitationSpan,
    ExceptionEvent,
    ExpansionAction,
    GuardrailWarning,
    MessageWarning,
    ResponseEvent,
    ResultEvent,
    ResultItem,
    RetrieveAction,
    TraceEvent,
)
from assistant_bridge.validation import validate

pytestmark = pytest.mark.unit


def test_trace_event_shape() -> None:
    t = TraceEvent(
        "r-001",
        1_700_000_000_000,
        "Retrieval",
        "SUCCEEDED",
        "ok",
        actions=(RetrieveAction("q", ("kb",)), ExpansionAction("d1", "kb")),
        retrievers=("kb",),
        retrieved=(ResultItem("x" * 600, "kb", {"title": "T"}),),
        warnings=(GuardrailWarning("g", "1", "NONE"), MessageWarning("note")),
    )
    body = validate("agentic_stream_event", t.to_json())["traceEvent"]
    attrs = body["attributes"]
    assert attrs["actions"][0] == {
        "retrieve": {"inputQuery": {"text": "q"}, "sourceRetrievers": [{"identifier": "kb"}]}
    }
    assert attrs["retrievalMetadata"] == [{"identifier": "kb", "retrievalType": "BedrockKnowledgeBase"}]
    assert len(attrs["retrievalResponse"][0]["content"]["text"]) == 501  # cut in traces, whole in results
    assert "failures" not in attrs


def test_minimal_trace_has_no_empty_lists() -> None:
    attrs = TraceEvent("i", 1, "Planning", "IN_PROGRESS", "m").payload()["attributes"]
    assert attrs == {"step": "Planning", "status": "IN_PROGRESS", "message": "m"}


def test_result_and_response_shapes() -> None:
    r = ResultEvent(
        (ResultItem("text", "kb", {"document_id": "d"}),),
        answer="text",
        citations=(CitationSpan(0, 4, (0,)),),
        guardrail_action="NONE",
    )
    body = validate("agentic_stream_event", r.to_json())["result"]
    assert body["results"][0] == {
        "content": {"mimeType": "text/plain", "text": "text"},
        "metadata": {"document_id": "d"},
        "sourceRetriever": {"identifier": "kb"},
    }
    assert body["generatedResponse"]["citations"][0]["endIndex"] == 4
    assert validate("agentic_stream_event", ResponseEvent("abc").to_json()) == {"responseEvent": {"text": "abc"}}
    assert "generatedResponse" not in ResultEvent(()).payload()


def test_exception_members() -> None:
    e = ExceptionEvent("dependencyFailedException", "down", {"resourceName": "kb"})
    assert validate("agentic_stream_event", e.to_json()) == {
        "dependencyFailedException": {"message": "down", "resourceName": "kb"}
    }
    with pytest.raises(ValueError):
        ExceptionEvent("teapotException", "no")
