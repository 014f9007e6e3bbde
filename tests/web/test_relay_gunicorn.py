"""The relay routes under gunicorn (``python -m assistant_bridge serve``, gthread workers): the in-process
call to the service's own ``client-side`` assistant works inside a worker, for JSON and for SSE, from any
of two workers, with credentials forwarded."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from assistant_bridge.backends.lite_server import free_port
from assistant_bridge.client.sse import parse_sse
from tests.served_process import served_process

pytestmark = [pytest.mark.integration, pytest.mark.slow]
KEY = "relay-gunicorn-key-01"


@pytest.fixture(scope="module")
def server(tmp_path_factory: Any) -> Iterator[str]:
    data = tmp_path_factory.mktemp("relay-gunicorn")
    config = data / "config.toml"
    config.write_text(f"""
data_dir = "{data / "d"}"
[backend]
kind = "memory"
[embedder]
kind = "hashing"
dim = 64
[server]
workers = 2
threads = 4
[[auth.keys]]
key = "{KEY}"
user_id = "web"
[assistants.client-side]
search = {{type = "client"}}
conversational_search = {{enabled = false}}  # no model files needed: this test is about the relay
""")
    port = free_port()
    cmd = [sys.executable, "-m", "assistant_bridge", "serve", "--config", str(config), "--port", str(port)]
    base = f"http://127.0.0.1:{port}"
    with served_process(cmd, data / "serve.log", f"{base}/healthz", timeout=120, interval=0.3, stop_timeout=30):
        yield base


def test_relay_message_in_a_gunicorn_worker(server: str) -> None:
    assert httpx.post(f"{server}/v1/relay/message", json={"text": "hello"}, timeout=30).status_code == 401
    for _ in range(4):  # both workers answer
        resp = httpx.post(
            f"{server}/v1/relay/message",
            json={"text": "How do I reset my password?"},
            headers={"X-API-Key": KEY},
            timeout=60,
        )
        body = resp.json()
        assert resp.status_code == 200, body
        assert body["relay"]["rounds"] == 1 and body["relay"]["outcome"] == "no_results"  # an empty index
        assert body["user_id"] == "web"


def test_relay_stream_in_a_gunicorn_worker(server: str) -> None:
    with httpx.stream(
        "POST",
        f"{server}/v1/relay/message_stream",
        json={"text": "How do I reset my password?"},
        headers={"X-API-Key": KEY},
        timeout=60,
    ) as resp:
        assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/event-stream")
        frames = list(parse_sse(resp.iter_bytes()))
    names = [ev.event for ev in frames]
    assert names[0] == "relay_search" and names[-2:] == ["final_response", "relay_end"]
    assert "complete_item" in names and "partial_item" in names
    assert json.loads(frames[-1].data)["relay_end"]["outcome"] == "no_results"
