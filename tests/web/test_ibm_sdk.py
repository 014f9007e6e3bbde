"""The official IBM Watson SDK (``ibm-watson``), unmodified, against a served instance (gunicorn): every
``/message``, ``message_stream`` and session call parses into the SDK's typed models, with the specific
subclass for each item and turn event (never a base class or a failed discriminator), field by field; the
client-side search round trip works through the SDK alone, its context round-tripped through the SDK's
context model; errors read as a message, not a dict."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.reliability.served import REPO
from tests.served_process import serve_command, served_process

pytestmark = [pytest.mark.integration, pytest.mark.slow]
ibm = pytest.importorskip("ibm_watson.assistant_v2", reason="the test extra installs ibm-watson")
KEY = "watsonx-assistant-key-01"
ADMIN = "admin-key-000000001"
VERSION = "2024-08-25"
DOCS = [
    (
        "Reset your password",
        "To reset your password open the self-service portal and choose Forgot "
        "password. A verification code is sent to your phone by SMS.",
    ),
    ("VPN", "Install the VPN client from the software centre, then sign in with your badge number."),
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: Any) -> Iterator[str]:
    work = tmp_path_factory.mktemp("ibm-sdk")
    config = {
        "backend": {"kind": "memory"},
        "embedder": {"kind": "hashing"},
        "auth": {"keys": [{"key": KEY, "user_id": "watsonx"}, {"key": ADMIN, "user_id": "admin", "admin": True}]},
        "assistants": {"default": {}, "client": {"search": {"type": "client"}}},
    }
    cmd, base = serve_command(work, config)
    with served_process(cmd, work / "serve.log", base + "/healthz", timeout=240, cwd=REPO):
        for title, text in DOCS:
            resp = httpx.post(
                base + "/v1/documents",
                json={"title": title, "text": text, "visibility": "public"},
                headers={"X-API-Key": ADMIN},
                timeout=60,
            )
            assert resp.status_code == 201, resp.text
        yield base


@pytest.fixture
def assistant(served: str) -> Any:
    from ibm_cloud_sdk_core.authenticators import BasicAuthenticator

    client = ibm.AssistantV2(version=VERSION, authenticator=BasicAuthenticator("apikey", KEY))
    client.set_service_url(served)
    return client


def _answer(item: Any) -> Any:
    assert type(item).__name__ == "RuntimeResponseGenericRuntimeResponseTypeConversationalSearch"
    assert item.response_type == "conversation_search" and "reset your password" in item.text.lower()
    assert item.citations_title and item.disclaimer is not None and item.response_length_option == "moderate"
    assert item.citations and all(isinstance(c, ibm.ResponseGenericCitation) for c in item.citations)
    cited = item.search_results[item.citations[0].search_result_index]
    assert isinstance(cited, ibm.SearchResults) and cited.title == "Reset your password" and cited.id
    assert isinstance(cited.result_metadata, ibm.SearchResultsResultMetadata) and cited.result_metadata.score > 0
    assert item.citations[0].ranges and item.citations[0].ranges[0].start == 0
    assert isinstance(item.confidence_scores, ibm.ResponseGenericConfidenceScores)
    assert 0 <= item.confidence_scores.pre_gen <= 1 and item.confidence_scores.threshold is not None
    return item


def test_stateless_message_with_debug(assistant: Any) -> None:
    result = assistant.message_stateless(
        "default", "default", input={"text": "How do I reset my password?", "options": {"debug": True}}
    ).get_result()
    resp = ibm.StatelessMessageResponse.from_dict(result)
    _answer(resp.output.generic[0])
    event = resp.output.debug.turn_events[0]
    assert type(event).__name__ == "MessageOutputDebugTurnEventTurnEventGenerativeAICalled"
    task = event.generative_ai
    assert type(task).__name__ == "GenerativeAITaskContentGroundedAnswering" and task.is_idk_response is False
    assert task.confidence_scores.pre_gen is not None and task.inferred_query
    assert resp.context.global_.system.turn_count == 1


def test_an_unanswerable_question_is_a_text_item(assistant: Any) -> None:
    result = assistant.message_stateless(
        "default",
        "default",
        input={"text": "What is the airspeed velocity of an unladen swallow?", "options": {"debug": True}},
    ).get_result()
    resp = ibm.StatelessMessageResponse.from_dict(result)
    assert type(resp.output.generic[0]).__name__ == "RuntimeResponseGenericRuntimeResponseTypeText"
    assert resp.output.debug.turn_events[0].generative_ai.is_idk_response is True


def test_sessions(assistant: Any) -> None:
    session = ibm.SessionResponse.from_dict(assistant.create_session("default", "default").get_result())
    result = assistant.message(
        "default", "default", session.session_id, input={"text": "How do I reset my password?"}
    ).get_result()
    resp = ibm.StatefulMessageResponse.from_dict(result)
    _answer(resp.output.generic[0])
    assert resp.context.global_.session_id == session.session_id
    assert assistant.delete_session("default", "default", session.session_id).get_status_code() == 200


def _stream(response: Any) -> list[tuple[str, Any]]:
    events, name, data = [], None, []
    for raw in response.iter_lines(decode_unicode=True):
        line = raw or ""
        if line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())
        elif not line and name:
            events.append((name, json.loads("\n".join(data))))
            name, data = None, []
    return events


def test_streams(assistant: Any) -> None:
    stateless = _stream(
        assistant.message_stream_stateless(
            "default", "default", input={"text": "How do I reset my password?"}, stream=True
        ).get_result()
    )
    session = assistant.create_session("default", "default").get_result()["session_id"]
    stateful = _stream(
        assistant.message_stream(
            "default", "default", session, input={"text": "How do I reset my password?"}, stream=True
        ).get_result()
    )
    for events, prefix, final in (
        (
            stateless,
            "StatelessMessageStreamResponse",
            ibm.StatelessMessageStreamResponseStatelessMessageStreamFinalResponse,
        ),
        (stateful, "MessageStreamResponse", ibm.MessageStreamResponseStatefulMessageStreamFinalResponse),
    ):
        names = [n for n, _ in events]
        assert names[-1] == "final_response" and "partial_item" in names and "complete_item" in names
        for name, data in events[:-1]:
            model = getattr(ibm, f"{prefix}MessageStream{''.join(w.title() for w in name.split('_'))}").from_dict(data)
            item = model.partial_item if name == "partial_item" else model.complete_item
            assert item.streaming_metadata.id == 1
        done = final.from_dict(events[-1][1])
        meta = done.final_response.output.streaming_metadata  # required; the stateless model types it oddly
        assert meta is not None and (prefix != "MessageStreamResponse" or meta.streaming_metadata.id == 1)
        _answer(
            ibm.RuntimeResponseGeneric.from_dict(done.final_response.output.generic[0])
            if isinstance(done.final_response.output.generic[0], dict)
            else done.final_response.output.generic[0]
        )


def test_the_client_side_search_round_trip_through_the_sdk_alone(assistant: Any, served: str) -> None:
    first = ibm.StatelessMessageResponse.from_dict(
        assistant.message_stateless("client", "default", input={"text": "How do I reset my password?"}).get_result()
    )
    action = first.output.actions[0]
    assert action.type == "search" and action.parameters["query"] == "How do I reset my password?"
    found = httpx.post(
        served + "/v1/search", json={"query": action.parameters["query"]}, headers={"X-API-Key": KEY}
    ).json()["search_results"]
    # the context goes back as the SDK's model made it: nothing of ours outside what the model keeps
    context = ibm.StatelessMessageContext.from_dict(first.context.to_dict())
    second = assistant.message_stateless(
        "client", "default", context=context, input={"message_type": "search_results", "search_results": found}
    ).get_result()
    _answer(ibm.StatelessMessageResponse.from_dict(second).output.generic[0])


def test_errors_read_as_messages(assistant: Any) -> None:
    from ibm_cloud_sdk_core import ApiException

    with pytest.raises(ApiException) as caught:
        assistant.message_stateless("nope", "default", input={"text": "hi"})
    assert caught.value.status_code == 404 and caught.value.message == "unknown assistant 'nope'"
