"""rag_search chat sessions: memory of earlier calls, query rewriting borrowed from the assistant (or set by
tools.rag_search.contextual_mode), memory expiry, and HAP filtering of the query and the answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.conversation.memory import ConversationMemory
from assistant_bridge.generators import FakeGenerator
from assistant_bridge.tools.service import tools_for
from assistant_bridge.validation import validate
from tests.conversation.helpers import build, ingest
from tests.tools.helpers import events_of, execute
from tests.web.test_message_conversation import DOCS, FOLLOW_UP, conv

pytestmark = pytest.mark.unit


def app_with(tmp_path: Path, *, generator: Any = None, tools: dict[str, Any] | None = None, **cs: Any) -> Any:
    rag = {"mode": "lexical", "retrieve_limit": 3, **(tools or {})}
    app, services, _ = build(tmp_path, assistants=conv(**cs), generator=generator, tools={"rag_search": rag})
    client = app.test_client()
    ingest(client, DOCS)
    return client, services


def run(client: Any, query: str, session_id: str | None = "chat-1", **kw: Any) -> dict[str, Any]:
    body = {"session_id": session_id} if session_id else {}
    resp = execute(client, {"query": query}, **body, **kw)
    assert resp.status_code == 200, resp.get_json()
    result: dict[str, Any] = resp.get_json()
    validate("rag_search_result", result)
    return result


def test_a_follow_up_in_a_chat_session_is_rewritten_and_finds_the_right_document(tmp_path: Path) -> None:
    client, services = app_with(tmp_path)
    first = run(client, "What is a Roth IRA?")
    assert first["contexts"][0]["title"] == "Roth IRA accounts" and first["inferred_query"] == "What is a Roth IRA?"
    second = run(client, FOLLOW_UP)
    assert second["inferred_query"] == FOLLOW_UP + " — Roth IRA"
    rw = second["query_rewrite"]
    assert rw["method"] == "embedded" and rw["original_query"] == FOLLOW_UP and rw["history_turns"] == 1
    assert second["contexts"][0]["title"] == "Roth IRA accounts" and second["is_hap_detected"] is False
    turns = tools_for(services).memory.turns("tool", "chat-1")
    assert [t.question for t in turns] == ["What is a Roth IRA?", FOLLOW_UP]
    assert "<citation" not in turns[0].answer and turns[0].answer and turns[0].cited_ids
    # another session, and a call without one, know nothing of it
    assert run(client, FOLLOW_UP, session_id="chat-2")["inferred_query"] == FOLLOW_UP
    assert run(client, FOLLOW_UP, session_id=None)["inferred_query"] == FOLLOW_UP


def test_the_tools_setting_overrides_the_assistants_mode(tmp_path: Path) -> None:
    client, _ = app_with(tmp_path, tools={"contextual_mode": "single_turn"})
    run(client, "What is a Roth IRA?")
    second = run(client, FOLLOW_UP)
    assert second["inferred_query"] == FOLLOW_UP and "query_rewrite" not in second
    assert second["contexts"][0]["title"] == "Savings bonds"


def test_a_rewrite_set_by_the_tools_setting_keeps_the_assistants_weight_of_the_message_as_asked(tmp_path: Path) -> None:
    client, _ = app_with(
        tmp_path,
        tools={"contextual_mode": "entire_conversation"},
        mode="single_turn",
        query_rewrite={"as_asked_weight": 0.4},
    )
    run(client, "What is a Roth IRA?")
    rw = run(client, FOLLOW_UP)["query_rewrite"]  # "penalty", "early", "withdrawals": weighed in full
    assert rw["rewritten"] is True and rw["as_asked_weight"] == pytest.approx(0.4)


def test_streamed_executions_are_remembered_too(tmp_path: Path) -> None:
    client, services = app_with(tmp_path)
    run(client, "What is a Roth IRA?")
    evs = events_of(execute(client, {"query": FOLLOW_UP}, mode="stream", session_id="chat-1"))
    end = [data for name, data in evs if name == "tool_end"][0]
    assert end["inferred_query"] == FOLLOW_UP + " — Roth IRA"
    assert len(tools_for(services).memory.turns("tool", "chat-1")) == 2


def test_chat_session_memory_expires(tmp_path: Path) -> None:
    client, services = app_with(tmp_path, tools={"memory_ttl_seconds": 60})
    now = [1000.0]
    rt = tools_for(services)
    rt.memory = ConversationMemory(services.store, lambda: now[0])
    run(client, "What is a Roth IRA?")
    now[0] += 61
    second = run(client, FOLLOW_UP)
    assert second["inferred_query"] == FOLLOW_UP and second["query_rewrite"]["history_turns"] == 0


def test_hap_blocks_an_offensive_answer(tmp_path: Path) -> None:
    client, services = app_with(tmp_path, generator=FakeGenerator("This shit costs a penalty."))
    result = run(client, "What is a Roth IRA?")
    assert result["outcome"] == "hap" and result["is_hap_detected"] is True and result["sources_used"] == []
    assert result["response"].startswith("I found information about this, but I can't share the answer")
    assert all(not c["used_in_response"] for c in result["contexts"])
    evs = events_of(execute(client, {"query": "What is a Roth IRA?"}, mode="stream"))
    partial = "".join(d["content"] for n, d in evs if n == "tool_partial_update")
    assert "shit" not in str(evs) and [d for n, d in evs if n == "tool_end"][0]["outcome"] == "hap"
    assert partial == result["response"]  # the blocked text was never streamed
    assert tools_for(services).memory.turns("tool", "chat-1")[0].answer == ""


def test_hap_on_the_query_when_enabled(tmp_path: Path) -> None:
    generator = FakeGenerator()
    client, _ = app_with(tmp_path, generator=generator, hap_filtering={"input": {"enabled": True}})
    result = run(client, "you idiot, what is a Roth IRA?")
    assert result["outcome"] == "hap" and result["contexts"] == [] and generator.calls == []
    assert result["response"].startswith("I can't respond to that message")
    assert run(client, "What is a Roth IRA?")["outcome"] == "answer"


PAGES = [
    ("make(1): GNU make utility", "-j jobs, --jobs=jobs: Run several jobs at once with make."),
    (
        "make(1): GNU make utility",
        "-n, --just-print: Print the commands that would be executed, but do not execute them.",
    ),
    (
        "less(1): opposite of more",
        "You see what it would run without running it: the screen shows what less runs next.",
    ),
]


def test_a_follow_up_reads_its_topics_page_first_as_a_message_turn_does(tmp_path: Path) -> None:
    """The tool answers from the hits a ``/message`` turn answers from: after a question about make answered from
    make(1), "How do I only see what it would run without running it?" finds less(1)'s words first in a search of
    every page, and the conversation's topic brings make(1)'s passages to the head (the tool's memory keeps the
    cited page's title, which the rewriter reads the topic from)."""
    client, services = app_with(tmp_path)
    ingest(client, PAGES)
    first = run(client, "How do I run several jobs at once with make?")
    assert first["contexts"][0]["title"].startswith("make(1)") and first["outcome"] == "answer"
    turn = tools_for(services).memory.turns("tool", "chat-1")[0]
    assert turn.titles[0] == turn.first_title == "make(1): GNU make utility"
    follow_up = "How do I only see what it would run without running it?"
    alone = run(client, follow_up, session_id=None)
    assert alone["contexts"][0]["title"].startswith("less(1)")
    second = run(client, follow_up)
    assert second["query_rewrite"]["topic"] == "make"
    assert second["contexts"][0]["title"].startswith("make(1)")
    assert "--just-print" in second["response"]
