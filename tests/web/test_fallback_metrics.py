"""A model the turn survives without (the agentic planner model, the query-rewrite model) still shows when it
fails: one ``agentic.planner_fallback`` / ``rewrite.fallback`` log event with the error code and no user
text, and ``assistant_bridge_backend_errors_total`` with backend ``planner_llm`` / ``rewrite_llm``; the turn
answers through the fallback. A generator failing in an agentic run is counted with its own error code."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from assistant_bridge.agentic.chat import OpenAIChatClient
from assistant_bridge.agentic.runtime import AgenticRuntime
from assistant_bridge.core.snippets import Snippet
from assistant_bridge.errors import EmbedderError
from assistant_bridge.generators import FakeGenerator, Generation
from assistant_bridge.logs import JsonFormatter
from tests.conversation.helpers import build, ingest, turn_event
from tests.tools.helpers import execute
from tests.web.test_agentic import DOCS as AGENTIC_DOCS
from tests.web.test_agentic import events_of, make_client, request_body
from tests.web.test_message_conversation import DOCS, FOLLOW_UP, LLM, conv, llm_transport, say, session
from tests.web.test_metrics_recorded import ERRORS, OUTCOMES, Delta, measured

pytestmark = pytest.mark.unit
SECRET_QUESTION = "Which magazine did zanzibar-merger start first?"


def _events(caplog: pytest.LogCaptureFixture, name: str) -> list[dict[str, Any]]:
    """The fields of each ``name`` event."""
    return [vars(r) for r in caplog.records if r.getMessage() == name]


def _planner_endpoint(handler: Any) -> OpenAIChatClient:
    return OpenAIChatClient(
        base_url="http://llm.test/v1",
        model="planner-m",
        transport=httpx.MockTransport(handler),
        max_retries=0,
        sleep=lambda _s: None,
    )


def _agentic(tmp_path: Path, chat: OpenAIChatClient | None = None, generator: Any = None) -> tuple[Any, Any]:
    c, svc = make_client(tmp_path)
    rt = svc.registered(AgenticRuntime)
    if chat is not None:
        rt.chat = chat
    if generator is not None:
        rt._generator = generator
    for title, text in AGENTIC_DOCS:
        assert c.post("/v1/documents", json={"title": title, "text": text}).status_code == 201
    return c, svc


def _custom(question: str = SECRET_QUESTION, iterations: int = 2) -> dict[str, Any]:
    return request_body(
        question, agenticRetrieveConfiguration={"foundationModelType": "CUSTOM", "maxAgentIteration": iterations}
    )


@pytest.mark.parametrize(
    "response",
    [
        httpx.Response(503, json={"error": "down"}),
        httpx.Response(200, json={"choices": [{"message": {"content": "I would search for the founding dates."}}]}),
    ],
    ids=["http_503", "not_json"],
)
def test_a_failing_planner_model_is_counted_and_logged_and_the_run_still_answers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, response: httpx.Response
) -> None:
    calls: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return response

    c, _ = _agentic(tmp_path, _planner_endpoint(handler))
    caplog.set_level(logging.WARNING)
    result: list[list[tuple[str, dict[str, Any]]]] = []
    d = measured(c, lambda: result.append(events_of(c.post("/agenticRetrieveStream", json=_custom()))))
    events = result[0]
    assert calls, "the planner model was not asked"
    assert events[-1][0] == "result" and events[-1][1]["generatedResponse"]["answer"]  # the embedded planner planned
    assert d(ERRORS, backend="planner_llm", code="generator_error") == len(calls) >= 1
    assert d(ERRORS) == len(calls)  # nothing else is counted
    assert d(OUTCOMES, route="agentic", outcome="answer") == 1
    logged = _events(caplog, "agentic.planner_fallback")
    assert len(logged) == len(calls) and all(
        e["code"] == "generator_error" and e["model"] == "planner-m" for e in logged
    )
    assert not any("zanzibar" in JsonFormatter().format(r) for r in caplog.records)


def test_a_working_planner_model_counts_nothing(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    reply = json.dumps({"sufficient": True, "reason": "enough"})

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"choices": [{"message": {"content": reply}}]})

    c, _ = _agentic(tmp_path, _planner_endpoint(handler))
    caplog.set_level(logging.WARNING)
    d = measured(c, lambda: events_of(c.post("/agenticRetrieveStream", json=_custom())))
    assert d(ERRORS) == 0 and not _events(caplog, "agentic.planner_fallback")


class _EmbedderDown(FakeGenerator):
    """A generator whose own model (a sentence embedder) fails: not a ``generator_error``."""

    def generate(self, query: str, snippets: Sequence[Snippet], response_length: Any = "moderate") -> Generation:
        raise EmbedderError("the sentence embedder failed")


def test_a_failing_agentic_generator_is_counted_with_its_own_error_code(tmp_path: Path) -> None:
    c, _ = _agentic(tmp_path, generator=_EmbedderDown())
    result: list[list[tuple[str, dict[str, Any]]]] = []
    d = measured(c, lambda: result.append(events_of(c.post("/agenticRetrieveStream", json=request_body()))))
    name, payload = result[0][-1]
    assert name == "dependencyFailedException" and payload["resourceName"] == "generator"
    assert d(ERRORS, backend="fake", code="embedder_error") == 1 and d(ERRORS) == 1
    assert d(OUTCOMES, route="agentic", outcome="error") == 1


@pytest.mark.parametrize(
    "transport",
    [llm_transport(status=500), llm_transport(fail=True), llm_transport("   ")],
    ids=["http_500", "timeout", "bad_response"],
)
def test_a_failing_rewrite_model_is_counted_and_logged_and_the_turn_still_answers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, transport: httpx.MockTransport
) -> None:
    app, _, _ = build(tmp_path, assistants=conv(query_rewrite=LLM), transport=transport)
    client = app.test_client()
    ingest(client, DOCS)
    sid = session(client)
    say(client, sid, "What is a Roth IRA?")  # nothing to rewrite yet: the model is not asked
    caplog.set_level(logging.WARNING)
    bodies: list[dict[str, Any]] = []
    d = measured(client, lambda: bodies.append(say(client, sid, FOLLOW_UP)))
    assert turn_event(bodies[0])["query_rewrite"]["method"] == "fallback"
    assert d(OUTCOMES, route="message", outcome="answer") == 1  # answered, with the message as sent
    assert d(ERRORS, backend="rewrite_llm", code="generator_error") == 1 and d(ERRORS) == 1
    logged = _events(caplog, "rewrite.fallback")
    assert len(logged) == 1 and logged[0]["code"] == "generator_error" and logged[0]["mode"] == "entire_conversation"
    assert not any("penalty" in line or "Roth" in line for line in map(JsonFormatter().format, caplog.records))


def test_a_failing_rewrite_model_in_rag_search_is_counted(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    app, _, _ = build(
        tmp_path,
        assistants=conv(query_rewrite=LLM),
        transport=llm_transport(status=502),
        tools={"rag_search": {"mode": "lexical", "retrieve_limit": 3}},
    )
    client = app.test_client()
    ingest(client, DOCS)
    assert execute(client, {"query": "What is a Roth IRA?"}, session_id="chat-1").status_code == 200
    caplog.set_level(logging.WARNING)
    d = Delta(client)
    resp = execute(client, {"query": FOLLOW_UP}, session_id="chat-1")
    d.take()
    assert resp.status_code == 200 and resp.get_json()["query_rewrite"]["fallback_reason"] == "http_502"
    assert resp.get_json()["outcome"] == "answer"
    assert d(ERRORS, backend="rewrite_llm", code="generator_error") == 1 and d(ERRORS) == 1
    assert len(_events(caplog, "rewrite.fallback")) == 1


def test_a_working_rewrite_model_counts_nothing(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    rewritten = "Is there a penalty for early withdrawals from a Roth IRA?"
    transport = llm_transport(json.dumps({"query": rewritten}))
    app, _, _ = build(tmp_path, assistants=conv(query_rewrite=LLM), transport=transport)
    client = app.test_client()
    ingest(client, DOCS)
    sid = session(client)
    say(client, sid, "What is a Roth IRA?")
    caplog.set_level(logging.WARNING)
    d = measured(client, lambda: say(client, sid, FOLLOW_UP))
    assert d(ERRORS) == 0 and not _events(caplog, "rewrite.fallback")
