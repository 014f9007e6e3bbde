"""A remote custom search server or an LLM endpoint that hangs, answers garbage, fails or cannot be reached:
``/message`` answers the assistant's connectivity message within its timeouts (never a 5xx), streamed or not,
and the next turn answers normally once the dependency is back."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.backends.lite_server import free_port
from assistant_bridge.client.sse import parse_sse
from assistant_bridge.conversation.runtime import ConversationRuntime
from assistant_bridge.filters import FakePostFilter, FakePreFilter, Thresholds
from tests.conftest import make_services, make_settings

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]
CONNECTIVITY = (
    "I might have information that could help address your query, but am unable to search my "
    "knowledge base at the moment."
)
TIMEOUT = 1.0
GOOD_SEARCH = {
    "search_results": [
        {
            "title": "Reset your password",
            "body": "Open the self-service portal and choose Forgot password.",
            "url": "https://intranet/pw",
            "result_metadata": {"score": 0.9},
        }
    ]
}
GOOD_COMPLETION = {
    "id": "c1",
    "object": "chat.completion",
    "model": "m",
    "choices": [
        {
            "index": 0,
            "finish_reason": "stop",
            "message": {"role": "assistant", "content": "Open the self-service portal [1]."},
        }
    ],
}


class Endpoint:
    """A loopback HTTP server whose answer is chosen per test: ``good``, ``hang``, ``garbage``, ``wrong_shape``,
    ``http500``, ``truncated``."""

    def __init__(self) -> None:
        self.mode = "good"
        self.hits = 0
        self.release = threading.Event()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                endpoint.hits += 1
                mode = endpoint.mode
                if mode == "hang":
                    endpoint.release.wait(30)
                    return
                if mode == "http500":
                    return self._send(500, b'{"error": "boom"}')
                if mode == "garbage":
                    return self._send(200, b"<html><body>Service temporarily unavailable</body></html>")
                if mode == "wrong_shape":
                    return self._send(200, b'{"results": [1, 2, 3], "choices": "none"}')
                if mode == "truncated":
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", "1000")
                    self.end_headers()
                    self.wfile.write(b'{"search_results": [{"title": "x"')
                    self.wfile.flush()
                    self.close_connection = True
                    return
                good = GOOD_SEARCH if self.path.endswith("/search") else GOOD_COMPLETION
                self._send(200, json.dumps(good).encode())

            def _send(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def endpoint() -> Iterator[Endpoint]:
    e = Endpoint()
    yield e
    e.close()


@pytest.fixture(scope="module")
def client(endpoint: Endpoint, tmp_path_factory: Any) -> Any:
    from assistant_bridge.web.app import create_app

    dead = f"http://127.0.0.1:{free_port()}"
    server = {"timeout_seconds": TIMEOUT, "connect_timeout_seconds": TIMEOUT}
    llm = {
        "kind": "openai",
        "model": "m",
        "api_key": "llm-key-0001",
        "timeout": TIMEOUT,
        "connect_timeout": TIMEOUT,
        "max_retries": 1,
    }
    assistants = {
        "remote": {
            "search": {"type": "server", "server": {"url": endpoint.base + "/search", **server}},
            "generator": {"kind": "fake"},
        },
        "remote-dead": {
            "search": {"type": "server", "server": {"url": dead + "/search", **server}},
            "generator": {"kind": "fake"},
        },
        "llm": {"generator": {**llm, "base_url": endpoint.base + "/v1"}},
        "llm-dead": {"generator": {**llm, "base_url": dead + "/v1"}},
    }
    settings = make_settings(Path(tmp_path_factory.mktemp("deps")), assistants=assistants)
    services = make_services(settings)
    services.register(
        ConversationRuntime(
            services,
            prefilter=FakePreFilter(0.9),
            postfilter=FakePostFilter(0.9),
            thresholds=lambda level: Thresholds(0.5, 0.5),
        )
    )
    app = create_app(settings, services)
    with app.test_client() as c:
        r = c.post(
            "/v1/documents",
            json={
                "title": "Reset your password",
                "text": "To reset your password open the self-service portal and choose Forgot password.",
            },
        )
        assert r.status_code == 201
        yield c


def _turn(client: Any, assistant: str, *, stream: bool = False) -> tuple[dict[str, Any], float]:
    path = f"/v2/assistants/{assistant}/environments/default/message" + ("_stream" if stream else "")
    started = time.monotonic()
    resp = client.post(path, json={"input": {"text": "How do I reset my password?", "options": {"debug": True}}})
    elapsed = time.monotonic() - started
    assert resp.status_code == 200, resp.get_data(as_text=True)[:500]
    if not stream:
        return resp.get_json(), elapsed
    events = list(parse_sse([resp.get_data()]))
    assert events[-1].event == "final_response", [e.event for e in events]
    return json.loads(events[-1].data)["final_response"], elapsed


def _text_item(body: dict[str, Any]) -> dict[str, Any]:
    items = body["output"]["generic"]
    assert len(items) == 1
    return dict(items[0])


@pytest.mark.parametrize(
    "mode, error",
    [
        ("hang", "did not answer within"),
        ("garbage", "invalid JSON"),
        ("wrong_shape", "must have required property 'search_results'"),
        ("http500", "answered HTTP 500"),
        ("truncated", ""),
    ],
)
@pytest.mark.parametrize("stream", [False, True])
def test_search_server_faults_give_the_connectivity_message(
    client: Any, endpoint: Endpoint, mode: str, error: str, stream: bool
) -> None:
    endpoint.mode = mode
    try:
        body, elapsed = _turn(client, "remote", stream=stream)
    finally:
        endpoint.mode = "good"
    item = _text_item(body)
    assert item["response_type"] == "text" and item["text"] == CONNECTIVITY
    assert item["errors"] and error in item["errors"][0]["message"], item["errors"]
    assert "Service temporarily" not in json.dumps(body)  # never the server's answer
    assert body["output"]["debug"]["turn_events"][0]["outcome"] == "connectivity"
    assert elapsed < TIMEOUT * 2 + 3
    recovered, _ = _turn(client, "remote", stream=stream)
    assert _text_item(recovered)["response_type"] == "conversation_search"


def test_search_server_unreachable(client: Any) -> None:
    body, elapsed = _turn(client, "remote-dead")
    item = _text_item(body)
    assert item["text"] == CONNECTIVITY and "could not be reached" in item["errors"][0]["message"]
    assert elapsed < TIMEOUT * 2 + 3


@pytest.mark.parametrize("mode", ["hang", "garbage", "wrong_shape", "http500", "truncated"])
@pytest.mark.parametrize("stream", [False, True])
def test_llm_faults_give_the_connectivity_message(client: Any, endpoint: Endpoint, mode: str, stream: bool) -> None:
    endpoint.mode = mode
    before = endpoint.hits
    try:
        body, elapsed = _turn(client, "llm", stream=stream)
    finally:
        endpoint.mode = "good"
    item = _text_item(body)
    assert item == {"response_type": "text", "text": CONNECTIVITY} or (
        item["text"] == CONNECTIVITY and set(item) <= {"response_type", "text", "streaming_metadata"}
    ), item
    assert endpoint.hits > before  # the endpoint was asked
    assert body["output"]["debug"]["turn_events"][0]["outcome"] == "connectivity"
    assert "Service temporarily" not in json.dumps(body) and "llm-key-0001" not in json.dumps(body)
    # one retry, each attempt bounded by the read timeout, plus the backoff between them
    assert elapsed < 2 * TIMEOUT + 4
    recovered, _ = _turn(client, "llm", stream=stream)
    assert _text_item(recovered)["response_type"] == "conversation_search"


def test_llm_unreachable(client: Any) -> None:
    body, elapsed = _turn(client, "llm-dead")
    assert _text_item(body)["text"] == CONNECTIVITY
    assert elapsed < 2 * TIMEOUT + 4
