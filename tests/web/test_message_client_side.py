"""Client-side search (spec §A.2): the search action, the search_results message, sessions shared by two
app instances over one data directory (two gunicorn workers), stateless round trips, expiry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.conversation.sessions import SessionStore
from assistant_bridge.errors import NotFound
from assistant_bridge.validation import validate
from tests.conftest import KEYS, headers_for
from tests.conversation.helpers import action, build, checked, only_item, sessions_url, turn_event, url

pytestmark = pytest.mark.unit
CLIENT = "client-side"
RESULTS = [
    {
        "result_metadata": {"score": 0.92, "image_url": "https://example.com/vpn.png"},
        "title": "VPN setup",
        "body": "Full VPN guide. Install the VPN client. Sign in with your company account.",
        "url": "https://example.com/vpn",
        "highlight": {"body": ["Install the VPN client and sign in first."]},
    },
    {"result_metadata": {"score": 0.4}, "title": "Expenses", "body": "Expense reports are due within 30 days."},
]


def results_message(results: Any = RESULTS, text: str | None = None, **extra: Any) -> dict[str, Any]:
    inp: dict[str, Any] = {"message_type": "search_results", "search_results": results, "options": {"debug": True}}
    if text is not None:
        inp["text"] = text
    return {"input": inp, "user_id": "wxa_user", **extra}


def text_message(text: str) -> dict[str, Any]:
    return {"input": {"message_type": "text", "text": text}, "user_id": "wxa_user"}


def test_text_turn_hands_the_search_to_the_client(tmp_path: Path) -> None:
    app, _, _ = build(tmp_path)
    body = checked(app.test_client().post(url(CLIENT), json=text_message("how do I set up the VPN")))
    assert body["output"]["generic"] == []
    assert body["output"]["actions"] == [action("how do I set up the VPN")]
    assert body["context"]["integrations"]["assistant_bridge"]["pending_search"]["query"] == "how do I set up the VPN"


def test_filter_and_metadata_of_the_assistant_go_into_the_action(tmp_path: Path) -> None:
    assistants = {"web": {"search": {"type": "client", "filter": "lang:en", "metadata": {"index": "kb"}}}}
    app, _, _ = build(tmp_path, assistants=assistants)
    body = checked(app.test_client().post(url("web"), json=text_message("vpn")))
    assert body["output"]["actions"] == [action("vpn", filter="lang:en", metadata={"index": "kb"})]


def test_session_round_trip_across_two_app_instances_sharing_a_data_dir(tmp_path: Path) -> None:
    worker1, _, _ = build(tmp_path)
    worker2, _, _ = build(tmp_path)  # same data dir: the same SQLite file, another app and connection
    c1, c2 = worker1.test_client(), worker2.test_client()
    created = c1.post(sessions_url(CLIENT))
    assert created.status_code == 201
    validate("message_session", created.get_json())
    sid = created.get_json()["session_id"]

    body = checked(c1.post(url(CLIENT, session=sid), json=text_message("how do I set up the VPN")))
    assert body["output"]["actions"][0]["query"] == "how do I set up the VPN"
    assert body["context"]["global"]["session_id"] == sid and "assistant_bridge" not in body["context"]

    body = checked(c2.post(url(CLIENT, session=sid), json=results_message()))  # the other worker answers
    item = only_item(body)
    assert item["response_type"] == "conversation_search"
    assert item["text"].startswith("Install the VPN client")  # the highlight, not the body, was the snippet
    assert turn_event(body)["callout"]["search"]["query"] == "how do I set up the VPN"
    first = item["search_results"][0]
    assert first["result_metadata"]["image_url"] == "https://example.com/vpn.png"  # custom metadata passed through
    assert first["result_metadata"]["document_retrieval_source"] == "client_search"
    assert first["highlight"] == {"body": ["Install the VPN client and sign in first."]}
    assert len(item["search_results"]) == 2 and body["context"]["global"]["system"]["turn_count"] == 2
    assert body["user_id"] == "wxa_user"

    # the pending action was answered: another search_results message needs input.text now
    err = checked(c1.post(url(CLIENT, session=sid), json=results_message()), 400)
    assert "pending search action" in err["error"]["message"]
    assert checked(c1.post(url(CLIENT, session=sid), json=results_message(text="vpn")))

    assert c2.delete(sessions_url(CLIENT, session=sid)).status_code == 200
    assert checked(c1.post(url(CLIENT, session=sid), json=text_message("vpn")), 404)["error"]["code"] == "not_found"
    assert c1.delete(sessions_url(CLIENT, session=sid)).status_code == 404


def test_stateless_search_results_take_the_query_from_input_text(tmp_path: Path) -> None:
    app, _, _ = build(tmp_path)
    client = app.test_client()
    body = checked(client.post(url(CLIENT), json=results_message(text="vpn client")))
    assert only_item(body)["response_type"] == "conversation_search"
    assert turn_event(body)["callout"]["search"]["query"] == "vpn client"
    err = checked(client.post(url(CLIENT), json=results_message()), 400)
    assert "input.text" in err["error"]["message"]
    # the default assistant takes client results too (its own backend is not searched)
    assert only_item(checked(client.post(url(), json=results_message(text="vpn"))))["text"].startswith("Install")


def test_stateless_client_echoing_the_context_needs_no_text(tmp_path: Path) -> None:
    app, _, _ = build(tmp_path)
    client = app.test_client()
    first = checked(client.post(url(CLIENT), json=text_message("vpn setup")))
    body = checked(client.post(url(CLIENT), json=results_message(context=first["context"])))
    assert turn_event(body)["callout"]["search"]["query"] == "vpn setup"
    assert body["context"]["global"]["system"]["turn_count"] == 2


def test_empty_results_say_the_no_results_message(tmp_path: Path) -> None:
    app, _, _ = build(tmp_path)
    body = checked(app.test_client().post(url(CLIENT), json=results_message(results=[], text="vpn")))
    assert only_item(body)["text"].startswith("I searched my knowledge base")


def test_search_results_over_100_kb_are_a_400(tmp_path: Path) -> None:
    app, _, _ = build(tmp_path)
    big = [{"title": f"r{i}", "body": "x" * 2000} for i in range(60)]
    err = checked(app.test_client().post(url(CLIENT), json=results_message(results=big, text="q")), 400)
    assert err["error"]["code"] == "validation_error" and "100000" in err["error"]["message"]


def test_sessions_belong_to_their_caller_and_assistant(tmp_path: Path) -> None:
    app, _, _ = build(tmp_path, auth={"keys": KEYS})
    client = app.test_client()
    sid = client.post(sessions_url(CLIENT), headers=headers_for("alice")).get_json()["session_id"]
    assert checked(client.post(url(CLIENT, session=sid), json=text_message("vpn"), headers=headers_for("alice")))
    for headers, path in (
        (headers_for("bob"), url(CLIENT, session=sid)),
        (headers_for("alice"), url("default", session=sid)),
        (headers_for("service", end_user="t1"), url(CLIENT, session=sid)),
    ):
        err = checked(client.post(path, json=text_message("vpn"), headers=headers), 404)
        assert "session" in err["error"]["message"]
    assert client.delete(sessions_url(CLIENT, session=sid), headers=headers_for("bob")).status_code == 404
    assert client.post(sessions_url(CLIENT)).status_code == 401


def test_sessions_expire_after_their_inactivity_timeout(tmp_path: Path) -> None:
    now = [1_000_000.0]
    assistants = {CLIENT: {"search": {"type": "client"}, "session_ttl_seconds": 60}}
    app, services, _ = build(tmp_path, assistants=assistants, clock=lambda: now[0])
    client = app.test_client()
    sid = client.post(sessions_url(CLIENT)).get_json()["session_id"]
    now[0] += 50
    assert checked(client.post(url(CLIENT, session=sid), json=text_message("vpn")))  # pushes expiry to +110
    now[0] += 50
    assert checked(client.post(url(CLIENT, session=sid), json=results_message()))
    now[0] += 61
    assert checked(client.post(url(CLIENT, session=sid), json=text_message("vpn")), 404)
    store = SessionStore(services.store, lambda: now[0])
    assert store.purge_expired() == 1
    with pytest.raises(NotFound):
        store.get(sid, CLIENT, "default", "anonymous|local|")


def test_session_create_accepts_an_optional_body(tmp_path: Path) -> None:
    app, _, _ = build(tmp_path)
    client = app.test_client()
    assert client.post(sessions_url(CLIENT), json={"analytics": {}}).status_code == 201
    assert checked(client.post(sessions_url(CLIENT), json=[1]), 400)
    assert checked(client.post(sessions_url("nobody")), 404)
