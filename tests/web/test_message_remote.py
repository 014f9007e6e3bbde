"""Server-side custom search (spec §A.1) from /message: a real server thread running this project's own
/v1/search with each kind of credential, and a mock transport for the failures (timeout, HTTP 500,
invalid JSON, missing search_results, wrong types, over 100 KB)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from werkzeug.serving import make_server

from tests.conftest import KEYS, make_services, make_settings
from tests.conversation.helpers import ask, build, checked, ingest, only_item, turn_event, url

pytestmark = pytest.mark.unit
CONNECTIVITY = "I might have information that could help address your query"


@pytest.fixture(scope="module")
def search_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """This project's app on 127.0.0.1, with the five test credentials and three admin-published documents."""
    from assistant_bridge.web.app import create_app

    settings = make_settings(tmp_path_factory.mktemp("server"), auth={"keys": KEYS})
    app = create_app(settings, make_services(settings))
    with app.test_client() as c:
        ingest(c, headers={"X-API-Key": "key-admin-0001"}, visibility="public")
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/v1/search"
    server.shutdown()
    thread.join(5)


def remote(server_url: str, **server: Any) -> dict[str, Any]:
    return {"kb": {"search": {"type": "server", "metadata": {"limit": 3}, "server": {"url": server_url, **server}}}}


@pytest.mark.parametrize(
    "auth",
    [
        {"auth_type": "apikey", "apikey": "key-alice-0001"},
        {"auth_type": "apikey", "apikey": "key-alice-0001", "apikey_header": "X-API-Key"},
        {"auth_type": "bearer", "token": "key-service-01"},
        {"auth_type": "basic", "username": "carol", "password": "key-basic-0001"},
    ],
)
def test_answers_from_this_projects_own_search_server(tmp_path: Path, search_server: str, auth: Any) -> None:
    app, _, _ = build(tmp_path, assistants=remote(search_server, **auth))
    body = checked(ask(app.test_client(), "how do I reset my password", path=url("kb")))
    item = only_item(body)
    assert item["response_type"] == "conversation_search", item
    assert "self-service portal" in item["text"]
    assert item["search_results"][0]["title"] == "Reset your password" and len(item["search_results"]) <= 3
    assert item["search_results"][0]["result_metadata"]["document_retrieval_source"] == "assistant-bridge"
    search = turn_event(body)["callout"]["search"]
    assert search["engine"] == "custom_search" and search["request"] == {"method": "POST", "url": search_server}


@pytest.mark.parametrize(
    "auth",
    [
        {"auth_type": "none"},
        {"auth_type": "apikey", "apikey": "wrong-key-000"},
        {"auth_type": "apikey", "apikey": "key-alice-0001", "apikey_header": "X-Other-Key"},
    ],
)
def test_rejected_credentials_give_the_connectivity_message(tmp_path: Path, search_server: str, auth: Any) -> None:
    app, _, _ = build(tmp_path, assistants=remote(search_server, **auth))
    item = only_item(checked(ask(app.test_client(), "password", path=url("kb"))))
    assert item["text"].startswith(CONNECTIVITY)
    assert item["errors"] == [{"message": "the search server answered HTTP 401", "path": ""}]


def test_unreachable_server_gives_the_connectivity_message(tmp_path: Path) -> None:
    app, _, _ = build(tmp_path, assistants=remote("http://127.0.0.1:9/query", connect_timeout_seconds=1))
    item = only_item(checked(ask(app.test_client(), "password", path=url("kb"))))
    assert item["text"].startswith(CONNECTIVITY) and "could not be reached" in item["errors"][0]["message"]


def mock(handler: Callable[[httpx.Request], httpx.Response]) -> tuple[httpx.MockTransport, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return handler(request)

    return httpx.MockTransport(record), seen


def _timeout(request: httpx.Request) -> httpx.Response:
    raise httpx.ReadTimeout("timed out", request=request)


@pytest.mark.parametrize(
    "handler, errors",
    [
        (_timeout, [{"message": "the search server did not answer within 2 s", "path": ""}]),
        (
            lambda r: httpx.Response(500, text="Traceback (most recent call last): secret"),
            [{"message": "the search server answered HTTP 500", "path": ""}],
        ),
        (
            lambda r: httpx.Response(200, text="<html>not json</html>"),
            [{"message": "the search server answered with invalid JSON", "path": ""}],
        ),
        (
            lambda r: httpx.Response(200, json={"results": []}),
            [{"message": "must have required property 'search_results'", "path": ""}],
        ),
        (
            lambda r: httpx.Response(200, json={"search_results": [{"title": "t", "body": 3}, {"body": "b"}]}),
            [
                {"message": "must be string", "path": "/search_results/0/body"},
                {"message": "must have required property 'title'", "path": "/search_results/1"},
            ],
        ),
        (
            lambda r: httpx.Response(200, json={"search_results": "none"}),
            [{"message": "must be array", "path": "/search_results"}],
        ),
        (
            lambda r: httpx.Response(200, json={"search_results": [{"title": "t", "body": "x" * 120_000}]}),
            [{"message": "the search server's response is over the 100 KB limit", "path": ""}],
        ),
    ],
)
def test_bad_answers_give_the_connectivity_message_with_errors(tmp_path: Path, handler: Any, errors: Any) -> None:
    transport, seen = mock(handler)
    app, _, _ = build(
        tmp_path, assistants=remote("https://search.example.com/query", timeout_seconds=2), transport=transport
    )
    resp = ask(app.test_client(), "password", path=url("kb"))
    body = checked(resp)
    item = only_item(body)
    assert item["text"].startswith(CONNECTIVITY)
    assert sorted(item["errors"], key=str) == sorted(errors, key=str)
    assert turn_event(body)["outcome"] == "connectivity" and turn_event(body)["errors"] == item["errors"]
    assert "Traceback" not in resp.get_data(as_text=True) and len(seen) == 1


def test_request_carries_query_filter_metadata_and_credentials(tmp_path: Path) -> None:
    answer = {"search_results": [{"title": "VPN", "body": "Install the VPN client first.", "url": "https://x.example"}]}
    transport, seen = mock(lambda r: httpx.Response(200, json=answer))
    assistants = {
        "kb": {
            "search": {
                "type": "server",
                "filter": "lang:en",
                "metadata": {"collection_name": "kb"},
                "server": {
                    "url": "https://search.example.com/query",
                    "auth_type": "bearer",
                    "token": "tok-123456",
                    "headers": {"X-Tenant": "acme"},
                },
            }
        }
    }
    app, _, _ = build(tmp_path, assistants=assistants, transport=transport)
    item = only_item(checked(ask(app.test_client(), "vpn", path=url("kb"))))
    assert item["response_type"] == "conversation_search" and item["search_results"][0]["url"] == "https://x.example"
    assert item["search_results"][0]["result_metadata"]["document_retrieval_source"] == "custom_search"
    request = seen[0]
    assert request.method == "POST" and str(request.url) == "https://search.example.com/query"
    assert json.loads(request.content) == {"query": "vpn", "metadata": {"collection_name": "kb"}, "filter": "lang:en"}
    assert request.headers["Authorization"] == "Bearer tok-123456" and request.headers["X-Tenant"] == "acme"


def test_empty_remote_results_say_the_no_results_message(tmp_path: Path) -> None:
    transport, _ = mock(lambda r: httpx.Response(200, json={"search_results": []}))
    app, _, _ = build(tmp_path, assistants=remote("https://search.example.com/q"), transport=transport)
    assert only_item(checked(ask(app.test_client(), "vpn", path=url("kb"))))["text"].startswith("I searched")
