"""The events of a tool execution stream (spec §D.6), as one small typed record and its constructors.

``event: <type>`` / ``data: <json>``, with these types and data shapes (``schemas/rag_search_events.schema.json``):

* ``tool_update``: ``{"phase", "status", "data"?}``. rag_search phases, in order:
  ``SEARCH_PREPARATION`` started; ``RETRIEVAL`` completed with ``{"retrieved_count"}``; ``RERANKING``
  completed with ``{"initial_count", "reranked_count", "kept_count"}``; ``COMPILING_RESULTS`` started.
* ``tool_partial_update``: ``{"content", "output_key": "response"}``. The contents of one execution
  concatenate to ``tool_end``'s ``response`` exactly (citation tags included).
* ``error``: ``{"message", "code"}``. Last event of a failed execution.
* ``tool_end``: the whole result (the bare rag_search output, spec §D.4). Last event of a successful one.

Invariant: every stream ends with exactly one terminal event (``tool_end`` or ``error``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

TOOL_UPDATE = "tool_update"
TOOL_PARTIAL_UPDATE = "tool_partial_update"
TOOL_END = "tool_end"
ERROR = "error"
TERMINAL = frozenset({TOOL_END, ERROR})
EVENT_TYPES = (TOOL_UPDATE, TOOL_PARTIAL_UPDATE, ERROR, TOOL_END)

SEARCH_PREPARATION = "SEARCH_PREPARATION"
RETRIEVAL = "RETRIEVAL"
RERANKING = "RERANKING"
COMPILING_RESULTS = "COMPILING_RESULTS"
PHASES = (SEARCH_PREPARATION, RETRIEVAL, RERANKING, COMPILING_RESULTS)


@dataclass(frozen=True)
class ToolEvent:
    """One logical event. ``data`` is JSON-serialisable; large ones are split only when sent."""

    type: str
    data: Mapping[str, Any]

    @property
    def terminal(self) -> bool:
        return self.type in TERMINAL


def phase(name: str, status: str, data: Mapping[str, Any] | None = None) -> ToolEvent:
    body: dict[str, Any] = {"phase": name, "status": status}
    if data is not None:
        body["data"] = dict(data)
    return ToolEvent(TOOL_UPDATE, body)


def partial(content: str, output_key: str = "response") -> ToolEvent:
    return ToolEvent(TOOL_PARTIAL_UPDATE, {"content": content, "output_key": output_key})


def error(message: str, code: str) -> ToolEvent:
    return ToolEvent(ERROR, {"message": message, "code": code})


def end(result: Mapping[str, Any]) -> ToolEvent:
    return ToolEvent(TOOL_END, dict(result))
