"""The service's SSE framing read by a common client library, httpx-sse: heartbeats between events that
carry ``id:`` lines produce no empty events (a blank line after a comment would dispatch one, with the last
id kept as the spec says), and a whole rag_search stream parses into exactly the events the service sent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from assistant_bridge.streaming.framing import comment, frame
from tests.conftest import KEYS, headers_for
from tests.tools.helpers import execute, ingest, make_app, wait_status

pytestmark = pytest.mark.unit
httpx_sse = pytest.importorskip("httpx_sse", reason="the test extra installs httpx-sse")


def _decode(raw: bytes) -> list[Any]:
    from httpx_sse._decoders import SSEDecoder, SSELineDecoder

    lines, decoder = SSELineDecoder(), SSEDecoder()
    out = [decoder.decode(line) for line in lines.decode(raw.decode()) + lines.flush()]
    return [e for e in out if e is not None]


def test_heartbeats_between_events_with_ids_dispatch_nothing() -> None:
    raw = frame("tool_start", "{}", id="1") + comment() + comment() + frame("tool_end", '{"x": 1}', id="2") + comment()
    events = _decode(raw)
    assert [(e.event, e.id) for e in events] == [("tool_start", "1"), ("tool_end", "2")]


def test_a_stored_rag_search_stream_through_httpx_sse(tmp_path: Path) -> None:
    app = make_app(tmp_path, keys=KEYS)
    with app.test_client() as c:
        ingest(c, "Remote work", "Employees may work remotely two days a week.", headers_for("alice"))
        accepted = execute(c, {"query": "remote work"}, headers_for("alice"), mode="async").get_json()
        assert wait_status(c, accepted["execution_id"], headers_for("alice"))["status"] == "completed"
    with httpx.Client(transport=httpx.WSGITransport(app=app), base_url="http://bridge") as client:
        with httpx_sse.connect_sse(client, "GET", accepted["stream_url"], headers=headers_for("alice")) as source:
            events = list(source.iter_sse())
    assert events and all(e.event and e.data for e in events)
    assert events[-1].event == "tool_end" and [int(e.id) for e in events] == list(range(1, len(events) + 1))
