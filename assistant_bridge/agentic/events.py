"""The events of an agentic retrieval stream (spec §C.3), as frozen dataclasses with their wire shapes.

Every event is one member of the Bedrock union ``AgenticRetrieveStreamResponseOutput``: :attr:`name` is the
member name (also the SSE ``event:`` field) and :meth:`payload` the member's JSON object. ``to_json`` gives
the union form ``{name: payload}``. The shapes are described in ``schemas/agentic_stream_event.schema.json``
and in ``docs/agentic-retrieval.md``.

Invariants: a :class:`TraceEvent`'s ``failures`` and ``warnings`` are omitted when empty (the service model
requires at least one item when they are present); a :class:`ResultEvent` carries ``generatedResponse``
only when an answer was generated; citation ``endIndex`` is exclusive.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Step = Literal["Planning", "Retrieval", "SpeculativeRetrieval", "FullDocumentExpansion"]
Status = Literal["IN_PROGRESS", "SUCCEEDED", "FAILED"]
EXCEPTION_MEMBERS: tuple[str, ...] = (
    "accessDeniedException",
    "badGatewayException",
    "conflictException",
    "dependencyFailedException",
    "internalServerException",
    "resourceNotFoundException",
    "serviceQuotaExceededException",
    "throttlingException",
    "validationException",
)
TRACE_TEXT_CHARS = 500  # retrieved text shown in a trace is cut to this length; results carry it whole


@dataclass(frozen=True)
class RetrieveAction:
    """One search: ``text`` sent to each retriever in ``retrievers``."""

    text: str
    retrievers: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "retrieve": {
                "inputQuery": {"text": self.text},
                "sourceRetrievers": [{"identifier": r} for r in self.retrievers],
            }
        }


@dataclass(frozen=True)
class ExpansionAction:
    """Fetching a whole document found by ``retriever``."""

    document_id: str
    retriever: str

    def to_json(self) -> dict[str, Any]:
        return {
            "fullDocumentExpansion": {"documentId": self.document_id, "sourceRetriever": {"identifier": self.retriever}}
        }


Action = RetrieveAction | ExpansionAction


@dataclass(frozen=True)
class GuardrailWarning:
    """A guardrail evaluation. ``action`` is ``INTERVENED`` when it blocked something."""

    guardrail_id: str
    version: str
    action: Literal["INTERVENED", "NONE"] = "INTERVENED"
    message: str = ""

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"action": self.action, "id": self.guardrail_id, "version": self.version}
        if self.message:
            body["message"] = self.message
        return {"guardrail": body}


@dataclass(frozen=True)
class MessageWarning:
    """A plain warning, for example that the LLM planner failed and the embedded one took over."""

    message: str

    def to_json(self) -> dict[str, Any]:
        return {"message": {"message": self.message}}


Warning_ = GuardrailWarning | MessageWarning


@dataclass(frozen=True)
class ResultItem:
    """One retrieved passage (or one expanded document) as the stream returns it."""

    text: str
    retriever: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    mime_type: str = "text/plain"

    def to_json(self, max_chars: int | None = None) -> dict[str, Any]:
        text = self.text if max_chars is None or len(self.text) <= max_chars else self.text[:max_chars] + "…"
        return {
            "content": {"mimeType": self.mime_type, "text": text},
            "metadata": dict(self.metadata),
            "sourceRetriever": {"identifier": self.retriever},
        }


@dataclass(frozen=True)
class TraceEvent:
    id: str
    timestamp: int  # milliseconds since the Unix epoch
    step: Step
    status: Status
    message: str
    actions: tuple[Action, ...] = ()
    retrievers: tuple[str, ...] = ()  # -> retrievalMetadata
    retrieved: tuple[ResultItem, ...] = ()  # -> retrievalResponse
    failures: tuple[str, ...] = ()
    warnings: tuple[Warning_, ...] = ()

    name = "traceEvent"

    def payload(self) -> dict[str, Any]:
        attrs: dict[str, Any] = {"step": self.step, "status": self.status, "message": self.message}
        if self.actions:
            attrs["actions"] = [a.to_json() for a in self.actions]
        if self.retrievers:
            attrs["retrievalMetadata"] = [
                {"identifier": r, "retrievalType": "BedrockKnowledgeBase"} for r in self.retrievers
            ]
        if self.retrieved:
            attrs["retrievalResponse"] = [r.to_json(TRACE_TEXT_CHARS) for r in self.retrieved]
        if self.failures:
            attrs["failures"] = [{"message": m} for m in self.failures]
        if self.warnings:
            attrs["warnings"] = [w.to_json() for w in self.warnings]
        return {"id": self.id, "timestamp": self.timestamp, "attributes": attrs}

    def to_json(self) -> dict[str, Any]:
        return {self.name: self.payload()}


@dataclass(frozen=True)
class ResponseEvent:
    """A piece of the answer; the pieces of one run concatenate to ``generatedResponse.answer``."""

    text: str

    name = "responseEvent"

    def payload(self) -> dict[str, Any]:
        return {"text": self.text}

    def to_json(self) -> dict[str, Any]:
        return {self.name: self.payload()}


@dataclass(frozen=True)
class CitationSpan:
    """``answer[start:end]`` is supported by ``results[i]`` for each ``i`` in ``result_indexes``."""

    start: int
    end: int  # exclusive
    result_indexes: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "startIndex": self.start,
            "endIndex": self.end,
            "references": [{"resultIndex": i} for i in self.result_indexes],
        }


@dataclass(frozen=True)
class ResultEvent:
    """The final event: deduplicated results of every round and, when generated, the answer.

    ``guardrail_action`` and ``warnings`` are extensions (named as in RetrieveAndGenerate and in trace
    attributes); they are present only when a guardrail intervened or something degraded.
    """

    results: tuple[ResultItem, ...]
    answer: str | None = None
    citations: tuple[CitationSpan, ...] = ()
    guardrail_action: Literal["INTERVENED", "NONE"] | None = None
    warnings: tuple[Warning_, ...] = ()

    name = "result"

    def payload(self) -> dict[str, Any]:
        body: dict[str, Any] = {"results": [r.to_json() for r in self.results]}
        if self.answer is not None:
            body["generatedResponse"] = {"answer": self.answer, "citations": [c.to_json() for c in self.citations]}
        if self.guardrail_action is not None:
            body["guardrailAction"] = self.guardrail_action
        if self.warnings:
            body["warnings"] = [w.to_json() for w in self.warnings]
        return body

    def to_json(self) -> dict[str, Any]:
        return {self.name: self.payload()}


@dataclass(frozen=True)
class ExceptionEvent:
    """A terminal error member such as ``validationException`` or ``dependencyFailedException``.

    ``extra`` carries the member's other fields (``resourceName``, ``reason``).
    """

    member: str
    message: str
    extra: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.member not in EXCEPTION_MEMBERS:
            raise ValueError(f"unknown exception member {self.member!r}")

    @property
    def name(self) -> str:
        return self.member

    def payload(self) -> dict[str, Any]:
        return {"message": self.message, **dict(self.extra)}

    def to_json(self) -> dict[str, Any]:
        return {self.name: self.payload()}


StreamEvent = TraceEvent | ResponseEvent | ResultEvent | ExceptionEvent
