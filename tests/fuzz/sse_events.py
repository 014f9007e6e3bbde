"""Checks that the events of a ``text/event-stream`` response match what the OpenAPI document says of them:
each event's name is one the response schema allows, and its JSON data validates against the
``contentSchema`` given for that name."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from assistant_bridge.client.sse import parse_sse

ROOT = "urn:assistant-bridge:openapi"


def _absolute(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            k: (ROOT + v if k == "$ref" and isinstance(v, str) and v.startswith("#") else _absolute(v))
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_absolute(v) for v in node]
    return node


class EventSchemas:
    """The event schemas of one OpenAPI document."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        self.registry = Registry().with_resource(ROOT, Resource.from_contents(doc, default_specification=DRAFT202012))

    def resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node:
            target: Any = self.doc
            for part in node["$ref"].lstrip("#/").split("/"):
                target = target[part.replace("~1", "/").replace("~0", "~")]
            node = target
        return node

    def media_schema(self, path: str, method: str, status: int) -> dict[str, Any] | None:
        op = self.doc["paths"][path][method.lower()]
        response = self.resolve(op["responses"][str(status)])
        media = response.get("content", {}).get("text/event-stream")
        return self.resolve(media["schema"]) if media else None

    def data_schema(self, media_schema: dict[str, Any], event: str) -> dict[str, Any] | None:
        """The ``contentSchema`` of the data of event ``event``, or None when the name is not allowed."""
        branches = media_schema.get("oneOf") or [media_schema]
        for branch in branches:
            props = branch.get("properties", {})
            names = props.get("event", {})
            if names.get("const") == event or event in names.get("enum", []):
                content = props.get("data", {}).get("contentSchema")
                return content if content is not None else media_schema["properties"]["data"]["contentSchema"]
        return None

    def problems(self, media_schema: dict[str, Any], body: bytes | Iterable[bytes]) -> list[str]:
        """What is wrong with the events of ``body`` (empty when every event conforms)."""
        out: list[str] = []
        chunks = [body] if isinstance(body, bytes) else body
        for ev in parse_sse(chunks):
            schema = self.data_schema(media_schema, ev.event)
            if schema is None:
                out.append(f"event {ev.event!r} is not documented")
                continue
            try:
                data = json.loads(ev.data)
            except ValueError:
                out.append(f"event {ev.event!r}: data is not JSON")
                continue
            validator = Draft202012Validator(_absolute(schema), registry=self.registry)
            out.extend(f"event {ev.event!r}: {e.message[:300]}" for e in validator.iter_errors(data))
        return out
