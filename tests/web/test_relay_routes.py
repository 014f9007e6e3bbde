"""``/v1/relay/message``, ``/v1/relay/message_stream`` and ``/v1/relay/sessions``: the relay for webchat
backends, in-process against this service's ``client-side`` assistant by default."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.client.sse import parse_sse
from assistant_bridge.errors import ConfigurationError
from assistant_bridge.validation import validate
from tests.conftest import KEYS, headers_for
from tests.relay.helpers import ScriptedAssistant, ServerThread, answer_reply, build_app, search_reply

QUESTION = "How do I reset my password?"


def events(resp: Any) -> list[tuple[str, Any]]:
    assert resp.status_code == 200, resp.get_data(as_text=True)
    assert resp.mimetype == "text/event-stream"
    assert resp.headers["Cache-Control"] == "no-cache" and resp.headers["X-Accel-Buffering"] == "no"
    out = []
    for ev in parse_sse([resp.get_data()]):
        data = json.loads(ev.data)
        validate("relay_stream_event", data)
        assert list(data) == [ev.event]
        out.append((ev.event, data[ev.event]))
    return out


@pytest.mark.unit
def test_message_relays_to_the_built_in_client_side_assistant(tmp_path: Path) -> None:
    app, _ = build_app(tmp_path)
    c = app.test_client()
    resp = c.post("/v1/relay/message", json={"text": QUESTION})
    body = resp.get_json()
    assert resp.status_code == 200, body
    validate("relay_message_response", body)
    (item,) = body["output"]["generic"]
    assert item["response_type"] == "conversation_search" and "reset your password" in item["text"]
    assert "debug" not in body["output"]  # asked for to classify, then removed
    relay = body["relay"]
    assert relay["outcome"] == "answer" and relay["rounds"] == 1
    assert relay["searches"][0]["query"] == QUESTION and relay["search_results"]
    # a stateless conversation: the context goes back with the next message
    resp = c.post("/v1/relay/message", json={"text": "And expense reports?", "context": body["context"]})
    assert resp.get_json()["context"]["global"]["system"]["turn_count"] == 4


@pytest.mark.unit
def test_debug_is_kept_when_asked_for(tmp_path: Path) -> None:
    app, _ = build_app(tmp_path)
    body = app.test_client().post("/v1/relay/message", json={"text": QUESTION, "options": {"debug": True}}).get_json()
    assert body["output"]["debug"]["turn_events"][0]["event"] == "generative_ai_called"


@pytest.mark.unit
def test_i_dont_know_is_named(tmp_path: Path) -> None:
    app, _ = build_app(tmp_path, pre=0.05)  # the pre-generation filter rejects every result set
    body = app.test_client().post("/v1/relay/message", json={"text": QUESTION}).get_json()
    assert body["relay"]["outcome"] == "idk"
    assert body["output"]["generic"][0]["response_type"] == "text"


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"text": ""},
        {"text": "   "},
        {"text": "q", "extra": 1},
        {"text": "q", "options": {"debug": "yes"}},
        {"text": "x" * 3000},
    ],
)
@pytest.mark.unit
def test_bad_requests(tmp_path: Path, body: dict[str, Any]) -> None:
    app, _ = build_app(tmp_path, docs=[])
    resp = app.test_client().post("/v1/relay/message", json=body)
    assert resp.status_code == 400 and resp.get_json()["error"]["code"] == "validation_error"


@pytest.mark.unit
def test_callers_are_authenticated_and_searches_stay_in_their_scope(tmp_path: Path) -> None:
    app, _ = build_app(tmp_path, docs=[], auth={"keys": KEYS})
    c = app.test_client()
    assert c.post("/v1/relay/message", json={"text": QUESTION}).status_code == 401
    secret = {"title": "Bob's VPN notes", "text": "The zebra VPN gateway password rotates every Tuesday."}
    assert c.post("/v1/documents", json=secret, headers=headers_for("bob")).status_code == 201

    def found(who: str) -> list[str]:
        resp = c.post("/v1/relay/message", json={"text": "zebra VPN gateway"}, headers=headers_for(who))
        assert resp.status_code == 200, resp.get_json()
        return [r["title"] for r in resp.get_json()["relay"]["search_results"]]

    assert found("bob") == ["Bob's VPN notes"]
    assert found("alice") == []  # alice never sees bob's private document, through the relay either
    tenant_doc = {"title": "Tenant nine", "text": "The okapi runbook lives in the tenant nine wiki."}
    resp = c.post("/v1/documents", json=tenant_doc, headers=headers_for("service", end_user="tenant-9"))
    assert resp.status_code == 201

    def tenant_found(tenant: str) -> list[str]:
        resp = c.post(
            "/v1/relay/message", json={"text": "okapi runbook"}, headers=headers_for("service", end_user=tenant)
        )
        assert resp.status_code == 200, resp.get_json()
        return [r["title"] for r in resp.get_json()["relay"]["search_results"]]

    assert "Tenant nine" in tenant_found("tenant-9")
    assert "Tenant nine" not in tenant_found("tenant-8")  # tenant isolation holds through the relay


@pytest.mark.unit
def test_stream_relays_events(tmp_path: Path) -> None:
    app, _ = build_app(tmp_path)
    evs = events(app.test_client().post("/v1/relay/message_stream", json={"text": QUESTION}))
    names = [n for n, _ in evs]
    assert names[0] == "relay_search" and names[-2:] == ["final_response", "relay_end"]
    assert evs[0][1]["searches"][0]["query"] == QUESTION
    partial = "".join(p["text"] for n, p in evs if n == "partial_item")
    complete = next(p for n, p in evs if n == "complete_item")
    assert partial == complete["text"] and complete["citations"]
    assert "debug" not in evs[-2][1]["output"] and evs[-1][1]["outcome"] == "answer"


@pytest.mark.integration
def test_stream_reports_failures_in_band_and_message_as_status(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    relay = {"url": f"http://127.0.0.1:{port}/v2/assistants/A/environments/E/message", "retries": 0}
    app, _ = build_app(tmp_path, docs=[], relay=relay)
    c = app.test_client()
    evs = events(c.post("/v1/relay/message_stream", json={"text": "hello"}))
    assert evs == [("error", {"code": "assistant_unavailable", "message": evs[0][1]["message"]})]
    resp = c.post("/v1/relay/message", json={"text": "hello"})
    assert resp.status_code == 503 and resp.get_json()["error"]["code"] == "assistant_unavailable"


@pytest.mark.integration
def test_an_external_assistant_gets_its_own_credentials_not_the_callers(tmp_path: Path) -> None:
    fake = ScriptedAssistant([search_reply("vpn"), answer_reply("Install the client.")])
    with ServerThread(fake) as srv:
        relay = {
            "url": srv.base + "/v2/assistants/A/environments/E/message",
            "auth": {"type": "bearer", "token": "assistant-token"},
            "stream": False,
        }
        app, _ = build_app(tmp_path, relay=relay, auth={"keys": KEYS})
        resp = app.test_client().post("/v1/relay/message", json={"text": "vpn"}, headers=headers_for("alice"))
    assert resp.status_code == 200, resp.get_json()
    assert resp.get_json()["output"]["generic"][0]["text"] == "Install the client."
    assert all(h.get("Authorization") == "Bearer assistant-token" for h in fake.headers)
    assert all("X-Api-Key" not in h and "X-API-Key" not in h for h in fake.headers)
    assert fake.requests[0]["user_id"] == "alice" and fake.requests[0]["input"]["options"] == {"debug": True}
    assert fake.requests[1]["input"]["message_type"] == "search_results"


@pytest.mark.unit
def test_sessions(tmp_path: Path) -> None:
    app, _ = build_app(tmp_path)
    c = app.test_client()
    resp = c.post("/v1/relay/sessions")
    assert resp.status_code == 201
    sid = resp.get_json()["session_id"]
    body = c.post("/v1/relay/message", json={"text": QUESTION, "session_id": sid}).get_json()
    assert body["context"]["global"]["session_id"] == sid and body["relay"]["outcome"] == "answer"
    for route in ("/v1/relay/message", "/v1/relay/message_stream"):
        resp = c.post(route, json={"text": QUESTION, "session_id": "no-such-session"})
        assert resp.status_code == 404 and resp.mimetype == "application/json"
        error = resp.get_json()["error"]
        validate("error", resp.get_json())
        assert error["code"] == "session_not_found" and "unknown or expired session" in error["message"]


@pytest.mark.integration
def test_an_unknown_session_of_the_assistant_over_http_is_a_404(tmp_path: Path) -> None:
    assistant, _ = build_app(tmp_path / "assistant", auth={"keys": KEYS})
    with ServerThread(assistant) as srv:
        relay = {
            "url": srv.base + "/v2/assistants/client-side/environments/default/message",
            "auth": {"type": "apikey", "apikey": "key-admin-0001"},
        }
        app, _ = build_app(tmp_path / "relay", docs=[], relay=relay)
        c = app.test_client()
        sid = c.post("/v1/relay/sessions").get_json()["session_id"]
        assert c.post("/v1/relay/message", json={"text": QUESTION, "session_id": sid}).status_code == 200
        evs = events(c.post("/v1/relay/message_stream", json={"text": QUESTION, "session_id": sid}))
        assert evs[-1][0] == "relay_end"
        for route in ("/v1/relay/message", "/v1/relay/message_stream"):
            resp = c.post(route, json={"text": QUESTION, "session_id": "expired-or-never-created"})
            assert resp.status_code == 404, resp.get_data(as_text=True)
            assert resp.get_json()["error"]["code"] == "session_not_found"


@pytest.mark.integration
def test_a_session_that_expires_during_a_streamed_turn_is_reported_in_band(tmp_path: Path) -> None:
    def script(body: dict[str, Any], n: int) -> Any:
        if n == 0:
            return search_reply("vpn")
        fake.status = 404  # gone between the two messages of the turn
        return {"error": "Invalid Session", "code": 404}

    fake = ScriptedAssistant(script)
    with ServerThread(fake) as srv:
        relay = {"url": srv.base + "/v2/assistants/A/environments/E/message", "stream": False}
        app, _ = build_app(tmp_path, docs=[], relay=relay)
        evs = events(app.test_client().post("/v1/relay/message_stream", json={"text": "vpn", "session_id": "s-1"}))
    assert [n for n, _ in evs] == ["relay_search", "error"]
    assert evs[1][1]["code"] == "session_not_found"


@pytest.mark.parametrize(
    "relay, message",
    [
        ({"max_rounds": 0}, "relay.max_rounds must be from 1"),
        ({"auth": {"type": "bearer", "token": "t"}}, "relay.auth needs relay.url"),
        ({"url": "ftp://x"}, "relay.url must be an http"),
        ({"colour": "blue"}, "unknown setting relay.colour"),
        ({"search": {"type": "server"}}, "relay.search.url must be"),
        ({"url": "http://a/message", "auth": {"type": "iam"}}, "relay.auth.apikey is required"),
    ],
)
@pytest.mark.unit
def test_bad_relay_settings_stop_the_app_at_start_up(tmp_path: Path, relay: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        build_app(tmp_path, docs=[], relay=relay)
