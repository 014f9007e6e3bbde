"""POST .../message_stream: SSE event order and content, verify-then-stream (default) versus
stream-then-verify with retraction, errors before and during the stream, heartbeats."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.generators import FakeGenerator
from assistant_bridge.streaming.pump import EventPump
from tests.conversation.helpers import action, build, checked, events, ingest, sessions_url, url

pytestmark = pytest.mark.unit
STREAM_THEN_VERIFY = {"default": {"conversational_search": {"streaming": "stream_then_verify"}}}


def stream(client: Any, text: str, path: str | None = None, **options: Any) -> Any:
    body = {"input": {"message_type": "text", "text": text, "options": options}}
    return client.post(path or url(stream=True), json=body)


def texts(evs: list[tuple[str, dict[str, Any]]], stream_id: int = 1) -> str:
    return "".join(
        p["text"] for name, p in evs if name == "partial_item" and p["streaming_metadata"]["id"] == stream_id
    )


@pytest.fixture
def client(tmp_path: Path) -> Any:
    app, _, _ = build(tmp_path)
    c = app.test_client()
    ingest(c)
    return c


def test_answer_streams_partials_then_the_complete_item_then_the_final_response(client: Any) -> None:
    resp = stream(client, "how do I reset my password", debug=True)
    assert resp.headers["Cache-Control"] == "no-cache" and resp.headers["X-Accel-Buffering"] == "no"
    evs = events(resp)
    names = [n for n, _ in evs]
    assert names[-2:] == ["complete_item", "final_response"] and set(names[:-2]) == {"partial_item"}
    assert len(names) > 3  # the text arrives in several pieces
    complete, final = evs[-2][1], evs[-1][1]
    assert complete["response_type"] == "conversation_search" and complete["streaming_metadata"] == {"id": 1}
    assert texts(evs) == complete["text"] and "self-service portal" in complete["text"]
    assert all(p["response_type"] == "conversation_search" for n, p in evs if n == "partial_item")
    checked_final = dict(complete)
    checked_final.pop("streaming_metadata")
    assert final["output"]["generic"] == [checked_final]
    assert final["output"]["debug"]["turn_events"][0]["outcome"] == "answer"
    plain = checked(client.post(url(), json={"input": {"text": "how do I reset my password"}}))
    assert plain["output"]["generic"] == final["output"]["generic"]


def test_verify_then_stream_never_sends_a_rejected_answer(tmp_path: Path) -> None:
    app, _, _ = build(tmp_path, post=0.1, generator=FakeGenerator(reword=True))  # the post-filter rejects every answer
    c = app.test_client()
    ingest(c)
    evs = events(stream(c, "how do I reset my password", debug=True))
    raw = "".join(str(p) for _, p in evs[:-1])
    assert "self-service portal" not in raw  # the generated (rejected) text was never streamed
    complete = evs[-2][1]
    assert complete["response_type"] == "text" and complete["text"].startswith("I'm not confident")
    assert texts(evs) == complete["text"]
    assert evs[-1][1]["output"]["debug"]["turn_events"][0]["callout"]["idk_reason_code"] == "response_confidence"


def test_stream_then_verify_retracts_a_rejected_answer_with_the_same_id(tmp_path: Path) -> None:
    app, _, _ = build(tmp_path, post=0.1, generator=FakeGenerator(reword=True), assistants=STREAM_THEN_VERIFY)
    c = app.test_client()
    ingest(c)
    evs = events(stream(c, "how do I reset my password"))
    assert "self-service portal" in texts(evs)  # streamed before the check...
    name, complete = evs[-2]
    assert name == "complete_item" and complete["streaming_metadata"] == {"id": 1}
    assert complete["response_type"] == "text" and complete["text"].startswith("I'm not confident")  # ...replaced
    assert evs[-1][1]["output"]["generic"][0]["text"] == complete["text"]


def test_stream_then_verify_streams_the_generators_deltas(tmp_path: Path) -> None:
    app, _, _ = build(tmp_path, assistants=STREAM_THEN_VERIFY)
    c = app.test_client()
    ingest(c)
    evs = events(stream(c, "how do I reset my password"))
    complete = evs[-2][1]
    assert complete["response_type"] == "conversation_search" and texts(evs) == complete["text"]
    partials = [p["text"] for n, p in evs if n == "partial_item"]
    assert max(len(p) for p in partials) <= 8  # FakeGenerator's delta size: these came from generator.stream


def test_generator_failure_midway_ends_with_the_connectivity_item(tmp_path: Path) -> None:
    from assistant_bridge.errors import GeneratorError
    from assistant_bridge.generators import FakeGenerator, GenerationStream

    class Breaks(FakeGenerator):
        def stream(self, query: str, snippets: Any, response_length: Any = "moderate") -> GenerationStream:
            def deltas() -> Iterator[str]:
                yield "To reset "
                raise GeneratorError("connection reset")

            return GenerationStream(deltas(), lambda text: None)  # type: ignore[arg-type,return-value]

    app, _, _ = build(tmp_path, generator=Breaks(), assistants=STREAM_THEN_VERIFY)
    c = app.test_client()
    ingest(c)
    evs = events(stream(c, "how do I reset my password"))
    assert evs[0] == (
        "partial_item",
        {"response_type": "conversation_search", "text": "To reset ", "streaming_metadata": {"id": 1}},
    )
    assert evs[-2][1]["text"].startswith("I might have information") and evs[-2][1]["streaming_metadata"]["id"] == 1
    assert evs[-1][0] == "final_response"


def test_client_side_round_trip_in_a_session_streams_the_action_then_the_answer(tmp_path: Path) -> None:
    app, _, _ = build(tmp_path)
    c = app.test_client()
    sid = c.post(sessions_url("client-side")).get_json()["session_id"]
    evs = events(stream(c, "vpn setup", path=url("client-side", session=sid, stream=True)))
    assert [n for n, _ in evs] == ["final_response"]
    assert evs[0][1]["output"]["actions"] == [action("vpn setup")]
    body = {
        "input": {
            "message_type": "search_results",
            "search_results": [{"title": "VPN", "body": "Install the VPN client before connecting."}],
        }
    }
    evs = events(c.post(url("client-side", session=sid, stream=True), json=body))
    assert evs[-2][1]["response_type"] == "conversation_search" and evs[-1][1]["context"]["global"]["session_id"] == sid


def test_request_errors_come_before_the_stream_as_json(client: Any) -> None:
    resp = stream(client, "x", path=url(session="3f2b1c9e-0000-4000-8000-000000000000", stream=True))
    assert resp.status_code == 404 and resp.mimetype == "application/json"
    resp = client.post(url(stream=True), json={"input": {"message_type": "audio"}})
    assert resp.status_code == 400 and resp.get_json()["error"]["code"] == "validation_error"


def test_heartbeats_while_the_turn_works_and_an_error_event_after_a_crash() -> None:
    def slow() -> Iterator[tuple[str, Any]]:
        time.sleep(0.25)
        yield "complete_item", {"response_type": "text", "text": "done", "streaming_metadata": {"id": 1}}
        raise RuntimeError("boom")

    out = b"".join(EventPump(slow, 0.05, lambda e: {"code": "internal_error", "message": "internal error"}))
    text = out.decode()
    assert text.startswith(": keep-alive\n") and text.count(": keep-alive") >= 2
    assert text.index("event: complete_item") < text.index("event: error")
    assert "boom" not in text and "Traceback" not in text
