"""The relay against real HTTP servers on 127.0.0.1: this project's own ``/message`` API in client-side
mode (werkzeug serving ``create_app`` in a thread), its ``/v1/search`` as a custom search server, and a tiny
scripted assistant for response shapes the real one never produces."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from assistant_bridge.domain import Principal, Scope
from assistant_bridge.relay import (
    ApiKeyHeader,
    AssistantClient,
    AssistantHTTPError,
    AssistantUnavailable,
    FakeProvider,
    HttpSearchProvider,
    MalformedAssistantResponse,
    Relay,
    RelaySearchFailed,
    SearchActionInvalid,
    SearchLoopExceeded,
    ServicesProvider,
    SessionNotFound,
)
from assistant_bridge.relay.errors import InvalidSearchResults
from tests.conftest import KEYS
from tests.relay.helpers import MESSAGE_PATH, ScriptedAssistant, ServerThread, answer_reply, build_app, search_reply

pytestmark = pytest.mark.integration
ADMIN = ApiKeyHeader("key-admin-0001")


@pytest.fixture(scope="module")
def real(tmp_path_factory: Any) -> Iterator[tuple[str, Any]]:
    """This project's service, secured with the test keys, serving over a socket."""
    app, services = build_app(tmp_path_factory.mktemp("relay-real"), auth={"keys": KEYS})
    with ServerThread(app) as srv:
        yield srv.base, services


def relay_to(base: str, provider: Any, **options: Any) -> Relay:
    return Relay(AssistantClient(base + MESSAGE_PATH, auth=options.pop("auth", ADMIN)), provider, **options)


def test_client_side_round_trip_with_the_built_in_backend(real: tuple[str, Any]) -> None:
    base, services = real
    provider = ServicesProvider(services, Scope(principal=Principal(user_id="admin", admin=True)))
    result = relay_to(base, provider).send("How do I reset my password?", options={"debug": True})
    assert result.rounds == 1 and result.outcome == "answer"
    (item,) = result.generic
    assert item["response_type"] == "conversation_search"
    assert item["citations_title"] == "How do we know?"
    assert "reset your password" in item["text"].lower()
    assert item["search_results"][0]["result_metadata"]["document_id"]
    assert (
        result.response["output"]["debug"]["turn_events"][0]["callout"]["search"]["query"]
        == "How do I reset my password?"
    )


def test_custom_search_server_provider_with_credentials_and_a_session(real: tuple[str, Any]) -> None:
    base, _ = real
    provider = HttpSearchProvider(base + "/v1/search", auth=ApiKeyHeader("key-admin-0001"), metadata={"limit": 2})
    relay = relay_to(base, provider)
    sid = relay.client.create_session()
    first = relay.send("How do I set up the VPN?", session_id=sid)
    assert first.outcome == "answer" and first.searches[0].result_count == 2
    assert first.response["context"]["global"]["session_id"] == sid
    second = relay.send("And the expense reports deadline?", session_id=sid)
    assert second.response["context"]["global"]["system"]["turn_count"] == 4  # each message counts
    assert "30 days" in second.text


def test_wrong_credentials_for_the_search_server_fail_the_turn(real: tuple[str, Any]) -> None:
    base, _ = real
    provider = HttpSearchProvider(base + "/v1/search", auth=ApiKeyHeader("wrong-key-000"))
    with pytest.raises(RelaySearchFailed) as err:
        relay_to(base, provider).send("vpn")
    assert err.value.details == {"cause": "http_status", "status": 401}


def test_wrong_credentials_for_the_assistant_are_an_http_error(real: tuple[str, Any]) -> None:
    base, _ = real
    with pytest.raises(AssistantHTTPError) as err:
        relay_to(base, FakeProvider(), auth=ApiKeyHeader("wrong-key-000")).send("vpn")
    assert err.value.details["status"] == 401 and err.value.details["assistant_code"] == "unauthorized"


def test_oversized_results_are_trimmed_so_the_real_assistant_accepts_them(real: tuple[str, Any]) -> None:
    base, _ = real
    big = [
        {
            "result_metadata": {"score": 1.0 - i / 100},
            "title": f"Password guide part {i}",
            "body": "To reset your password open the portal. " + "détail " * 900,
        }
        for i in range(30)
    ]
    result = relay_to(base, FakeProvider(big)).send("How do I reset my password?")
    assert result.trimmed > 0 and result.outcome == "answer"
    # the same results untrimmed are refused by the assistant (spec §A.2: over 100 KB is a 400)
    with pytest.raises(AssistantHTTPError) as err:
        relay_to(base, FakeProvider(big), max_request_bytes=400_000).send("How do I reset my password?")
    assert err.value.details["status"] == 400


def test_an_unknown_or_deleted_session_is_session_not_found(real: tuple[str, Any]) -> None:
    base, _ = real
    relay = relay_to(base, FakeProvider())
    sid = relay.client.create_session()
    assert relay.send("How do I set up the VPN?", session_id=sid).response["context"]["global"]["session_id"] == sid
    deleted = httpx.delete(
        f"{base}{MESSAGE_PATH.rsplit('/', 1)[0]}/sessions/{sid}?version=2024-08-25",
        headers={"X-API-Key": "key-admin-0001"},
    )
    assert deleted.status_code == 200
    alices = relay_to(base, FakeProvider(), auth=ApiKeyHeader("key-alice-0001")).client.create_session()
    for gone in (sid, "no-such-session", alices):  # deleted, never created, another caller's
        with pytest.raises(SessionNotFound) as err:
            relay.send("And the expense reports?", session_id=gone)
        assert err.value.status == 404 and err.value.code == "session_not_found"
        assert err.value.details == {"resource": "session", "assistant_code": "not_found"}
        with pytest.raises(SessionNotFound):
            list(relay.stream("And the expense reports?", session_id=gone))


def test_a_404_that_is_not_about_the_session_stays_an_assistant_error(real: tuple[str, Any], scripted: Any) -> None:
    base, _ = real
    wrong = Relay(
        AssistantClient(base + "/v2/assistants/no-such-assistant/environments/default/message", auth=ADMIN),
        FakeProvider(),
    )
    with pytest.raises(AssistantHTTPError) as err:
        wrong.send("hello", session_id="no-such-session")
    assert err.value.status == 502 and err.value.details == {"status": 404, "assistant_code": "not_found"}
    url, _ = scripted([{"error": "Resource not found", "code": 404}], status=404)
    with pytest.raises(AssistantHTTPError):
        Relay(AssistantClient(url), FakeProvider()).send("hello", session_id="s-1")


def test_watsonx_invalid_session_is_session_not_found(scripted: Any) -> None:
    url, fake = scripted([{"error": "Invalid Session", "code": 404}], status=404)
    with pytest.raises(SessionNotFound) as err:
        Relay(AssistantClient(url), FakeProvider()).send("hello", session_id="s-1")
    assert err.value.details == {"resource": "session"}
    assert fake.paths[0].startswith("/v2/assistants/A/environments/E/sessions/s-1/message?")
    with pytest.raises(AssistantHTTPError):  # without a session the same answer is the assistant's problem
        Relay(AssistantClient(url), FakeProvider()).send("hello")


def test_streaming_round_trip(real: tuple[str, Any]) -> None:
    base, services = real
    provider = ServicesProvider(services, Scope(principal=Principal(user_id="admin", admin=True)))
    events = list(relay_to(base, provider).stream("How do I reset my password?"))
    names = [n for n, _ in events]
    assert names[0] == "relay_search" and names[-2:] == ["final_response", "relay_end"]
    assert "partial_item" in names and "complete_item" in names
    deltas = "".join(p["text"] for n, p in events if n == "partial_item")
    complete = next(p for n, p in events if n == "complete_item")
    assert deltas == complete["text"] and complete["response_type"] == "conversation_search"
    assert events[-1][1]["outcome"] == "answer"


@pytest.fixture
def scripted() -> Iterator[Any]:
    servers: list[ServerThread] = []

    def start(script: Any, status: int = 200) -> tuple[str, ScriptedAssistant]:
        fake = ScriptedAssistant(script, status)
        srv = ServerThread(fake).__enter__()
        servers.append(srv)
        return srv.base + "/v2/assistants/A/environments/E/message", fake

    yield start
    for srv in servers:
        srv.__exit__()


def test_a_provider_that_fails_or_answers_garbage(real: tuple[str, Any], scripted: Any) -> None:
    base, _ = real
    with pytest.raises(RelaySearchFailed) as failed:
        relay_to(base, HttpSearchProvider(base + "/v1/no-such-route", auth=ADMIN)).send("vpn")
    assert failed.value.details["status"] == 404
    for answer, path in (
        ({"results": []}, "$.search_results"),
        ({"search_results": [{"title": 1, "body": ""}]}, "$[0].title"),
        ("not json", None),
    ):
        search_url, _ = scripted([answer])
        with pytest.raises(InvalidSearchResults) as err:
            relay_to(base, HttpSearchProvider(search_url)).send("vpn")
        assert err.value.details.get("path") == path


def test_several_actions_over_http(scripted: Any) -> None:
    url, fake = scripted(
        [search_reply("vpn", "expenses", extra_actions=[{"type": "navigate", "url": "x"}]), answer_reply("Both.")]
    )
    provider = FakeProvider(lambda q: [{"title": f"{q} {i}", "body": f"{q} body {i}"} for i in range(2)])
    result = Relay(AssistantClient(url), provider).send("vpn and expenses")
    assert result.text == "Both." and [c[0] for c in provider.calls] == ["vpn", "expenses"]
    sent = fake.requests[1]["input"]["search_results"]
    assert [r["title"] for r in sent] == ["vpn 0", "expenses 0", "vpn 1", "expenses 1"]
    assert fake.requests[1]["context"] == {"turn": 2} and fake.requests[1]["user_id"] == "u-echo"
    assert all(p.startswith("/v2/assistants/A/environments/E/message?version=") for p in fake.paths)


def test_a_looping_assistant_over_http(scripted: Any) -> None:
    url, fake = scripted([search_reply("again")])
    with pytest.raises(SearchLoopExceeded):
        Relay(AssistantClient(url), FakeProvider([{"title": "t", "body": "b"}])).send("loop")
    assert len(fake.requests) == 6  # the text message and five search_results messages


@pytest.mark.parametrize("reply", ["<html><body>Bad gateway</body></html>", b"\xff\xfe", '{"output": 3}'])
def test_garbage_over_http(scripted: Any, reply: Any) -> None:
    url, _ = scripted([reply])
    with pytest.raises(MalformedAssistantResponse):
        Relay(AssistantClient(url), FakeProvider()).send("hello")


def test_no_query_and_unknown_types_over_http(scripted: Any) -> None:
    url, _ = scripted([{"output": {"actions": [{"type": "search", "filter": "x"}]}}])
    with pytest.raises(SearchActionInvalid):
        Relay(AssistantClient(url), FakeProvider()).send("hello")
    url, _ = scripted(
        [
            {
                "output": {
                    "generic": [{"response_type": "text", "text": "ok"}],
                    "actions": [{"type": "mystery"}, {"kind": "search"}],
                }
            }
        ]
    )
    provider = FakeProvider()
    assert Relay(AssistantClient(url), provider).send("hello").text == "ok" and provider.calls == []


def test_an_assistant_that_is_down(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    client = AssistantClient(f"http://127.0.0.1:{port}{MESSAGE_PATH}", retries=2, backoff=0.01)
    with pytest.raises(AssistantUnavailable) as err:
        Relay(client, FakeProvider()).send("hello")
    assert err.value.details["attempts"] == 3
