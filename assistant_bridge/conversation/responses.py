"""The ``output`` pieces of a ``/message`` response: generic items, the client search action and the debug
block (spec §A.2, §A.4). Pure functions over the loop's outcomes; no I/O.

* an :class:`~assistant_bridge.core.loop.Answer` becomes a ``conversational_search`` item;
* "I don't know", no results and connectivity problems become ``text`` items with the assistant's messages
  (a connectivity item carries ``errors`` when the search server's answer was unusable);
* with conversational search turned off, results become a ``search`` item;
* ``output.debug.turn_events[0]`` is shaped like watsonx's ``generative_ai_called`` event, plus
  ``query_rewrite`` (original and rewritten query, spec §A.3 "Original Query") and ``hap_filtering`` (the
  HAP verdicts; ``generative_ai.is_hap_detected`` is true when one of them hit).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from assistant_bridge.conversation.assistants import Assistant, SearchConfig
from assistant_bridge.core.loop import Answer, IDontKnow, NoResults, Outcome
from assistant_bridge.core.results import SearchResult

SEARCH_HEADER = "I searched my knowledge base and found this information which might be useful:"
PRIMARY_RESULTS = 3
_SOURCES = {"builtin": "assistant-bridge", "custom_search": "custom_search", "client": "client_search"}


def text_item(text: str, errors: Sequence[Mapping[str, str]] | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"response_type": "text", "text": text}
    if errors:
        item["errors"] = [dict(e) for e in errors]
    return item


def search_action(query: str, config: SearchConfig) -> dict[str, Any]:
    """The ``output.actions[]`` entry that hands a search to the client (spec §A.2). ``name``,
    ``result_variable`` and ``parameters`` are there for the official SDKs, whose action model
    (``DialogNodeAction``) requires the first two and keeps no other field; the results come back as a
    ``search_results`` message, whatever the variable."""
    search: dict[str, Any] = {"query": query}
    if config.filter:
        search["filter"] = config.filter
    if config.metadata:
        search["metadata"] = dict(config.metadata)
    # the fields once at the top (as the assistant toolkit's web chat reads them) and once in "parameters",
    # the only free-form part of the SDKs' action model
    return {
        "type": "search",
        "name": "search",
        "result_variable": "search_results",
        **search,
        "parameters": dict(search),
    }


def result_json(result: SearchResult, index: int, engine: str) -> dict[str, Any]:
    """The conversational ``SearchResults`` variant: ``id`` and ``result_metadata`` always present."""
    meta = dict(result.result_metadata)
    meta.setdefault("document_retrieval_source", _SOURCES.get(engine, engine))
    rid = result.id or meta.get("chunk_id") or meta.get("document_id") or str(index)
    out: dict[str, Any] = {"result_metadata": meta, "id": str(rid), "title": result.title, "body": result.body}
    if result.url is not None:
        out["url"] = result.url
    if result.highlight_body is not None:
        out["highlight"] = {"body": list(result.highlight_body)}
    return out


def answer_item(answer: Answer, assistant: Assistant, response_length: str, engine: str) -> dict[str, Any]:
    cs = assistant.conversational
    return {
        "response_type": cs.response_type,
        "text": answer.text,
        "citations_title": cs.citations_title,
        "citations": [c.to_json() for c in answer.citations],
        "confidence_scores": answer.confidence_scores.to_json(),
        "response_length_option": response_length,
        "search_results": [result_json(r, i, engine) for i, r in enumerate(answer.search_results)],
        "disclaimer": cs.disclaimer,
    }


def search_item(results: Sequence[SearchResult], engine: str) -> dict[str, Any]:
    """What the turn answers when conversational search is turned off (spec §A.3)."""
    rows = [result_json(r, i, engine) for i, r in enumerate(results)]
    return {
        "response_type": "search",
        "header": SEARCH_HEADER,
        "primary_results": rows[:PRIMARY_RESULTS],
        "additional_results": rows[PRIMARY_RESULTS:],
    }


def outcome_item(outcome: Outcome, assistant: Assistant, response_length: str, engine: str) -> dict[str, Any]:
    if isinstance(outcome, Answer):
        return answer_item(outcome, assistant, response_length, engine)
    if isinstance(outcome, IDontKnow):
        return text_item(assistant.messages.idk)
    if isinstance(outcome, NoResults):
        return text_item(assistant.messages.no_result)
    return text_item(assistant.messages.error)  # SearchFailed: nothing could be sent to the generator


@dataclass
class TurnTrace:
    """What happened in one turn, for ``output.debug`` and the log line (which omits the texts)."""

    assistant_id: str
    environment_id: str
    query: str
    engine: str
    index: str = ""
    url: str = ""
    started_at: float = field(default_factory=time.time)
    search_called: bool = False
    result_count: int = 0
    search_ms: float = 0.0
    total_ms: float = 0.0
    outcome: str = ""
    outcome_obj: Outcome | None = None
    errors: list[dict[str, str]] = field(default_factory=list)
    error_code: str = ""  # the error-tree code of a dependency failure ("connectivity" outcome)
    error_stage: str = ""  # where it failed: "search" or "generation"
    generator: str = ""
    generator_kind: str = ""
    rewrite: Any = None  # conversation.rewrite.Rewrite of a text turn
    hap: dict[str, Any] = field(default_factory=dict)  # stage -> safety.hap.HapVerdict


def _conversation_blocks(trace: TurnTrace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if trace.rewrite is not None:
        out["query_rewrite"] = trace.rewrite.to_json()
    if trace.hap:
        out["hap_filtering"] = {stage: v.to_json() for stage, v in trace.hap.items()}
    return out


def hap_detected(trace: TurnTrace) -> bool:
    return any(v.detected for v in trace.hap.values())


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def debug_block(trace: TurnTrace, item: Mapping[str, Any] | None) -> dict[str, Any]:
    """``output.debug``: one ``generative_ai_called`` turn event with scores, thresholds and timings."""
    o = trace.outcome_obj
    scores: Mapping[str, float] = o.scores if o is not None else {}
    timings: Mapping[str, float] = o.timings if o is not None else {}
    thresholds: Mapping[str, float] = getattr(o, "thresholds", {}) or {}
    idk = isinstance(o, IDontKnow)
    generated = getattr(o, "generated_text", None) if idk else getattr(o, "text", None)
    llm_called = "generation" in timings
    stages = {"search": round(trace.search_ms, 3), **{k: round(v, 3) for k, v in timings.items() if k != "total"}}
    if trace.rewrite is not None:
        stages = {"rewrite": round(trace.rewrite.ms, 3), **stages}
    search: dict[str, Any] = {
        "engine": trace.engine,
        "index": trace.index,
        "query": trace.query,
        "response": {"result_count": trace.result_count},
    }
    if trace.url:
        search["request"] = {"method": "POST", "url": trace.url}
    event: dict[str, Any] = {
        "event": "generative_ai_called",
        "source": {
            "type": "conversational_search",
            "assistant_id": trace.assistant_id,
            "environment_id": trace.environment_id,
        },
        "generative_ai_start_time": _iso(trace.started_at),
        "outcome": trace.outcome,
        "generative_ai": {
            "task": "content_grounded_answering",  # GenerativeAITaskContentGroundedAnswering in the SDKs
            "is_idk_response": idk,
            "is_hap_detected": hap_detected(trace),
            "confidence_scores": {
                "pre_gen": scores.get("pre_gen"),
                "pre_gen_threshold": thresholds.get("pre_gen"),
                "post_gen": scores.get("post_gen"),
                "post_gen_threshold": thresholds.get("post_gen"),
                "extractiveness": scores.get("extractiveness"),
            },
            "original_response": generated,
            "inferred_query": trace.query,
        },
        "callout": {
            "search_called": trace.search_called,
            "llm_called": llm_called,
            "search": search,
            "llm": {
                "type": trace.generator_kind,
                "model_id": getattr(o, "model", "") or trace.generator,
                "success": llm_called and trace.outcome != "connectivity",
                "response": {
                    "text": generated,
                    "response_type": (item or {}).get("response_type"),
                    "is_idk_response": idk,
                },
            },
            "idk_reason_code": o.reason if isinstance(o, IDontKnow) else None,
        },
        "metrics": {
            "search_time_ms": round(trace.search_ms, 3),
            "answer_generation_time_ms": round(timings.get("generation", 0.0), 3),
            "total_time_ms": round(trace.total_ms, 3),
            "stage_times_ms": stages,
        },
    }
    event.update(_conversation_blocks(trace))
    if trace.errors:
        event["errors"] = list(trace.errors)
    return {"turn_events": [event]}


def action_debug(trace: TurnTrace, action: Mapping[str, Any]) -> dict[str, Any]:
    """``output.debug`` of a turn that handed the search to the client."""
    return {
        "turn_events": [
            {
                "event": "client_search_requested",
                "outcome": "client_search",
                "source": {
                    "type": "conversational_search",
                    "assistant_id": trace.assistant_id,
                    "environment_id": trace.environment_id,
                },
                "search_action": dict(action),
                "metrics": {"total_time_ms": round(trace.total_ms, 3)},
                **_conversation_blocks(trace),
            }
        ]
    }
