"""Conversations on the /message session routes: follow-ups rewritten with the previous turn, self-contained
questions left alone, bounded memory, expiry, HAP filtering of questions and answers, rewrite failures and
stateless calls (no memory). Fake filters and generator, memory backend, real rewriter and HAP word lists."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from assistant_bridge.generators import FakeGenerator
from tests.conversation.helpers import ask, build, checked, events, ingest, only_item, sessions_url, turn_event, url

pytestmark = pytest.mark.unit

DOCS = [
    (
        "Roth IRA accounts",
        "A Roth IRA is a retirement account funded with income that was already taxed. "
        "Taking Roth IRA earnings out before age 59 costs a 10 percent penalty.",
    ),
    (
        "Savings bonds",
        "Savings bonds cashed in the first five years lose three months of interest as a penalty. "
        "Early withdrawals of savings bonds are possible after one year.",
    ),
    ("Expense reports", "Submit expense reports within 30 days. Attach every receipt in the finance tool."),
]
FOLLOW_UP = "Is there a penalty for early withdrawals from it?"


def conv(mode: str = "entire_conversation", **cs: Any) -> dict[str, Any]:
    return {
        "default": {
            "search": {"metadata": {"mode": "lexical", "limit": 3}},
            "conversational_search": {"contextual_mode": mode, **cs},
        }
    }


def session(client: Any) -> str:
    resp = client.post(sessions_url())
    assert resp.status_code == 201
    sid: str = resp.get_json()["session_id"]
    return sid


def say(client: Any, sid: str | None, text: str, **options: Any) -> dict[str, Any]:
    return checked(ask(client, text, path=url(session=sid) if sid else url(), **options))


def top_title(body: dict[str, Any]) -> str:
    return str(only_item(body)["search_results"][0]["title"])


def after_roth_ira(tmp_path: Path, **build_options: Any) -> tuple[Any, str]:
    """A client over :data:`DOCS` and a session that has asked "What is a Roth IRA?"."""
    app, _, _ = build(tmp_path, **build_options)
    client = app.test_client()
    ingest(client, DOCS)
    sid = session(client)
    say(client, sid, "What is a Roth IRA?")
    return client, sid


@pytest.fixture
def chat(tmp_path: Path) -> Any:
    app, services, runtime = build(tmp_path, assistants=conv())
    client = app.test_client()
    ingest(client, DOCS)
    return client, runtime


def test_a_follow_up_is_rewritten_with_the_previous_turn_and_finds_the_right_document(chat: Any) -> None:
    client, _ = chat
    sid = session(client)
    first = say(client, sid, "What is a Roth IRA?")
    assert top_title(first) == "Roth IRA accounts"
    assert turn_event(first)["query_rewrite"]["method"] == "none"  # nothing to rewrite yet
    body = say(client, sid, FOLLOW_UP)
    ev = turn_event(body)
    rw = ev["query_rewrite"]
    assert rw["original_query"] == FOLLOW_UP and rw["rewritten"] and rw["follow_up"] is True
    assert (
        "Roth IRA" in rw["carried_terms"]
        and rw["history_turns"] == 1
        and rw["contextual_mode"] == "entire_conversation"
    )
    assert ev["generative_ai"]["inferred_query"] == rw["rewritten_query"] == ev["callout"]["search"]["query"]
    assert "rewrite" in ev["metrics"]["stage_times_ms"]
    assert top_title(body) == "Roth IRA accounts"


def test_without_rewriting_the_same_follow_up_finds_the_wrong_document(tmp_path: Path) -> None:
    client, sid = after_roth_ira(tmp_path, assistants=conv("single_turn"))
    body = say(client, sid, FOLLOW_UP)
    rw = turn_event(body)["query_rewrite"]
    assert (rw["method"], rw["rewritten"], rw["contextual_mode"]) == ("none", False, "single_turn")
    assert top_title(body) == "Savings bonds"


def test_the_rewritten_query_is_what_the_filters_and_the_generator_see(tmp_path: Path) -> None:
    generator = FakeGenerator()
    client, sid = after_roth_ira(tmp_path, assistants=conv(), generator=generator)
    say(client, sid, FOLLOW_UP)
    assert generator.calls[-1][0] == FOLLOW_UP + " — Roth IRA"


def test_a_self_contained_question_is_left_alone(chat: Any, tmp_path: Path) -> None:
    client, _ = chat
    sid = session(client)
    say(client, sid, "What is a Roth IRA?")
    question = "How do I submit expense reports?"
    body = say(client, sid, question)
    rw = turn_event(body)["query_rewrite"]
    # a short one gets the topic in brackets, which weighs little beside its own words
    assert rw["follow_up"] is False and rw["rewritten_query"] == f"{question} (Roth IRA)"
    assert top_title(body) == "Expense reports"
    plain, sid = after_roth_ira(tmp_path / "plain", assistants=conv(query_rewrite={"topic_for_short_questions": False}))
    body = say(plain, sid, question)
    rw = turn_event(body)["query_rewrite"]
    assert rw["rewritten"] is False and rw["follow_up"] is False and rw["method"] == "embedded"
    assert turn_event(body)["callout"]["search"]["query"] == question and top_title(body) == "Expense reports"


def test_memory_records_question_query_answer_and_ids(chat: Any) -> None:
    client, runtime = chat
    sid = session(client)
    body = say(client, sid, "What is a Roth IRA?")
    say(client, sid, FOLLOW_UP)
    first, second = runtime.sessions.memory.turns("message", sid)
    item = only_item(body)
    assert (first.question, first.query, first.outcome) == ("What is a Roth IRA?", "What is a Roth IRA?", "answer")
    assert first.answer == item["text"] and first.result_ids[0] == item["search_results"][0]["id"]
    assert first.cited_ids and set(first.cited_ids) <= set(first.result_ids)
    assert second.question == FOLLOW_UP and second.query != FOLLOW_UP


def test_memory_is_bounded_and_drops_the_oldest_turns(tmp_path: Path) -> None:
    app, _, runtime = build(tmp_path, assistants=conv(memory={"max_turns": 3}))
    client = app.test_client()
    ingest(client, DOCS)
    sid = session(client)
    for n in range(6):
        say(client, sid, f"expense reports question number {n}")
    turns = runtime.sessions.memory.turns("message", sid)
    assert [t.question for t in turns] == [f"expense reports question number {n}" for n in (3, 4, 5)]
    body = say(client, sid, "Which is more important?", debug=True)
    assert turn_event(body)["query_rewrite"]["history_turns"] == 3


def test_memory_bytes_are_bounded_for_a_very_long_conversation(tmp_path: Path) -> None:
    app, _, runtime = build(tmp_path, assistants=conv(memory={"max_turns": 1000, "max_bytes": 4096}))
    client = app.test_client()
    ingest(client, DOCS)
    sid = session(client)
    for n in range(25):
        say(client, sid, f"roth ira {n} " + "padding words " * 100, debug=False)
    count, size = runtime.sessions.memory.stats("message", sid)
    assert size <= 4096 and 1 <= count < 25
    assert runtime.sessions.memory.turns("message", sid)[-1].question.startswith("roth ira 24 ")


def test_an_expired_session_is_a_404_and_a_new_session_starts_without_memory(tmp_path: Path) -> None:
    now = [1000.0]
    assistants = conv()
    assistants["default"]["session_ttl_seconds"] = 60
    app, _, runtime = build(tmp_path, assistants=assistants, clock=lambda: now[0])
    client = app.test_client()
    ingest(client, DOCS)
    sid = session(client)
    say(client, sid, "What is a Roth IRA?")
    now[0] += 61
    err = checked(ask(client, FOLLOW_UP, path=url(session=sid)), 404)
    assert err["error"]["code"] == "not_found" and "expired" in err["error"]["message"]
    fresh = session(client)
    body = say(client, fresh, FOLLOW_UP)
    assert turn_event(body)["query_rewrite"]["history_turns"] == 0
    # creating the new session purged the expired one, and its memory, lazily
    assert runtime.sessions.memory.stats("message", sid) == (0, 0)
    assert (
        runtime.services.store.execute("SELECT COUNT(*) FROM message_sessions WHERE id = ?", (sid,)).fetchone()[0] == 0
    )


def test_deleting_a_session_deletes_its_memory(chat: Any) -> None:
    client, runtime = chat
    sid = session(client)
    say(client, sid, "What is a Roth IRA?")
    assert client.delete(sessions_url(session=sid)).status_code == 200
    assert runtime.sessions.memory.stats("message", sid) == (0, 0)


def test_stateless_calls_have_no_memory(chat: Any) -> None:
    client, runtime = chat
    say(client, None, "What is a Roth IRA?")
    body = say(client, None, FOLLOW_UP)
    rw = turn_event(body)["query_rewrite"]
    assert rw["history_turns"] == 0 and rw["rewritten"] is False
    assert runtime.services.store.execute("SELECT COUNT(*) FROM conversation_memory").fetchone()[0] == 0


def test_hap_on_the_question_blocks_the_turn_before_any_search(tmp_path: Path) -> None:
    generator = FakeGenerator()
    app, _, runtime = build(
        tmp_path, assistants=conv(hap_filtering={"input": {"enabled": True, "threshold": 0.5}}), generator=generator
    )
    client = app.test_client()
    ingest(client, DOCS)
    sid = session(client)
    body = say(client, sid, "you stupid idiot, what is a Roth IRA?")
    item = only_item(body)
    assert item == {
        "response_type": "text",
        "text": (
            "I can't respond to that message because it may contain hateful, abusive or profane language. Could you "
            "rephrase it?"
        ),
    }
    ev = turn_event(body)
    assert ev["outcome"] == "hap" and ev["generative_ai"]["is_hap_detected"] is True
    assert ev["hap_filtering"]["input"]["detected"] is True and ev["hap_filtering"]["input"]["categories"] == ["abuse"]
    assert ev["callout"]["search_called"] is False and generator.calls == []
    (remembered,) = runtime.sessions.memory.turns("message", sid)
    assert remembered.outcome == "hap" and remembered.answer == ""
    # the blocked turn is not used to rewrite the next one
    assert turn_event(say(client, sid, "Which is more important?"))["query_rewrite"]["carried_terms"] == []


def test_hap_on_the_answer_replaces_it_with_the_configured_message(tmp_path: Path) -> None:
    assistants = conv()
    assistants["default"]["messages"] = {"hap_output": "That answer was withheld."}
    app, _, runtime = build(tmp_path, assistants=assistants, generator=FakeGenerator("This shit costs a penalty."))
    client = app.test_client()
    ingest(client, DOCS)
    sid = session(client)
    body = say(client, sid, "What is a Roth IRA?")
    assert only_item(body) == {"response_type": "text", "text": "That answer was withheld."}
    ev = turn_event(body)
    assert ev["outcome"] == "hap" and ev["generative_ai"]["is_hap_detected"] is True
    assert ev["hap_filtering"]["output"]["detected"] and ev["hap_filtering"]["output"]["score"] >= 0.5
    assert ev["generative_ai"]["original_response"] == "This shit costs a penalty."  # debug output only
    assert "input" in ev["hap_filtering"] and ev["hap_filtering"]["input"]["enabled"] is False
    assert runtime.sessions.memory.turns("message", sid)[0].answer == ""  # never remembered


def test_a_clean_answer_reports_no_hap_and_a_higher_threshold_lets_mild_words_through(tmp_path: Path) -> None:
    app, _, _ = build(
        tmp_path,
        assistants=conv(hap_filtering={"output": {"threshold": 0.9}}),
        generator=FakeGenerator("This shit costs a penalty."),
    )
    client = app.test_client()
    ingest(client, DOCS)
    body = say(client, None, "What is a Roth IRA?")
    ev = turn_event(body)
    assert ev["outcome"] == "answer" and ev["generative_ai"]["is_hap_detected"] is False
    out = ev["hap_filtering"]["output"]
    assert (out["detected"], out["threshold"]) == (False, 0.9) and 0.5 <= out["score"] < 0.9


def test_hap_on_a_streamed_answer_replaces_the_streamed_text(tmp_path: Path) -> None:
    app, _, _ = build(
        tmp_path, assistants=conv(streaming="stream_then_verify"), generator=FakeGenerator("This shit costs a penalty.")
    )
    client = app.test_client()
    ingest(client, DOCS)
    body = {"input": {"text": "What is a Roth IRA?", "options": {"debug": True}}}
    evs = events(client.post(url(stream=True), json=body))
    name, complete = evs[-2]
    assert (
        name == "complete_item" and complete["response_type"] == "text" and complete["streaming_metadata"] == {"id": 1}
    )
    assert complete["text"].startswith("I found information about this, but I can't share the answer")
    assert evs[-1][1]["output"]["debug"]["turn_events"][0]["outcome"] == "hap"


def llm_transport(content: str | None = None, status: int = 200, fail: bool = False) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.host == "llm.test"
        if fail:
            raise httpx.ReadTimeout("slow", request=request)
        if content is None:
            return httpx.Response(status, json={"error": "down"})
        return httpx.Response(200, json={"choices": [{"message": {"content": content}}]})

    return httpx.MockTransport(handler)


LLM = {
    "method": "llm",
    "base_url": "http://llm.test/v1",
    "model": "rewriter",
    "api_key": "sk-test",
    "timeout_seconds": 2,
}


@pytest.mark.parametrize(
    "transport, reason",
    [
        (llm_transport(status=500), "http_500"),
        (llm_transport(fail=True), "timeout"),
        (llm_transport("   "), "bad_response"),
    ],
)
def test_a_failing_rewrite_falls_back_to_the_embedded_rewriter_and_says_so(
    tmp_path: Path, transport: Any, reason: str
) -> None:
    app, _, _ = build(tmp_path, assistants=conv(query_rewrite=LLM), transport=transport)
    client = app.test_client()
    ingest(client, DOCS)
    sid = session(client)
    say(client, sid, "What is a Roth IRA?")
    body = say(client, sid, FOLLOW_UP)
    rw = turn_event(body)["query_rewrite"]
    assert (rw["method"], rw["fallback"], rw["fallback_reason"]) == ("fallback", True, reason)
    assert rw["rewritten_query"] == f"{FOLLOW_UP} — Roth IRA" == turn_event(body)["callout"]["search"]["query"]
    assert top_title(body) == "Roth IRA accounts"
    assert only_item(body)["response_type"] == "conversation_search"  # the turn still answers


def test_an_llm_rewrite_is_searched(tmp_path: Path) -> None:
    rewritten = "Is there a penalty for early withdrawals from a Roth IRA?"
    app, _, _ = build(
        tmp_path, assistants=conv(query_rewrite=LLM), transport=llm_transport(json.dumps({"query": rewritten}))
    )
    client = app.test_client()
    ingest(client, DOCS)
    sid = session(client)
    say(client, sid, "What is a Roth IRA?")
    body = say(client, sid, FOLLOW_UP)
    rw = turn_event(body)["query_rewrite"]
    assert rw["method"] == "llm" and rw["rewritten_query"] == rewritten and top_title(body) == "Roth IRA accounts"
    assert "sk-test" not in json.dumps(body)


def test_client_side_search_gets_the_rewritten_query_and_memory_completes_the_turn(tmp_path: Path) -> None:
    assistants = {
        "client-side": {
            "search": {"type": "client"},
            "conversational_search": {"contextual_mode": "entire_conversation"},
        }
    }
    app, _, runtime = build(tmp_path, assistants=assistants)
    client = app.test_client()
    sid = client.post(sessions_url("client-side")).get_json()["session_id"]
    path = url("client-side", session=sid)
    results = [
        {"title": "Roth IRA", "body": "A Roth IRA is funded with taxed income. Early withdrawals cost a penalty."}
    ]
    for text in ("What is a Roth IRA?", FOLLOW_UP):
        action = checked(ask(client, text, path=path))["output"]["actions"][0]
        checked(client.post(path, json={"input": {"message_type": "search_results", "search_results": results}}))
    assert "Roth IRA" in action["query"] and action["query"].startswith(FOLLOW_UP)
    turns = runtime.sessions.memory.turns("message", sid)
    assert [(t.question, t.outcome) for t in turns] == [("What is a Roth IRA?", "answer"), (FOLLOW_UP, "answer")]


def test_configuration_errors_name_the_key(tmp_path: Path) -> None:
    from assistant_bridge.errors import ConfigurationError

    for cs, key in (
        ({"contextual_mode": "everything"}, "contextual_mode"),
        ({"hap_filtering": {"output": {"threshold": 2}}}, "threshold"),
        ({"memory": {"max_turns": 0}}, "max_turns"),
        ({"query_rewrite": {"method": "llm"}}, "query_rewrite"),
    ):
        with pytest.raises(ConfigurationError, match=key):
            build(tmp_path / key, assistants={"default": {"conversational_search": cs}})


def test_settings_given_as_strings_are_converted(tmp_path: Path) -> None:
    from assistant_bridge.safety import HapStage

    cs = {
        "contextual_mode": "entire_conversation",
        "search_confidence": {"threshold": "more_often"},
        "hap_filtering": {"input": {"enabled": "true", "threshold": "0.7"}},
        "memory": {"max_turns": "5"},
        "query_rewrite": {"method": "embedded", "max_history_turns": "4"},
    }
    _, _, runtime = build(tmp_path, assistants={"default": {"conversational_search": cs}})
    c = runtime.assistants.get("default").conversational
    assert c.hap.input == HapStage(True, 0.7) and c.hap.output == HapStage(True, 0.5)
    assert c.memory.max_turns == 5 and c.threshold_level == "more_often" and c.contextual_mode == "entire_conversation"
    assert runtime.rewriter(runtime.assistants.get("default")).mode == "entire_conversation"


def test_social_turns_punctuation_and_mixed_languages_in_a_session(chat: Any) -> None:
    client, runtime = chat
    sid = session(client)
    say(client, sid, "What is a Roth IRA?")
    for text, outcome in (("Thanks!", "social"), ("👍", "social"), ("?!?", "social"), ("merci", "social")):
        body = say(client, sid, text)
        assert turn_event(body)["outcome"] == outcome and only_item(body)["response_type"] == "text"
        assert "search_results" not in only_item(body)
    # the social turns are remembered but carry no topic: the follow-up still finds the Roth IRA page
    assert top_title(say(client, sid, FOLLOW_UP)) == "Roth IRA accounts"
    mixed = say(client, sid, "Et les savings bonds, is there a penalty ?")
    assert top_title(mixed) == "Savings bonds"


def test_a_long_conversation_stays_bounded(chat: Any) -> None:
    """200 turns in one session: each turn is remembered once, memory keeps its limit, the rewrite stays
    small and every turn answers."""
    client, runtime = chat
    sid = session(client)
    questions = ["What is a Roth IRA?", FOLLOW_UP, "What about savings bonds?", "ok", "Why?"]
    for n in range(200):
        body = say(client, sid, questions[n % len(questions)])
        rw = turn_event(body).get("query_rewrite") or {}
        assert len(str(rw.get("rewritten_query", ""))) < 300
    turns = runtime.sessions.memory.turns("message", sid)
    assert len(turns) == 20  # the default max_turns, oldest dropped
    assert [t.question for t in turns] == [questions[n % len(questions)] for n in range(180, 200)]  # each once
