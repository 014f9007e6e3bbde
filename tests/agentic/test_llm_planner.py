"""The LLM planner (JSON replies, checks, fallback) and the OpenAI-compatible chat client."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from assistant_bridge.agentic.chat import FakeChatClient, OpenAIChatClient
from assistant_bridge.agentic.llm_planner import LLMPlanner, build_messages
from assistant_bridge.agentic.planner import EvidenceView, PlanningState, RetrieverInfo, SubQuery
from assistant_bridge.errors import GeneratorError

pytestmark = pytest.mark.unit
STATE = PlanningState(
    question="Which magazine was started first, Arthur's Magazine or First for Women?",
    retrievers=(RetrieverInfo("default", "Encyclopedia"), RetrieverInfo("news", "Press articles")),
    iteration=1,
    max_iterations=3,
    history=(SubQuery("Which magazine was started first", ("default", "news")),),
    evidence=(
        EvidenceView(
            "Arthur's Magazine", "Arthur's Magazine (1844–1846) was an American periodical.", "doc-a", "default", 0, "q"
        ),
    ),
    confidence=0.4,
    confidence_threshold=0.6,
)


def test_a_valid_reply_becomes_the_plan() -> None:
    reply = json.dumps(
        {
            "sufficient": False,
            "reason": "Need First for Women.",
            "sub_queries": [
                {"query": "First for Women magazine founded", "retrievers": ["default", "ghost"]},
                {"query": "which magazine was STARTED first"},
                "Arthur's Magazine history",
            ],
            "expand_documents": ["doc-a", "doc-unknown"],
        }
    )
    chat = FakeChatClient(reply)
    plan = LLMPlanner(chat).plan(STATE)
    assert [(s.text, s.retrievers) for s in plan.sub_queries] == [
        ("First for Women magazine founded", ("default",)),
        ("Arthur's Magazine history", ("default", "news")),
    ]
    assert plan.expand_documents == ("doc-a",) and plan.reason == "Need First for Women."
    assert plan.planner == "llm" and not plan.warnings and not plan.sufficient
    prompt = chat.calls[0][1]["content"]
    assert STATE.question in prompt and "doc-a" in prompt and "- news: Press articles" in prompt
    assert "Answerability score of the best passages: 0.40 (pass mark 0.60)" in prompt


def test_a_fenced_reply_is_accepted_and_sufficient_stops() -> None:
    plan = LLMPlanner(FakeChatClient('```json\n{"sufficient": true, "reason": "enough"}\n```')).plan(STATE)
    assert plan.sufficient and plan.stops and plan.reason == "enough"


@pytest.mark.parametrize(
    "reply",
    [
        "not json at all",
        '["a list"]',
        '{"sufficient": "yes"}',
        '{"sub_queries": [{"retrievers": ["default"]}]}',
        GeneratorError("planner model endpoint failed: timed out"),
    ],
)
def test_failures_fall_back_to_the_embedded_planner_with_a_warning(reply: Any) -> None:
    planner = LLMPlanner(FakeChatClient(reply))
    plan = planner.plan(STATE)
    assert plan.planner == "embedded" and planner.failures == 1
    assert [s.target for s in plan.sub_queries] == ["First for Women"]
    assert plan.warnings and "embedded planner planned this iteration" in plan.warnings[-1]


def test_conversation_context_is_in_the_prompt() -> None:
    state = PlanningState(
        question="And its founder?",
        retrievers=STATE.retrievers,
        iteration=1,
        max_iterations=2,
        conversation=(
            ("user", "Tell me about Viglen"),
            ("assistant", "Viglen is a company."),
            ("user", "And its founder?"),
        ),
    )
    content = build_messages(state)[1]["content"]
    assert "- user: Tell me about Viglen" in content and "No passages found yet." in content


def _client(handler: Any, **kw: Any) -> OpenAIChatClient:
    return OpenAIChatClient(
        base_url="http://llm.test/v1/",
        model="m",
        api_key="sk-secret-123",
        transport=httpx.MockTransport(handler),
        sleep=lambda s: None,
        **kw,
    )


def test_chat_client_sends_json_mode_and_the_key() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"choices": [{"message": {"content": '{"sufficient": true}'}}]})

    assert _client(handler).complete([{"role": "user", "content": "hi"}]) == '{"sufficient": true}'
    sent = json.loads(seen[0].content)
    assert str(seen[0].url) == "http://llm.test/v1/chat/completions"
    assert sent["response_format"] == {"type": "json_object"} and sent["model"] == "m"
    assert seen[0].headers["Authorization"] == "Bearer sk-secret-123"


def test_chat_client_retries_then_fails_without_leaking_the_key() -> None:
    attempts: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        attempts.append(1)
        return httpx.Response(503)

    with pytest.raises(GeneratorError) as info:
        _client(handler, max_retries=2).complete([{"role": "user", "content": "x"}])
    assert len(attempts) == 3 and "HTTP 503" in info.value.message and "sk-secret" not in info.value.message


@pytest.mark.parametrize(
    "response",
    [
        httpx.Response(200, text="garbage"),
        httpx.Response(401),
        httpx.Response(200, json={"choices": [{"message": {"content": None}}]}),
    ],
)
def test_chat_client_maps_bad_answers_to_generator_error(response: httpx.Response) -> None:
    with pytest.raises(GeneratorError):
        _client(lambda request: response, max_retries=0).complete([{"role": "user", "content": "x"}])
