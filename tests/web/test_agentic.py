"""POST /agenticRetrieveStream through the Flask test client: stream order and shapes, validation errors,
retriever failures, guardrails, and scope (one user never gets another's results)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.agentic.events import ResponseEvent, TraceEvent
from assistant_bridge.agentic.runtime import AgenticRuntime
from assistant_bridge.errors import BackendUnavailable
from assistant_bridge.filters import FakePreFilter
from assistant_bridge.generators import FakeGenerator
from assistant_bridge.validation import validate
from tests.conftest import KEYS, headers_for, make_services, make_settings

pytestmark = pytest.mark.unit
DOCS = [
    (
        "Arthur's Magazine",
        "Arthur's Magazine (1844–1846) was an American literary periodical published in Philadelphia.",
    ),
    (
        "First for Women",
        "First for Women is a woman's magazine published by Bauer Media Group. It was started in 1989.",
    ),
    ("VPN setup", "Install the VPN client and sign in with your company account before connecting."),
]
QUESTION = "Which magazine was started first, Arthur's Magazine or First for Women?"


def make_client(tmp_path: Path, **settings: Any) -> tuple[Any, Any]:
    from assistant_bridge.web.app import create_app

    s = make_settings(tmp_path, **settings)
    svc = make_services(s)
    svc.register(AgenticRuntime(svc, generator=FakeGenerator(), prefilter=FakePreFilter(0.9), threshold=0.5))
    app = create_app(s, svc)
    app.config["TESTING"] = True
    return app.test_client(), svc


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Any]:
    c, _ = make_client(tmp_path)
    for title, text in DOCS:
        assert c.post("/v1/documents", json={"title": title, "text": text}).status_code == 201
    yield c


def request_body(question: str = QUESTION, **over: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "messages": [{"role": "user", "content": {"text": question}}],
        "retrievers": [{"configuration": {"knowledgeBase": {"knowledgeBaseId": "default"}}}],
    }
    body.update(over)
    return body


def events_of(resp: Any) -> list[tuple[str, dict[str, Any]]]:
    assert resp.status_code == 200, resp.get_data(as_text=True)
    out = []
    for block in resp.get_data(as_text=True).split("\n\n"):
        lines = [ln for ln in block.splitlines() if not ln.startswith(":")]
        if not lines:
            continue
        name = next(ln[7:] for ln in lines if ln.startswith("event: "))
        data = "\n".join(ln[6:] for ln in lines if ln.startswith("data: "))
        out.append((name, json.loads(data)))
    return out


def test_stream_order_and_shapes(client: Any) -> None:
    resp = client.post("/agenticRetrieveStream", json=request_body())
    assert resp.mimetype == "text/event-stream" and resp.headers["Cache-Control"] == "no-cache"
    events = events_of(resp)
    for name, data in events:
        validate("agentic_stream_event", {name: data})
    names = [n for n, _ in events]
    assert names[-1] == "result" and names.count("result") == 1
    steps = [(d["attributes"]["step"], d["attributes"]["status"]) for n, d in events if n == "traceEvent"]
    assert steps[:2] == [("SpeculativeRetrieval", "IN_PROGRESS"), ("SpeculativeRetrieval", "SUCCEEDED")]
    assert ("Planning", "SUCCEEDED") in steps
    first = names.index("responseEvent")
    assert set(names[first:-1]) == {"responseEvent"} and "traceEvent" not in names[first:]
    result = events[-1][1]
    answer = result["generatedResponse"]["answer"]
    assert "".join(d["text"] for n, d in events if n == "responseEvent") == answer
    titles = [r["metadata"]["title"] for r in result["results"]]
    assert {"Arthur's Magazine", "First for Women"} <= set(titles)
    assert len(titles) == len(set(titles))
    assert all(r["sourceRetriever"] == {"identifier": "default"} for r in result["results"])
    for c in result["generatedResponse"]["citations"]:
        cited = answer[c["startIndex"] : c["endIndex"]]
        assert cited and all(
            cited in result["results"][ref["resultIndex"]]["content"]["text"] for ref in c["references"]
        )


def test_alias_route_and_short_retriever_form(client: Any) -> None:
    body = request_body(retrievers=[{"id": "default", "maxNumberOfResults": 1}], generateResponse=False)
    events = events_of(client.post("/v1/agentic-retrieve-stream", json=body))
    assert "responseEvent" not in [n for n, _ in events]
    assert "generatedResponse" not in events[-1][1] and events[-1][1]["results"]


@pytest.mark.parametrize(
    "body,path",
    [
        (request_body(messages=[{"role": "assistant", "content": {"text": "hello"}}]), "$.messages"),
        (request_body(retrievers=[{"id": f"r{i}"} for i in range(6)]), "$.retrievers"),
        (request_body(retrievers=[{"id": "nope"}]), "$.retrievers[0].id"),
        (
            request_body(agenticRetrieveConfiguration={"maxAgentIteration": 99}),
            "$.agenticRetrieveConfiguration.maxAgentIteration",
        ),
        (
            request_body(retrievers=[{"id": "default", "filter": {"equals": {"key": "owner", "value": "bob"}}}]),
            "$.retrievers[0].filter.equals.key",
        ),
        (
            request_body(agenticRetrieveConfiguration={"foundationModelType": "CUSTOM"}),
            "$.agenticRetrieveConfiguration.foundationModelType",
        ),
    ],
)
def test_bad_input_is_a_400_naming_the_field(client: Any, body: dict[str, Any], path: str) -> None:
    resp = client.post("/agenticRetrieveStream", json=body)
    assert resp.status_code == 400
    assert resp.headers["x-amzn-ErrorType"] == "ValidationException"
    data = resp.get_json()
    validate("error", data)
    assert data["message"].startswith(path) and path in data["error"]["message"]


def test_body_that_is_not_json(client: Any) -> None:
    resp = client.post("/agenticRetrieveStream", data="{", content_type="application/json")
    assert resp.status_code == 400 and resp.headers["x-amzn-ErrorType"] == "ValidationException"


def test_a_request_filter_narrows_the_results(client: Any) -> None:
    flt = {"equals": {"key": "title", "value": "VPN setup"}}
    body = request_body(
        "How do I connect to the VPN?",
        generateResponse=False,
        retrievers=[
            {"configuration": {"knowledgeBase": {"knowledgeBaseId": "default", "retrievalOverrides": {"filter": flt}}}}
        ],
    )
    results = events_of(client.post("/agenticRetrieveStream", json=body))[-1][1]["results"]
    assert results and {r["metadata"]["title"] for r in results} == {"VPN setup"}


def test_configured_retrievers_are_views_of_the_backend(tmp_path: Path) -> None:
    c, _ = make_client(tmp_path, retrievers={"it": {"description": "IT help", "filter": "title == 'VPN setup'"}})
    for title, text in DOCS:
        c.post("/v1/documents", json={"title": title, "text": text})
    body = request_body(
        "How do I install the VPN client to read the magazine?",
        generateResponse=False,
        retrievers=[{"id": "it"}, {"id": "default"}],
    )
    results = events_of(c.post("/agenticRetrieveStream", json=body))[-1][1]["results"]
    by: dict[str, set[str]] = {}
    for r in results:
        by.setdefault(r["sourceRetriever"]["identifier"], set()).add(r["metadata"]["title"])
    assert by["it"] == {"VPN setup"}
    assert "First for Women" in by["default"] and "VPN setup" not in by["default"]  # deduplicated across retrievers


def test_a_failing_backend_is_reported_in_the_stream(tmp_path: Path) -> None:
    c, svc = make_client(tmp_path)
    svc.warm_up()
    svc.backend.fail_next = BackendUnavailable("search backend unreachable")
    events = events_of(c.post("/agenticRetrieveStream", json=request_body()))
    failed = [d for n, d in events if n == "traceEvent" and d["attributes"]["status"] == "FAILED"]
    assert failed and failed[0]["attributes"]["failures"][0]["message"].startswith("backend_unavailable")
    assert events[-1][0] == "dependencyFailedException" and events[-1][1]["resourceName"] == "default"


GUARDRAILS = {
    "hr": {
        "1": {
            "denied_topics": [{"name": "Legal", "phrases": ["lawsuit"]}],
            "blocked_input_message": "Not something I can help with.",
        }
    }
}


def test_guardrail_blocks_the_question(tmp_path: Path) -> None:
    c, _ = make_client(tmp_path, guardrails=GUARDRAILS)
    body = request_body(
        "Can I file a lawsuit about First for Women?",
        policyConfiguration={"bedrockGuardrailConfiguration": {"guardrailId": "hr", "guardrailVersion": "1"}},
    )
    events = events_of(c.post("/agenticRetrieveStream", json=body))
    assert [n for n, _ in events] == ["traceEvent", "responseEvent", "result"]
    assert events[0][1]["attributes"]["warnings"][0]["guardrail"]["action"] == "INTERVENED"
    assert events[-1][1]["guardrailAction"] == "INTERVENED" and events[-1][1]["results"] == []
    body["policyConfiguration"]["bedrockGuardrailConfiguration"]["guardrailVersion"] = "2"
    resp = c.post("/agenticRetrieveStream", json=body)
    assert resp.status_code == 404 and resp.headers["x-amzn-ErrorType"] == "ResourceNotFoundException"


# ------------------------------------------------------------------------------------------------ scope


@pytest.fixture
def secured(tmp_path: Path) -> Any:
    c, _ = make_client(tmp_path, auth={"keys": KEYS})
    docs = [
        ("alice", None, "Alice budget", "The secret budget of project Falcon is 12 million."),
        ("bob", None, "Bob roadmap", "The secret roadmap of project Falcon ends in 2030."),
        ("service", "t1", "Tenant one plan", "The secret plan of project Falcon for tenant one."),
        ("service", "t2", "Tenant two plan", "The secret plan of project Falcon for tenant two."),
    ]
    for who, end_user, title, text in docs:
        resp = c.post("/v1/documents", json={"title": title, "text": text}, headers=headers_for(who, end_user))
        assert resp.status_code == 201, resp.get_json()
    assert (
        c.post(
            "/v1/documents",
            json={"title": "Public note", "text": "Project Falcon is public knowledge.", "visibility": "public"},
            headers=headers_for("admin"),
        ).status_code
        == 201
    )
    return c


def titles_for(c: Any, who: str, end_user: str | None = None, **over: Any) -> set[str]:
    body = request_body("What is the secret of project Falcon?", generateResponse=False, **over)
    events = events_of(c.post("/agenticRetrieveStream", json=body, headers=headers_for(who, end_user)))
    seen = {r["metadata"]["title"] for r in events[-1][1]["results"]}
    for _name, data in events:  # traces show only what the caller may read too
        for item in data.get("attributes", {}).get("retrievalResponse", []):
            assert item["metadata"]["title"] in seen
    return seen


def test_each_user_sees_only_their_documents(secured: Any) -> None:
    assert titles_for(secured, "alice") == {"Alice budget", "Public note"}
    assert titles_for(secured, "bob") == {"Bob roadmap", "Public note"}
    assert {"Alice budget", "Bob roadmap", "Tenant one plan"} <= titles_for(secured, "admin")


def test_user_context_narrows_a_service_key_to_one_end_user(secured: Any) -> None:
    ctx = {"userContext": {"userId": "t1"}}
    assert titles_for(secured, "service", **ctx) == {"Tenant one plan", "Public note"}
    assert titles_for(secured, "service", "t2") == {"Tenant two plan", "Public note"}


def test_a_user_key_cannot_act_for_someone_else(secured: Any) -> None:
    assert titles_for(secured, "alice", userContext={"userId": "alice"}) == {"Alice budget", "Public note"}
    body = request_body(userContext={"userId": "bob"})
    resp = secured.post("/agenticRetrieveStream", json=body, headers=headers_for("alice"))
    assert resp.status_code == 403 and resp.headers["x-amzn-ErrorType"] == "AccessDeniedException"
    resp = secured.post("/agenticRetrieveStream", json=body, headers=headers_for("service", "t2"))
    assert resp.status_code == 400  # header and body disagree


def test_credentials_are_required(secured: Any) -> None:
    resp = secured.post("/agenticRetrieveStream", json=request_body())
    assert resp.status_code == 401


# ------------------------------------------------------------------------------------------------ pump


def test_pump_sends_heartbeats_and_reports_unexpected_errors() -> None:
    from assistant_bridge.web.routes_agentic import _Pump

    def slow() -> Iterator[Any]:
        yield TraceEvent("a", 1, "Planning", "IN_PROGRESS", "m")
        time.sleep(0.15)
        yield ResponseEvent("x")
        raise RuntimeError("bug")

    frames = list(_Pump(slow, 0.03))
    text = b"".join(frames).decode()
    assert text.count(": keep-alive") >= 1
    assert (
        text.index("event: traceEvent")
        < text.index("event: responseEvent")
        < text.index("event: internalServerException")
    )
    assert "bug" not in text


def test_pump_sends_an_error_of_the_tree_as_its_member_and_closes_the_loop_when_the_client_leaves() -> None:
    from assistant_bridge.web.routes_agentic import _Pump

    def failing() -> Iterator[Any]:
        yield ResponseEvent("x")
        raise BackendUnavailable("search backend unreachable")

    text = b"".join(_Pump(failing, 1.0)).decode()
    assert text.index("event: responseEvent") < text.index("event: dependencyFailedException")
    assert '{"message":"search backend unreachable"}' in text

    closed = threading.Event()

    def endless() -> Iterator[Any]:
        try:
            while True:
                yield ResponseEvent("x")
        finally:
            closed.set()

    frames = iter(_Pump(endless, 1.0))
    assert next(frames).startswith(b"event: responseEvent")
    frames.close()  # what the server does when the client goes away
    assert closed.wait(5)


# ------------------------------------------------------------------------------- expansion and planners


def test_a_summary_request_reads_the_whole_document(tmp_path: Path) -> None:
    c, _ = make_client(tmp_path, ingest={"chunk_tokens": 30, "overlap_tokens": 5})
    text = " ".join(f"Rule {i}: remote work needs a manager's approval on day {i} of the month." for i in range(1, 13))
    doc = c.post("/v1/documents", json={"title": "Remote work policy", "text": text}).get_json()["document"]
    assert doc["chunk_count"] > 2
    events = events_of(c.post("/agenticRetrieveStream", json=request_body("Summarize the remote work policy")))
    done = [
        d
        for n, d in events
        if n == "traceEvent"
        and d["attributes"]["step"] == "FullDocumentExpansion"
        and d["attributes"]["status"] == "SUCCEEDED"
    ]
    assert done and done[0]["attributes"]["actions"][0]["fullDocumentExpansion"]["documentId"] == doc["id"]
    full = [r for r in events[-1][1]["results"] if r["metadata"].get("full_document")]
    assert len(full) == 1 and full[0]["content"]["text"] == text
    assert full[0]["metadata"]["chunk_count"] == doc["chunk_count"]


def test_custom_planner_falls_back_and_says_so(tmp_path: Path) -> None:
    from assistant_bridge.agentic.chat import FakeChatClient
    from assistant_bridge.errors import GeneratorError

    c, svc = make_client(tmp_path)
    svc.registered(AgenticRuntime).chat = FakeChatClient(GeneratorError("planner model endpoint failed: timed out"))
    for title, text in DOCS:
        c.post("/v1/documents", json={"title": title, "text": text})
    body = request_body(agenticRetrieveConfiguration={"foundationModelType": "CUSTOM"})
    events = events_of(c.post("/agenticRetrieveStream", json=body))
    plans = [
        d["attributes"]
        for n, d in events
        if n == "traceEvent" and d["attributes"]["step"] == "Planning" and d["attributes"]["status"] == "SUCCEEDED"
    ]
    warning = plans[0]["warnings"][0]["message"]["message"]
    assert "planner model failed" in warning and "embedded planner" in warning
    assert events[-1][0] == "result" and events[-1][1]["results"]


def test_custom_planner_plans_the_searches(tmp_path: Path) -> None:
    from assistant_bridge.agentic.chat import FakeChatClient

    c, svc = make_client(tmp_path)
    chat = FakeChatClient(
        '{"sufficient": false, "reason": "look up the VPN", "sub_queries": [{"query": "VPN client"}]}',
        '{"sufficient": true, "reason": "enough"}',
    )
    svc.registered(AgenticRuntime).chat = chat
    for title, text in DOCS:
        c.post("/v1/documents", json={"title": title, "text": text})
    body = request_body(
        "How do I connect?", agenticRetrieveConfiguration={"foundationModelType": "CUSTOM", "maxAgentIteration": 4}
    )
    events = events_of(c.post("/agenticRetrieveStream", json=body))
    plans = [
        d["attributes"]
        for n, d in events
        if n == "traceEvent" and d["attributes"]["step"] == "Planning" and d["attributes"]["status"] == "SUCCEEDED"
    ]
    assert [p["message"] for p in plans] == ["look up the VPN", "enough"] and len(chat.calls) == 2
    assert plans[0]["actions"][0]["retrieve"]["inputQuery"]["text"] == "VPN client"
    assert "VPN setup" in {r["metadata"]["title"] for r in events[-1][1]["results"]}
