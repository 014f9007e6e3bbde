"""The OpenAPI 3.1 document of the service: ``GET /openapi.yaml`` and ``GET /openapi.json``.

The document is assembled from ``schemas/openapi.base.yaml`` (paths, operations, parameters, responses) and
the JSON Schemas beside it, so the request and response schemas the routes validate against are the ones
published. :func:`build_document`:

* copies every ``schemas/<name>.schema.json`` into ``components.schemas.<name>`` (without ``$id`` and
  ``$schema``) and rewrites every reference to a schema file (``search_result.schema.json``,
  ``chunk.schema.json#/$defs/document``) and every local one inside a copied schema (``#/$defs/x``) into a
  reference within the document, so that it is self-contained; the ``$defs`` of a copied schema become
  components of their own (:func:`hoist_defs`), which every client generator can follow;
* adds the error responses the routes share (``x-common-errors`` of the base file), the ``X-End-User-ID``
  header to authenticated operations, and the ``X-Request-ID`` header to every response;
* sets the security requirements of the running configuration: API key (in ``auth.api_key_header``),
  Bearer or Basic, and anonymous access only when no credential is configured and ``auth.allow_anonymous``
  is on; the ``GET`` operations that
  answer ``text/event-stream`` also accept the API key as the ``api_key`` query parameter (``ApiKeyQuery``,
  see :func:`assistant_bridge.web.auth.accepts_query_api_key`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from flask import Blueprint, Response, current_app

from assistant_bridge.settings import Settings
from assistant_bridge.validation import SCHEMA_DIR
from assistant_bridge.web.auth import anonymous_allowed

bp = Blueprint("openapi", __name__)
BASE_FILE = "openapi.base.yaml"
EXT_KEY = "openapi"
SUFFIX = ".schema.json"
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_ERROR_DESCRIPTIONS = {
    "400": "the request is invalid (the message names the field)",
    "401": "missing or invalid credentials",
    "403": "the credentials may not do this",
    "404": "unknown id, or one the caller may not see",
    "409": "the document is still being ingested (status processing): cancel its ingestion job or wait",
    "413": "the request body is over the size limit of this route",
    "415": "a file type that cannot be ingested",
    "422": "a supported file type that is corrupt or has no text",
    "429": "rate limit exceeded (see Retry-After)",
    "503": "a dependency (search backend, embedder, LLM endpoint, search server) failed or is unreachable",
    "507": "the data directory is out of space; nothing was written",
}


def _schema_ref(target: str, current: str | None) -> str:
    """The in-document reference for a ``$ref`` found in the base file (``current`` None) or in schema
    ``current``."""
    if target.startswith("#"):
        if current is None:
            return target
        return f"#/components/schemas/{current}{target[1:]}"
    path, _, pointer = target.partition("#")
    if not path.endswith(SUFFIX):
        raise ValueError(f"unsupported $ref {target!r}: only {SUFFIX} files and local pointers")
    name = path[: -len(SUFFIX)]
    return f"#/components/schemas/{name}{pointer}"


def _rewrite(node: Any, current: str | None) -> Any:
    """A deep copy of ``node`` with every ``$ref`` made local to the assembled document."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                out[key] = _schema_ref(value, current)
            elif key in ("$id", "$schema") and current is not None:
                continue
            else:
                out[key] = _rewrite(value, current)
        return out
    if isinstance(node, list):
        return [_rewrite(v, current) for v in node]
    return node


def _error_response(code: str) -> dict[str, Any]:
    return {
        "description": _ERROR_DESCRIPTIONS.get(code, "error"),
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/error"}}},
    }


def _complete_operation(op: dict[str, Any], common: dict[str, list[str]], secured: bool) -> None:
    codes: list[str] = list(op.pop("x-errors", []))
    if secured and op.get("security") != []:
        codes += common.get("auth", [])
        params = op.setdefault("parameters", [])
        params.append({"$ref": "#/components/parameters/EndUser"})
    if "requestBody" in op:
        codes += common.get("body", [])
    if not op.pop("x-no-dependency", False):
        codes += common.get("dependency", [])
    responses = op.setdefault("responses", {})
    for code in codes:
        responses.setdefault(code, _error_response(code))
    for resp in responses.values():
        if "$ref" not in resp:
            resp.setdefault("headers", {}).setdefault("X-Request-ID", {"$ref": "#/components/headers/RequestId"})


def is_event_stream_get(doc: dict[str, Any], method: str, op: dict[str, Any]) -> bool:
    """Whether ``op`` is a ``GET`` whose 200 answer is ``text/event-stream`` (the operations that take the API
    key from the query string too)."""
    if method != "get":
        return False
    ok = op.get("responses", {}).get("200", {})
    ref = ok.get("$ref", "")
    if ref.startswith("#/components/responses/"):
        ok = doc["components"]["responses"][ref.rsplit("/", 1)[1]]
    return "text/event-stream" in ok.get("content", {})


def hoist_defs(doc: dict[str, Any]) -> None:
    """Move every ``$defs`` entry of a component schema to a component of its own (``<schema>__<def>``) and
    point the references at it: some client generators (openapi-python-client) cannot follow a reference
    into another component's ``$defs``, and dropped the operations that use one."""
    schemas: dict[str, Any] = doc["components"]["schemas"]
    moved: dict[str, str] = {}
    pending = [name for name, schema in schemas.items() if isinstance(schema, dict) and "$defs" in schema]
    while pending:
        name = pending.pop()
        for key, sub in schemas[name].pop("$defs").items():
            new = f"{name}__{key}"
            schemas[new] = sub
            moved[f"#/components/schemas/{name}/$defs/{key}"] = f"#/components/schemas/{new}"
            if isinstance(sub, dict) and "$defs" in sub:
                pending.append(new)

    def resolve(ref: str) -> str:
        # a def moved out of a def moved out of a schema takes one rewrite per level
        for old in sorted(moved, key=len, reverse=True):
            if ref == old or ref.startswith(old + "/"):
                return resolve(moved[old] + ref[len(old) :])
        return ref

    def fix(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                node["$ref"] = resolve(node["$ref"])
            for value in node.values():
                fix(value)
        elif isinstance(node, list):
            for value in node:
                fix(value)

    fix(doc)


def build_document(settings: Settings | None = None, schema_dir: Path = SCHEMA_DIR) -> dict[str, Any]:
    """The OpenAPI document for ``settings`` (the security schemes and requirements depend on them)."""
    base = yaml.safe_load((schema_dir / BASE_FILE).read_text(encoding="utf-8"))
    common: dict[str, list[str]] = base.pop("x-common-errors", {})
    doc: dict[str, Any] = _rewrite(base, None)
    schemas = doc.setdefault("components", {}).setdefault("schemas", {})
    for path in sorted(schema_dir.glob("*" + SUFFIX)):
        name = path.name[: -len(SUFFIX)]
        if name in schemas:
            raise ValueError(f"components.schemas.{name} is defined twice")
        schemas[name] = _rewrite(json.loads(path.read_text(encoding="utf-8")), name)
    api_key_header = settings.auth.api_key_header if settings else "X-API-Key"
    anonymous = settings is None or anonymous_allowed(settings.auth)
    doc["components"]["securitySchemes"]["ApiKeyAuth"]["name"] = api_key_header
    credentials: list[dict[str, list[str]]] = [{"ApiKeyAuth": []}, {"BearerAuth": []}, {"BasicAuth": []}]
    doc["security"] = credentials + ([{}] if anonymous else [])
    for item in doc["paths"].values():
        for method in HTTP_METHODS:
            if method in item:
                op = item[method]
                if "security" not in op and is_event_stream_get(doc, method, op):
                    op["security"] = credentials + [{"ApiKeyQuery": []}] + ([{}] if anonymous else [])
                _complete_operation(op, common, secured=True)
    hoist_defs(doc)
    return doc


def route_rules(doc: dict[str, Any]) -> set[tuple[str, str]]:
    """``(METHOD, flask rule)`` of every operation of ``doc`` (``{x}`` written as ``<x>``)."""
    out: set[tuple[str, str]] = set()
    for path, item in doc["paths"].items():
        rule = path.replace("{", "<").replace("}", ">")
        out.update((m.upper(), rule) for m in HTTP_METHODS if m in item)
    return out


def _document_texts() -> tuple[str, str]:
    """The JSON and YAML texts of this app's document, built on first use."""
    from assistant_bridge.web.app import settings

    texts: tuple[str, str] | None = current_app.extensions.get(EXT_KEY)
    if texts is None:
        doc = build_document(settings())
        texts = (
            json.dumps(doc, ensure_ascii=False, indent=1),
            yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=120),
        )
        current_app.extensions[EXT_KEY] = texts
    return texts


@bp.get("/openapi.json")
def openapi_json() -> Response:
    return Response(_document_texts()[0], mimetype="application/json")


@bp.get("/openapi.yaml")
def openapi_yaml() -> Response:
    return Response(_document_texts()[1], mimetype="application/yaml")
