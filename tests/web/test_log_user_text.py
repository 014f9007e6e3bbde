"""``server.log_user_text``: off (the default), no log line of a turn, a search, a tool execution, a relayed
turn or an agentic run carries the query or the answer; on, their events carry them as fields, clipped."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.logs import USER_TEXT_CHARS, JsonFormatter, RedactQuerySecrets, TextFormatter, user_text
from tests.conversation.helpers import ask, build, checked, ingest

pytestmark = pytest.mark.unit
SECRET = "zanzibar-confidential-merger"
DOC = ("Board minutes", f"The {SECRET} closes in May. Reset your password before the board meeting.")


def run_everything(tmp_path: Path, log_user_text: bool) -> Any:
    """An app with ``server.log_user_text`` as given, after a turn, a search, a rag_search and a relayed turn
    that all carry :data:`SECRET`."""
    from assistant_bridge.agentic.runtime import AgenticRuntime
    from assistant_bridge.filters import FakePreFilter
    from assistant_bridge.generators import FakeGenerator
    from tests.tools.helpers import components

    app, services, _ = build(tmp_path, server={"log_user_text": log_user_text})
    services.register(components())
    services.register(AgenticRuntime(services, generator=FakeGenerator(), prefilter=FakePreFilter(0.9), threshold=0.5))
    with app.test_client() as client:
        ingest(client, [DOC])
        checked(ask(client, f"when does the {SECRET} close"))
        assert client.post("/v1/search", json={"query": SECRET}).status_code == 200
        resp = client.post("/v1/tools/rag_search/execute", json={"inputs": {"query": f"{SECRET} date"}})
        assert resp.status_code == 200, resp.get_json()
        resp = client.post("/v1/relay/message", json={"text": f"and the {SECRET}?"})
        assert resp.status_code == 200, resp.get_json()
        resp = client.post(
            "/agenticRetrieveStream",
            json={
                "messages": [{"role": "user", "content": {"text": f"who signed the {SECRET}"}}],
                "retrievers": [{"configuration": {"knowledgeBase": {"knowledgeBaseId": "default"}}}],
            },
        )
        assert resp.status_code == 200 and resp.get_data(as_text=True), resp.get_data(as_text=True)[:500]
    return app


def records(caplog: Any, event: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.getMessage().split(" ", 1)[0] == event]


def test_off_no_line_carries_user_text(tmp_path: Path, caplog: Any) -> None:
    caplog.set_level(logging.DEBUG)
    run_everything(tmp_path, log_user_text=False)
    for event in (
        "message.turn",
        "search.done",
        "tools.execution.completed",
        "relay.turn",
        "relay.search",
        "agentic.run",
    ):
        assert records(caplog, event), f"no {event} was logged"
    json_fmt, text_fmt = JsonFormatter(), TextFormatter()
    for record in caplog.records:
        for line in (json_fmt.format(record), text_fmt.format(record)):
            assert SECRET not in line
        assert not {"query", "question", "answer", "text"} & set(vars(record))


def test_on_the_events_carry_the_query_and_the_answer(tmp_path: Path, caplog: Any) -> None:
    caplog.set_level(logging.DEBUG)
    run_everything(tmp_path, log_user_text=True)
    fmt = JsonFormatter()

    def fields(event: str) -> dict[str, Any]:
        (record,) = records(caplog, event)[:1]
        line: dict[str, Any] = json.loads(fmt.format(record))
        assert SECRET not in line["msg"]  # the texts are fields, never part of the message
        return line

    turn = fields("message.turn")
    assert turn["query"] == f"when does the {SECRET} close" and "question" not in turn
    assert SECRET in turn["answer"] and turn["msg"] == "message.turn" and turn["assistant"] == "default"
    assert fields("search.done")["query"] == SECRET
    tool = fields("tools.execution.completed")
    assert tool["query"] == f"{SECRET} date" and SECRET in tool["answer"]
    relayed = fields("relay.turn")
    assert relayed["text"] == f"and the {SECRET}?" and SECRET in relayed["answer"]
    assert fields("relay.search")["query"] == f"and the {SECRET}?"
    assert fields("agentic.run")["query"] == f"who signed the {SECRET}"


def test_long_texts_are_clipped(tmp_path: Path, caplog: Any) -> None:
    app, _, _ = build(tmp_path, server={"log_user_text": True})
    caplog.set_level(logging.INFO)
    long_query = "password " * 600
    with app.test_client() as client:
        assert client.post("/v1/search", json={"query": long_query}).status_code == 200
    (record,) = records(caplog, "search.done")
    assert len(record.query) == USER_TEXT_CHARS and record.query.endswith("…")  # type: ignore[attr-defined]
    assert long_query.startswith(record.query[:-1])  # type: ignore[attr-defined]


def test_user_text_fields() -> None:
    assert user_text(False, query="secret") == {}
    assert user_text(True, query="q", answer="", question=None) == {"query": "q"}
    assert user_text(True, answer="x" * USER_TEXT_CHARS) == {"answer": "x" * USER_TEXT_CHARS}


def test_fields_show_in_both_formats_and_lose_url_api_keys() -> None:
    record = logging.LogRecord("t", logging.INFO, __file__, 1, "search.done results=%d", (3,), None)
    record.query = "see /v1/tool-executions/1/stream?api_key=abc123 please"
    assert RedactQuerySecrets().filter(record)
    line = json.loads(JsonFormatter().format(record))
    assert line["msg"] == "search.done results=3"
    assert line["query"] == "see /v1/tool-executions/1/stream?api_key=[redacted] please"
    assert (
        TextFormatter()
        .format(record)
        .endswith('search.done results=3 query="see /v1/tool-executions/1/stream?api_key=[redacted] please"')
    )
