"""The tools this service can execute, addressable by name or by a stable UUID (UBIK's ``tool_id`` is "the
unique identifier or name of the tool")."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from assistant_bridge.errors import NotFound

_NAMESPACE = uuid.UUID("0f4b9a4e-6f52-4d0e-b3a4-2f6c0d0b7a51")


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_schema: str  # schemas/<name>.schema.json, validating the whole execute body

    @property
    def id(self) -> str:
        return str(uuid.uuid5(_NAMESPACE, self.name))

    def to_json(self, input_schema: dict[str, Any] | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "name": self.name, "description": self.description}
        if input_schema is not None:
            out["input_schema"] = input_schema
        return out


RAG_SEARCH = ToolSpec(
    name="rag_search",
    description="Answers a question from the documents the caller may read, in Markdown with inline "
    '<citation id="CHUNK_ID">[n]</citation> tags; n is the rank of the cited context.',
    input_schema="rag_search_request",
)
TOOLS: dict[str, ToolSpec] = {RAG_SEARCH.name: RAG_SEARCH}


def resolve(tool_id: str) -> ToolSpec:
    """:raises NotFound: for a name or id that is not a tool of this service."""
    for spec in TOOLS.values():
        if tool_id in (spec.name, spec.id):
            return spec
    raise NotFound(f"unknown tool {tool_id[:64]!r}; available: {', '.join(TOOLS)}", resource="tool")
