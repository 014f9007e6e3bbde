"""The stream budget: a worker serves at most ``server.max_streams`` event streams at once (each holds a
thread for its whole length), refuses the next with 503 + Retry-After, keeps serving short requests, and
gets a slot back whenever a stream's response is closed, even one never read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.validation import validate
from tests.conftest import KEYS, headers_for
from tests.tools.helpers import execute, ingest, make_app, wait_status

pytestmark = pytest.mark.unit


def _stream_url(tmp_path: Path, max_streams: int) -> tuple[Any, str]:
    app = make_app(tmp_path, keys=KEYS)
    app.config["SETTINGS"].server.max_streams = max_streams
    from assistant_bridge.web.sse import StreamBudget

    app.extensions["stream_budget"] = StreamBudget(max_streams)
    with app.test_client() as c:
        ingest(c, "Remote work", "Employees may work remotely two days a week.", headers_for("alice"))
        accepted = execute(c, {"query": "remote work"}, headers_for("alice"), mode="async").get_json()
        assert wait_status(c, accepted["execution_id"], headers_for("alice"))["status"] == "completed"
    return app, accepted["stream_url"]


def test_past_the_budget_a_stream_is_a_503_and_short_requests_go_on(tmp_path: Path) -> None:
    app, url = _stream_url(tmp_path, 2)
    c = app.test_client()
    held = [c.get(url, headers=headers_for("alice"), buffered=False) for _ in range(2)]
    assert [r.status_code for r in held] == [200, 200]
    refused = c.get(url, headers=headers_for("alice"))
    assert refused.status_code == 503 and refused.headers["Retry-After"] == "5"
    assert validate("error", refused.get_json())["error"]["code"] == "too_many_streams"
    live = c.post(
        "/v1/tools/rag_search/execute?mode=stream",
        json={"inputs": {"query": "remote work"}},
        headers=headers_for("alice"),
    )
    assert live.status_code == 503  # refused before an execution is recorded
    assert c.get("/healthz").status_code == 200
    assert c.post("/v1/search", json={"query": "remote"}, headers=headers_for("alice")).status_code == 200
    held[0].close()  # never read: the slot comes back all the same
    again = c.get(url, headers=headers_for("alice"))
    assert again.status_code == 200 and b"tool_end" in again.get_data()
    held[1].close()


def test_the_default_leaves_one_thread_for_short_requests(tmp_path: Path) -> None:
    app = make_app(tmp_path, keys=KEYS)
    assert app.extensions["stream_budget"].size == app.config["SETTINGS"].server.threads - 1
