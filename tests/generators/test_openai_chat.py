"""The OpenAI-compatible generator against a real local HTTP server speaking the JSON and SSE wire format."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from assistant_bridge.core.snippets import Snippet
from assistant_bridge.errors import GeneratorError
from assistant_bridge.generators import make_generator
from assistant_bridge.generators.openai_chat import OpenAIChatGenerator
from assistant_bridge.generators.prompt import LENGTHS
from assistant_bridge.settings import Secret

from .llm_server import ScriptedServer, chunk, completion

pytestmark = pytest.mark.unit

SNIPPETS = [
    Snippet("Expense reports must be submitted within 30 days.", "Expense policy", 3),
    Snippet("The VPN must be connected before opening finance tools.", "VPN guide", 5),
]


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as s:
        yield s


def make(server: ScriptedServer, **kw: Any) -> OpenAIChatGenerator:
    sleeps: list[float] = []
    g = OpenAIChatGenerator(
        base_url=server.base_url + "/",
        model="test-model",
        api_key=Secret("sk-test-123"),
        timeout=kw.pop("timeout", 2.0),
        sleep=sleeps.append,
        **kw,
    )
    g.sleeps = sleeps  # type: ignore[attr-defined]
    return g


def test_generate_happy_path_prompt_and_citations(server: ScriptedServer) -> None:
    server.script = [{"json": completion("Reports are due within 30 days [1]. Connect the VPN first [2].")}]
    out = make(server).generate("When are expense reports due?", SNIPPETS, "concise")
    assert out.text == "Reports are due within 30 days. Connect the VPN first."
    assert not out.declined and out.model == "test-model"
    assert [(c.search_result_index, out.text[slice(*c.ranges[0])]) for c in out.citations] == [
        (3, "Reports are due within 30 days."),
        (5, "Connect the VPN first."),
    ]
    assert (out.prompt_tokens, out.completion_tokens) == (42, 7)
    path, headers, body = server.requests[0]
    assert path == "/v1/chat/completions"
    assert headers["Authorization"] == "Bearer sk-test-123"
    assert body["model"] == "test-model" and body["stream"] is False
    assert body["max_tokens"] == LENGTHS["concise"].max_tokens and body["temperature"] == 0.0
    system, user = body["messages"]
    assert "I don't know" in system["content"] and "[1]" in system["content"]
    assert "[1] Expense policy\nExpense reports must" in user["content"]
    assert "[2] VPN guide\n" in user["content"]
    assert user["content"].endswith("Question: When are expense reports due?")


def test_response_length_sets_max_tokens(server: ScriptedServer) -> None:
    server.script = [{"json": completion("x")} for _ in range(3)]
    g = make(server)
    for rl in ("concise", "moderate", "verbose"):
        g.generate("q", SNIPPETS, rl)  # type: ignore[arg-type]
    sent = [r[2]["max_tokens"] for r in server.requests]
    assert sent[0] < sent[1] < sent[2]


def test_declined_answer(server: ScriptedServer) -> None:
    server.script = [{"json": completion("I don't know.")}]
    out = make(server).generate("What is the CEO's phone number?", SNIPPETS)
    assert out.declined and out.citations == ()


def test_retries_500_then_succeeds(server: ScriptedServer) -> None:
    server.script = [
        {"status": 500, "json": {"error": "boom"}},
        {"status": 429, "json": {}, "headers": {"Retry-After": "3"}},
        {"json": completion("Within 30 days [1].")},
    ]
    g = make(server, max_retries=2, backoff=0.25)
    assert g.generate("q", SNIPPETS).text == "Within 30 days."
    assert len(server.requests) == 3
    first, hinted = g.sleeps  # type: ignore[attr-defined]
    assert 0.25 <= first <= 0.25 + 0.25 and hinted == 3.0  # backoff plus jitter, then Retry-After


def test_gives_up_after_max_retries(server: ScriptedServer) -> None:
    server.script = [{"status": 503, "json": {}} for _ in range(3)]
    with pytest.raises(GeneratorError) as info:
        make(server, max_retries=1).generate("q", SNIPPETS)
    assert len(server.requests) == 2
    assert info.value.details["reason"] == "http_503"
    assert "sk-test" not in str(info.value.to_json())


def test_client_errors_are_not_retried(server: ScriptedServer) -> None:
    server.script = [{"status": 401, "json": {"error": "bad key"}}]
    with pytest.raises(GeneratorError) as info:
        make(server, max_retries=3).generate("q", SNIPPETS)
    assert len(server.requests) == 1 and info.value.details["status"] == 401


def test_timeout_is_retried_then_fails(server: ScriptedServer) -> None:
    server.script = [{"sleep": 0.6, "json": completion("late")}, {"sleep": 0.6, "json": completion("late")}]
    with pytest.raises(GeneratorError) as info:
        make(server, timeout=0.15, max_retries=1).generate("q", SNIPPETS)
    assert info.value.details["reason"] == "timeout"
    assert len(server.requests) == 2


@pytest.mark.parametrize("raw", [b"not json at all", b'{"choices": []}', b'{"choices": [{"message": {"content": 5}}]}'])
def test_garbage_body_is_a_generator_error(server: ScriptedServer, raw: bytes) -> None:
    server.script = [{"raw": raw}]
    with pytest.raises(GeneratorError):
        make(server, max_retries=2).generate("q", SNIPPETS)
    assert len(server.requests) == 1


def test_connection_refused_is_a_generator_error() -> None:
    g = OpenAIChatGenerator(
        base_url="http://127.0.0.1:9/v1", model="m", max_retries=1, sleep=lambda s: None, connect_timeout=0.5
    )
    with pytest.raises(GeneratorError) as info:
        g.generate("q", SNIPPETS)
    assert info.value.details["reason"] == "connect_error"


STREAM = [
    chunk(""),
    chunk("Reports are due"),
    chunk(" within 30 days ["),
    chunk("1]. Connect"),
    chunk(" the VPN first [2]."),
    chunk(None, "stop"),
    "[DONE]",
]


def test_stream_happy_path(server: ScriptedServer) -> None:
    server.script = [{"sse": STREAM}]
    stream = make(server).stream("q", SNIPPETS)
    deltas = list(stream)
    result = stream.result()
    assert "".join(deltas) == result.text == "Reports are due within 30 days. Connect the VPN first."
    assert all("[" not in d for d in deltas)
    assert [c.search_result_index for c in result.citations] == [3, 5]
    body = server.requests[0][2]
    assert body["stream"] is True


def test_stream_retries_500_before_the_first_token(server: ScriptedServer) -> None:
    server.script = [{"status": 500, "json": {}}, {"sse": STREAM}]
    g = make(server)
    assert g.stream("q", SNIPPETS).result().text.startswith("Reports are due")
    assert len(server.requests) == 2


def test_stream_is_not_retried_after_the_first_token(server: ScriptedServer) -> None:
    server.script = [{"sse": STREAM, "break_after": 3}, {"sse": STREAM}]
    stream = make(server, max_retries=3).stream("q", SNIPPETS)
    received = []
    with pytest.raises(GeneratorError):
        for delta in stream:
            received.append(delta)
    assert "".join(received).startswith("Reports are due")
    assert len(server.requests) == 1


def test_stream_that_ends_without_done_after_tokens_is_an_error(server: ScriptedServer) -> None:
    server.script = [{"sse": [chunk("Half an answer")]}]
    with pytest.raises(GeneratorError):
        make(server, max_retries=2).stream("q", SNIPPETS).result()
    assert len(server.requests) == 1


def test_stream_read_timeout_before_first_token_is_retried(server: ScriptedServer) -> None:
    server.script = [{"sse": STREAM, "sleep": 0.6}, {"sse": STREAM}]
    assert make(server, timeout=0.15, max_retries=1).stream("q", SNIPPETS).result().text.endswith("first.")
    assert len(server.requests) == 2


@pytest.mark.parametrize("bad", ["{not json", '{"error": {"message": "overloaded"}}', "[1, 2]"])
def test_stream_garbage_event_is_a_generator_error(server: ScriptedServer, bad: str) -> None:
    server.script = [{"sse": [bad, "[DONE]"]}]
    with pytest.raises(GeneratorError):
        make(server).stream("q", SNIPPETS).result()


def test_stream_declined(server: ScriptedServer) -> None:
    server.script = [{"sse": [chunk("I don't"), chunk(" know."), chunk(None, "stop"), "[DONE]"]}]
    result = make(server).stream("q", SNIPPETS).result()
    assert result.declined and result.text == "I don't know."


def test_prompt_tokens_and_context_budget() -> None:
    g = OpenAIChatGenerator(base_url="http://x/v1", model="m", context_window=4096)
    assert g.context_tokens == 4096 - LENGTHS["verbose"].max_tokens
    one, two = g.prompt_tokens("q", SNIPPETS[:1]), g.prompt_tokens("q", SNIPPETS)
    assert 20 < one < two < 200


def test_factory_builds_it_and_requires_its_options() -> None:
    from assistant_bridge.errors import ConfigurationError

    assert isinstance(make_generator("openai", base_url="http://x/v1", model="m"), OpenAIChatGenerator)
    with pytest.raises(ConfigurationError):
        make_generator("openai", model="m")
