"""The relay loop against a scripted assistant (httpx.MockTransport) and fake providers."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from assistant_bridge.errors import BackendUnavailable
from assistant_bridge.relay import (
    AssistantClient,
    AssistantHTTPError,
    AssistantUnavailable,
    BearerToken,
    FakeProvider,
    InvalidSearchResults,
    MalformedAssistantResponse,
    Relay,
    RelaySearchFailed,
    SearchActionInvalid,
    SearchLoopExceeded,
    relay_message,
)
from assistant_bridge.relay.wire import body_bytes
from tests.relay.helpers import answer_reply, search_reply

pytestmark = pytest.mark.unit
URL = "https://assistant.test/v2/assistants/A/environments/E/message"
RESULTS = [{"result_metadata": {"score": 0.9}, "title": "VPN", "body": "Install the VPN client."}]


class Script:
    """A fake assistant: the n-th request gets ``replies[n]`` (the last one repeats)."""

    def __init__(self, *replies: Any) -> None:
        self.replies = replies
        self.requests: list[httpx.Request] = []

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        reply = self.replies[min(len(self.requests) - 1, len(self.replies) - 1)]
        if isinstance(reply, Exception):
            raise reply
        if callable(reply):
            reply = reply(request)
        if isinstance(reply, httpx.Response):
            return reply
        return httpx.Response(200, json=reply)


def make(script: Script, provider: Any = None, **options: Any) -> Relay:
    client = AssistantClient(
        URL,
        transport=httpx.MockTransport(script),
        sleep=lambda s: None,
        auth=options.pop("auth", None),
        retries=options.pop("retries", 2),
    )
    return Relay(client, provider if provider is not None else FakeProvider(RESULTS), **options)


def test_one_round_echoes_context_and_user_id_and_returns_the_answer() -> None:
    script = Script(search_reply("how do I set up the VPN", context={"c": 1}), answer_reply("Install it."))
    provider = FakeProvider(RESULTS)
    result = make(script, provider).send("how do I set up the VPN", user_id="alice", options={"debug": True})
    assert result.text == "Install it." and result.rounds == 1 and result.outcome == "text"
    first, second = script.bodies
    assert first == {
        "input": {"message_type": "text", "text": "how do I set up the VPN", "options": {"debug": True}},
        "user_id": "alice",
    }
    assert second == {
        "input": {"message_type": "search_results", "search_results": RESULTS, "options": {"debug": True}},
        "context": {"c": 1},
        "user_id": "u-echo",
    }
    assert provider.calls == [("how do I set up the VPN", None, {})]
    assert [s.result_count for s in result.searches] == [1]
    assert result.search_results == tuple(RESULTS)
    assert script.requests[0].url.params["version"] == "2024-08-25"
    assert script.requests[0].headers["content-type"] == "application/json"


def test_an_answer_without_actions_needs_no_search() -> None:
    provider = FakeProvider(RESULTS)
    result = make(Script(answer_reply("Hi!")), provider).send("hello")
    assert result.rounds == 0 and result.text == "Hi!" and provider.calls == []


def test_several_actions_in_one_response_are_all_run_and_merged_by_rank() -> None:
    by_query = {
        "vpn": [{"title": "v1", "body": "a"}, {"title": "v2", "body": "b"}],
        "expenses": [{"title": "e1", "body": "c"}, {"title": "v2", "body": "b"}, {"title": "e3", "body": "d"}],
    }
    provider = FakeProvider(lambda q: by_query[q])
    reply = {
        "output": {
            "generic": [],
            "actions": [
                {"type": "search", "query": "vpn", "filter": "lang:en"},
                {"type": "client_side", "name": "other"},
                {"type": "search", "query": "expenses", "metadata": {"limit": 3}},
            ],
        },
        "context": {},
    }
    script = Script(reply, answer_reply())
    result = make(script, provider).send("vpn and expenses")
    assert provider.calls == [("vpn", "lang:en", {}), ("expenses", None, {"limit": 3})]
    sent = script.bodies[1]["input"]["search_results"]
    assert [r["title"] for r in sent] == ["v1", "e1", "v2", "e3"]
    assert [s.query for s in result.searches] == ["vpn", "expenses"]


def test_unknown_action_types_alone_end_the_turn() -> None:
    reply = {
        "output": {
            "generic": [{"response_type": "text", "text": "Opening a ticket"}],
            "actions": [{"type": "client", "name": "open_ticket"}],
        }
    }
    provider = FakeProvider(RESULTS)
    result = make(Script(reply), provider).send("open a ticket")
    assert result.text == "Opening a ticket" and provider.calls == [] and result.rounds == 0


def test_an_assistant_that_keeps_asking_is_stopped_after_max_rounds() -> None:
    script = Script(search_reply("again"))
    with pytest.raises(SearchLoopExceeded) as err:
        make(script, max_rounds=3).send("loop")
    assert err.value.details["rounds"] == 3 and len(script.requests) == 4
    assert "3 rounds" in err.value.message and err.value.status == 502


def test_an_action_with_no_query_fails_the_turn() -> None:
    script = Script({"output": {"actions": [{"type": "search", "query": ""}]}})
    with pytest.raises(SearchActionInvalid):
        make(script).send("hello")
    assert len(script.requests) == 1


@pytest.mark.parametrize(
    "reply",
    [
        httpx.Response(200, text="<html>gateway</html>"),
        httpx.Response(200, json=["not", "an", "object"]),
        httpx.Response(200, json={"outputs": {}}),
        httpx.Response(200, json={"output": {"actions": {"type": "search"}}}),
    ],
)
def test_an_assistant_answering_garbage_is_a_clear_error(reply: httpx.Response) -> None:
    with pytest.raises(MalformedAssistantResponse) as err:
        make(Script(reply)).send("hello")
    assert "<html>" not in err.value.message


def test_http_errors_are_not_retried_and_carry_the_assistant_code() -> None:
    script = Script(httpx.Response(400, json={"error": {"code": "validation_error", "message": "$.input: bad"}}))
    with pytest.raises(AssistantHTTPError) as err:
        make(script).send("hello")
    assert err.value.details == {"status": 400, "assistant_code": "validation_error"}
    assert "$.input: bad" in err.value.message and len(script.requests) == 1
    script = Script(httpx.Response(503, text="down"))
    with pytest.raises(AssistantHTTPError):
        make(script).send("hello")
    assert len(script.requests) == 1


def test_connection_errors_are_retried_then_reported() -> None:
    script = Script(httpx.ConnectError("refused"), httpx.RemoteProtocolError("closed"), answer_reply())
    assert make(script).send("hello").text == "Done."
    assert len(script.requests) == 3
    script = Script(httpx.ConnectError("refused"))
    with pytest.raises(AssistantUnavailable) as err:
        make(script, retries=1).send("hello")
    assert err.value.details["attempts"] == 2 and len(script.requests) == 2


def test_a_read_timeout_is_not_retried() -> None:
    script = Script(httpx.ReadTimeout("slow"))
    with pytest.raises(AssistantUnavailable):
        make(script).send("hello")
    assert len(script.requests) == 1


def test_a_failing_provider_fails_the_turn_or_sends_what_worked() -> None:
    broken = FakeProvider(error=BackendUnavailable("milvus is down"))
    with pytest.raises(RelaySearchFailed) as err:
        make(Script(search_reply("q"), answer_reply()), broken).send("q")
    assert err.value.details["cause"] == "backend_unavailable" and err.value.status == 503

    script = Script(search_reply("q"), answer_reply("No results."))
    result = make(script, broken, on_search_error="empty").send("q")
    assert script.bodies[1]["input"]["search_results"] == []
    assert result.searches[0].error == "relay_search_failed" and result.text == "No results."


@pytest.mark.parametrize(
    "bad, path",
    [
        ({"search_results": []}, "$"),
        ([{"title": "t"}], "$[0]"),
        ([{"title": "t", "body": 3}], "$[0].body"),
        ([RESULTS[0], "text"], "$[1]"),
    ],
)
def test_results_of_the_wrong_shape_from_a_provider_are_a_clear_error(bad: Any, path: str) -> None:
    with pytest.raises(InvalidSearchResults) as err:
        make(Script(search_reply("q"), answer_reply()), FakeProvider(bad)).send("q")
    assert err.value.details["path"] == path


def test_oversized_results_are_trimmed_under_the_limit() -> None:
    big = [{"result_metadata": {"score": 1.0 - i / 100}, "title": f"doc {i}", "body": "ü" * 5000} for i in range(40)]
    script = Script(search_reply("q", context={"k": "v" * 2000}), answer_reply())
    result = make(script, FakeProvider(big)).send("q")
    sent = script.requests[1].content
    assert len(sent) <= 100_000 and result.trimmed > 0
    assert len(json.loads(sent)["input"]["search_results"]) == 40 - result.trimmed
    assert body_bytes(json.loads(sent)) == sent  # what was measured is what was sent


def test_credentials_and_sessions() -> None:
    script = Script(search_reply("q"), answer_reply())
    relay = make(script, auth=BearerToken("tok"))
    relay.send("q", session_id="s-1")
    assert all(r.headers["authorization"] == "Bearer tok" for r in script.requests)
    assert all(r.url.path == "/v2/assistants/A/environments/E/sessions/s-1/message" for r in script.requests)


@pytest.mark.parametrize(
    "given",
    [
        "https://a.test/v2/assistants/A/environments/E/message?version=2023-06-15",
        "https://a.test/v2/assistants/A/environments/E/sessions/old/message_stream?version=2023-06-15",
        "https://a.test/v2/assistants/A/environments/E?version=2023-06-15",
    ],
)
def test_message_urls_are_derived_from_any_of_them(given: str) -> None:
    client = AssistantClient(given)
    assert client.url() == "https://a.test/v2/assistants/A/environments/E/message?version=2023-06-15"
    assert (
        client.url(session_id="s", stream=True)
        == "https://a.test/v2/assistants/A/environments/E/sessions/s/message_stream?version=2023-06-15"
    )


def sse(*events: tuple[str, Any], content_type: str = "text/event-stream") -> Callable[[httpx.Request], httpx.Response]:
    text = "".join(f"event: {n}\ndata: {json.dumps({n: p})}\n\n" for n, p in events)
    return lambda request: httpx.Response(200, text=": hi\n\n" + text, headers={"content-type": content_type})


def test_streaming_passes_items_through_and_searches_in_between() -> None:
    item = {"response_type": "text", "text": "Install it.", "streaming_metadata": {"id": 1}}
    script = Script(
        sse(("final_response", search_reply("vpn"))),
        sse(
            ("partial_item", {**item, "text": "Install "}),
            ("partial_item", {**item, "text": "it."}),
            ("complete_item", item),
            ("final_response", answer_reply("Install it.")),
        ),
    )
    events = list(make(script).stream("vpn", user_id="bob"))
    names = [n for n, _ in events]
    assert names == ["relay_search", "partial_item", "partial_item", "complete_item", "final_response", "relay_end"]
    assert events[0][1]["searches"][0]["query"] == "vpn" and events[0][1]["search_results"] == RESULTS
    assert events[-1][1]["rounds"] == 1 and events[-1][1]["outcome"] == "text"
    assert all(r.url.path.endswith("/message_stream") for r in script.requests)
    assert script.requests[0].headers["accept"] == "text/event-stream"


def test_streaming_from_an_assistant_that_answers_plain_json() -> None:
    script = Script(search_reply("vpn"), answer_reply("Install it."))
    events = list(make(script).stream("vpn"))
    assert [n for n, _ in events] == ["relay_search", "final_response", "relay_end"]


def test_streaming_without_message_stream_sends_complete_items() -> None:
    script = Script(search_reply("vpn"), answer_reply("Install it."))
    events = list(make(script, stream_supported=False).stream("vpn"))
    assert [n for n, _ in events] == ["relay_search", "complete_item", "final_response", "relay_end"]
    assert events[1][1]["streaming_metadata"] == {"id": 1}
    assert all(r.url.path.endswith("/message") for r in script.requests)


@pytest.mark.parametrize(
    "reply, error",
    [
        (
            sse(("partial_item", {"response_type": "text", "text": "a", "streaming_metadata": {"id": 1}})),
            MalformedAssistantResponse,
        ),
        (sse(("error", {"code": "internal_error", "message": "boom"})), MalformedAssistantResponse),
        (
            lambda r: httpx.Response(
                200, text="event: final_response\ndata: {not json\n\n", headers={"content-type": "text/event-stream"}
            ),
            MalformedAssistantResponse,
        ),
        (sse(("final_response", {"no": "output"})), MalformedAssistantResponse),
    ],
)
def test_broken_streams_are_clear_errors(reply: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        list(make(Script(reply)).stream("q"))


def test_relay_message_is_one_line() -> None:
    script = Script(search_reply("q"), answer_reply("Yes."))
    result = relay_message(URL, "q", provider=FakeProvider(RESULTS), transport=httpx.MockTransport(script))
    assert result.text == "Yes." and result.rounds == 1


def test_relay_message_leaves_the_callers_provider_open_for_the_next_call() -> None:
    class Closable(FakeProvider):  # type: ignore[misc, valid-type]
        closed = False

        def close(self) -> None:
            self.closed = True

    provider = Closable(RESULTS)
    for _ in range(2):
        script = Script(search_reply("q"), answer_reply("Yes."))
        assert relay_message(URL, "q", provider=provider, transport=httpx.MockTransport(script)).text == "Yes."
    assert provider.closed is False


def test_a_401_drops_a_cached_iam_token_for_the_next_turn() -> None:
    from assistant_bridge.relay import IAMToken

    tokens = iter(["t1", "t2"])
    iam = IAMToken(
        "k",
        transport=httpx.MockTransport(
            lambda r: httpx.Response(200, json={"access_token": next(tokens), "expires_in": 3600})
        ),
    )
    script = Script(httpx.Response(401, json={"error": {"code": "unauthorized", "message": "expired"}}), answer_reply())
    relay = make(script, auth=iam)
    with pytest.raises(AssistantHTTPError):
        relay.send("hello")
    assert relay.send("hello").text == "Done."
    assert [r.headers["authorization"] for r in script.requests] == ["Bearer t1", "Bearer t2"]
