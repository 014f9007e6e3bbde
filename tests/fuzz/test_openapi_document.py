"""The OpenAPI document: it covers every Flask route, is a valid OpenAPI 3.1 document, follows the security
settings, publishes the same JSON Schemas the routes validate against, and describes the events the
streaming routes really send."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from openapi_spec_validator import validate as validate_spec

from assistant_bridge.validation import SCHEMA_DIR, load_schema
from assistant_bridge.web.openapi import build_document, route_rules
from tests.conftest import KEYS, make_services, make_settings
from tests.fuzz.conftest import ADMIN_HEADERS
from tests.fuzz.sse_events import EventSchemas


def _app(tmp_path: Path, **overrides: Any) -> Any:
    from assistant_bridge.web.app import create_app

    settings = make_settings(tmp_path, **overrides)
    return create_app(settings, make_services(settings))


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [v for k, v in node.items() if k == "$ref"] + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


def _resolve(doc: dict[str, Any], ref: str) -> Any:
    node: Any = doc
    for part in ref.removeprefix("#/").split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


@pytest.mark.unit
def test_every_flask_route_is_in_the_document_and_nothing_else(tmp_path: Path) -> None:
    app = _app(tmp_path, auth={"keys": KEYS})
    doc = app.test_client().get("/openapi.json").get_json()
    rules = {
        (method, rule.rule)
        for rule in app.url_map.iter_rules()
        if rule.endpoint != "static"
        for method in rule.methods - {"HEAD", "OPTIONS"}
    }
    assert len(rules) > 30
    assert route_rules(doc) == rules


@pytest.mark.unit
def test_the_document_is_valid_openapi_3_1_and_self_contained(tmp_path: Path) -> None:
    client = _app(tmp_path, auth={"keys": KEYS}).test_client()
    resp = client.get("/openapi.json")
    assert resp.status_code == 200 and resp.mimetype == "application/json"
    doc = resp.get_json()
    assert doc["openapi"] == "3.1.0"
    validate_spec(doc)
    for ref in _refs(doc):
        assert ref.startswith("#/"), ref
        _resolve(doc, ref)  # raises KeyError when dangling
    as_yaml = client.get("/openapi.yaml")
    assert as_yaml.status_code == 200 and as_yaml.mimetype == "application/yaml"
    assert yaml.safe_load(as_yaml.get_data(as_text=True)) == doc


@pytest.mark.unit
def test_every_operation_documents_errors_with_the_error_schema() -> None:
    doc = build_document(None)
    error_ref = {"$ref": "#/components/schemas/error"}
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if method == "parameters":
                continue
            if op.get("security") != []:
                assert {"401", "403", "429"} <= set(op["responses"]), (method, path)
            if "requestBody" in op:
                assert {"400", "413"} <= set(op["responses"]), (method, path)
            for code, resp in op["responses"].items():
                if code.startswith(("4", "5")) and not (path == "/readyz" and code == "503"):
                    assert resp["content"]["application/json"]["schema"] == error_ref, (method, path, code)


@pytest.mark.unit
def test_security_follows_the_settings(tmp_path: Path) -> None:
    open_doc = build_document(make_settings(tmp_path))
    assert {} in open_doc["security"]  # anonymous local use: no credential configured
    secured = build_document(make_settings(tmp_path, auth={"keys": KEYS, "api_key_header": "X-Bridge-Key"}))
    assert {} not in secured["security"]
    schemes = secured["components"]["securitySchemes"]
    assert schemes["ApiKeyAuth"] == {
        "type": "apiKey",
        "in": "header",
        "name": "X-Bridge-Key",
        "description": schemes["ApiKeyAuth"]["description"],
    }
    assert schemes["BearerAuth"] == {"type": "http", "scheme": "bearer"}
    assert schemes["BasicAuth"] == {"type": "http", "scheme": "basic"}
    assert secured["paths"]["/healthz"]["get"]["security"] == []
    assert "security" not in secured["paths"]["/v1/search"]["post"]  # the document-wide requirement
    # the GET event stream also takes the key as ?api_key= (EventSource cannot set headers)
    stream = "/v1/tool-executions/{execution_id}/stream"
    assert secured["paths"][stream]["get"]["security"] == secured["security"][:3] + [{"ApiKeyQuery": []}]
    assert open_doc["paths"][stream]["get"]["security"][-2:] == [{"ApiKeyQuery": []}, {}]
    assert schemes["ApiKeyQuery"]["in"] == "query" and schemes["ApiKeyQuery"]["name"] == "api_key"


@pytest.mark.unit
def test_the_published_schemas_are_the_ones_the_routes_validate_against() -> None:
    doc = build_document(None)
    schemas = doc["components"]["schemas"]
    for path in SCHEMA_DIR.glob("*.schema.json"):
        name = path.name.removesuffix(".schema.json")
        original = load_schema(name)
        published = schemas[name]
        assert "$id" not in published and "$schema" not in published
        assert published.get("required") == original.get("required"), name
        assert set(published.get("properties", {})) == set(original.get("properties", {})), name
    body = doc["paths"]["/v1/search"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/search_request"}
    item = _resolve(doc, "#/components/schemas/message_request/properties/input/properties/search_results/items")
    assert item == {"$ref": "#/components/schemas/search_result"}


def _events(client: Any, schemas: EventSchemas, path: str, op_path: str, body: dict[str, Any]) -> list[str]:
    resp = client.post(path, json=body, headers=ADMIN_HEADERS)
    assert resp.status_code == 200 and resp.mimetype == "text/event-stream", resp.get_data(as_text=True)[:300]
    media = schemas.media_schema(op_path, "post", 200)
    assert media is not None
    return schemas.problems(media, resp.get_data())


@pytest.mark.integration
def test_streamed_events_match_their_documented_schemas(fuzz_app: Any) -> None:
    client = fuzz_app.test_client()
    schemas = EventSchemas(client.get("/openapi.json").get_json())
    env = "/v2/assistants/{assistant_id}/environments/{environment_id}"
    cases = [
        (
            "/v2/assistants/default/environments/default/message_stream",
            env + "/message_stream",
            {"input": {"text": "How do I reset my password?"}},
        ),
        ("/v1/relay/message_stream", "/v1/relay/message_stream", {"text": "How do I reset my password?"}),
        (
            "/v1/tools/rag_search/execute?mode=stream",
            "/v1/tools/{tool_id}/execute",
            {"inputs": {"query": "expense report deadline"}},
        ),
        (
            "/agenticRetrieveStream",
            "/agenticRetrieveStream",
            {
                "messages": [{"role": "user", "content": {"text": "How do I reset my password?"}}],
                "retrievers": [{"id": "default"}],
            },
        ),
    ]
    for path, op_path, body in cases:
        assert _events(client, schemas, path, op_path, body) == [], path
    # and the checker notices an undocumented event or wrong data
    media = schemas.media_schema("/agenticRetrieveStream", "post", 200)
    assert media is not None
    wrong = b'event: result\ndata: {"results": "none"}\n\nevent: surprise\ndata: {}\n\n'
    problems = schemas.problems(media, wrong)
    assert len(problems) == 2 and "surprise" in problems[1]


@pytest.mark.unit
def test_sse_event_names_of_the_document_are_exhaustive() -> None:
    doc = build_document(None)
    agentic = doc["components"]["schemas"]["AgenticStreamEvent"]
    names: set[str] = set()
    for branch in agentic["oneOf"]:
        event = branch["properties"]["event"]
        names.update([event["const"]] if "const" in event else event["enum"])
    members = set(json.loads((SCHEMA_DIR / "agentic_stream_event.schema.json").read_text())["properties"])
    assert names == members
