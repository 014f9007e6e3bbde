"""POST .../message with the built-in search: answers, "I don't know", no results, connectivity, overrides,
bad input, scope. Fake filters and generator unless the test is about the real ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.errors import BackendUnavailable
from assistant_bridge.generators import FakeGenerator
from tests.conftest import KEYS, headers_for
from tests.conversation.helpers import LevelThresholds, ask, build, checked, ingest, only_item, turn_event, url

pytestmark = pytest.mark.unit
IDK = "I'm not confident I can answer that from my knowledge base"


@pytest.fixture
def loaded(tmp_path: Path) -> Any:
    app, services, runtime = build(tmp_path)
    with app.test_client() as client:
        ingest(client)
        yield client


def test_text_turn_answers_with_a_conversational_search_item(loaded: Any) -> None:
    body = checked(ask(loaded, "how do I reset my password", debug=False))
    item = only_item(body)
    assert item["response_type"] == "conversation_search"
    assert "self-service portal" in item["text"]
    assert item["citations_title"] == "How do we know?"
    assert item["response_length_option"] == "moderate"
    assert item["disclaimer"]
    assert item["confidence_scores"] == {
        "threshold": 0.5,
        "pre_gen": 0.9,
        "post_gen": 0.9,
        "extractiveness": item["confidence_scores"]["extractiveness"],
    }
    top = item["search_results"][0]
    assert top["title"] == "Reset your password" and top["id"]
    assert top["result_metadata"]["document_retrieval_source"] == "assistant-bridge"
    assert isinstance(top["result_metadata"]["score"], float)
    for citation in item["citations"]:
        cited = item["search_results"][citation["search_result_index"]]
        assert citation["body"] == cited["body"] and citation["title"] == cited["title"]
        for r in citation["ranges"]:
            assert item["text"][r["start"] : r["end"]] == citation["text"]
    assert "debug" not in body["output"] and "actions" not in body["output"]
    assert body["context"]["global"]["system"]["turn_count"] == 1
    assert body["user_id"] == "local"


def test_debug_carries_scores_thresholds_and_timings(loaded: Any) -> None:
    ev = turn_event(checked(ask(loaded, "expense reports receipts")))
    assert ev["event"] == "generative_ai_called" and ev["outcome"] == "answer"
    scores = ev["generative_ai"]["confidence_scores"]
    assert (scores["pre_gen"], scores["pre_gen_threshold"], scores["post_gen"], scores["post_gen_threshold"]) == (
        0.9,
        0.5,
        0.9,
        0.5,
    )
    assert ev["callout"]["search_called"] and ev["callout"]["llm_called"]
    assert (
        ev["callout"]["search"]["engine"] == "builtin"
        and ev["callout"]["search"]["query"] == "expense reports receipts"
    )
    assert ev["callout"]["idk_reason_code"] is None and ev["generative_ai"]["is_idk_response"] is False
    m = ev["metrics"]
    assert m["total_time_ms"] >= m["search_time_ms"] > 0
    assert {"search", "pre_filter", "generation", "post_filter"} <= set(m["stage_times_ms"])
    assert m["answer_generation_time_ms"] == m["stage_times_ms"]["generation"]


@pytest.mark.parametrize(
    "pre, post, generator, reason",
    [
        (0.1, 0.9, None, "retrieval_confidence"),
        (0.9, 0.1, FakeGenerator(reword=True), "response_confidence"),
        (0.9, 0.9, FakeGenerator(declined=True), "generator_declined"),
    ],
)
def test_idk_paths_say_the_idk_message_and_give_the_reason(
    tmp_path: Path, pre: float, post: float, generator: Any, reason: str
) -> None:
    app, _, _ = build(tmp_path, pre=pre, post=post, generator=generator)
    client = app.test_client()
    ingest(client)
    body = checked(ask(client, "how do I reset my password"))
    item = only_item(body)
    assert item["response_type"] == "text" and item["text"].startswith(IDK)
    ev = turn_event(body)
    assert ev["outcome"] == "idk" and ev["callout"]["idk_reason_code"] == reason
    assert ev["generative_ai"]["is_idk_response"] is True
    assert ev["generative_ai"]["confidence_scores"]["pre_gen"] == pre
    if reason == "retrieval_confidence":
        assert ev["callout"]["llm_called"] is False and ev["generative_ai"]["original_response"] is None
    else:
        assert ev["callout"]["llm_called"] is True and ev["generative_ai"]["original_response"]


def test_no_results_says_the_no_results_message(tmp_path: Path) -> None:
    app, _, _ = build(tmp_path)
    body = checked(ask(app.test_client(), "anything at all"))
    assert only_item(body) == {
        "response_type": "text",
        "text": (
            "I searched my knowledge base for information that might address your query, but did not find anything "
            "useful to share."
        ),
    }
    assert turn_event(body)["outcome"] == "no_results"


def test_backend_outage_says_the_connectivity_message(loaded: Any, tmp_path: Path) -> None:
    app, services, _ = build(tmp_path / "b")
    client = app.test_client()
    ingest(client)
    services.backend.fail_next = BackendUnavailable("Milvus search failed")
    resp = ask(client, "password")
    body = checked(resp)
    assert only_item(body)["text"].startswith("I might have information that could help")
    assert turn_event(body)["outcome"] == "connectivity"
    assert "Traceback" not in resp.get_data(as_text=True)


def test_generator_failure_and_prompt_too_long_say_the_connectivity_message(tmp_path: Path) -> None:
    for i, gen in enumerate([FakeGenerator(error="endpoint down"), FakeGenerator(context_tokens=1)]):
        app, _, _ = build(tmp_path / str(i), generator=gen)
        client = app.test_client()
        ingest(client)
        body = checked(ask(client, "password"))
        assert only_item(body)["text"].startswith("I might have information")
        assert turn_event(body)["outcome"] == ("connectivity" if i == 0 else "search_failed")


def test_threshold_level_and_response_length_per_assistant_and_per_request(tmp_path: Path) -> None:
    levels = LevelThresholds(per_level={"most_often": (0.95, 0.0), "rarely": (0.1, 0.0)})
    gen = FakeGenerator()
    assistants = {
        "strict": {
            "conversational_search": {
                "search_confidence": {"threshold": "most_often"},
                "response_length": {"option": "concise"},
            }
        }
    }
    app, _, _ = build(tmp_path, thresholds=levels, generator=gen, assistants=assistants)
    client = app.test_client()
    ingest(client)
    strict = url("strict")
    body = checked(ask(client, "password", path=strict))
    assert turn_event(body)["callout"]["idk_reason_code"] == "retrieval_confidence"  # 0.9 < 0.95
    assert levels.levels[-1] == "most_often"
    body = checked(ask(client, "password", path=strict, search_confidence_threshold="rarely"))
    item = only_item(body)
    assert item["response_type"] == "conversation_search" and item["response_length_option"] == "concise"
    assert item["confidence_scores"]["threshold"] == 0.0
    assert gen.calls[-1][2] == "concise"
    body = checked(ask(client, "password", path=strict, thresholds={"pre_gen": 0.2}, response_length="verbose"))
    item = only_item(body)
    assert item["response_length_option"] == "verbose" and gen.calls[-1][2] == "verbose"
    assert turn_event(body)["generative_ai"]["confidence_scores"]["pre_gen_threshold"] == 0.2


def test_configured_messages_and_conversational_search_off(tmp_path: Path) -> None:
    assistants = {
        "plain": {"conversational_search": {"enabled": False}},
        "custom": {
            "messages": {"no_result": "Nothing found.", "idk": "Not sure."},
            "search": {"type": "builtin", "filter": 'title == "nothing like this"'},
        },
    }
    app, _, _ = build(tmp_path, assistants=assistants)
    client = app.test_client()
    ingest(client)
    item = only_item(checked(ask(client, "password", path=url("plain"))))
    assert item["response_type"] == "search" and item["primary_results"]
    assert len(item["primary_results"]) <= 3 and item["primary_results"][0]["title"] == "Reset your password"
    assert only_item(checked(ask(client, "password", path=url("custom")))) == {
        "response_type": "text",
        "text": "Nothing found.",
    }


def test_version_parameter_and_environment_less_paths(loaded: Any) -> None:
    assert checked(ask(loaded, "password", path=url(version=None)))
    assert checked(ask(loaded, "password", path=url(environment=None)))
    err = checked(ask(loaded, "password", path=url(version="yesterday")), 400)
    assert "version" in err["error"]["message"]


@pytest.mark.parametrize(
    "path, fragment",
    [
        (url("nobody"), "unknown assistant 'nobody'"),
        (url("default", "staging"), "unknown environment 'staging'"),
        (url(session="0b5ba3d5-6b9a-4a36-9b1a-2f3a5e0d9c11"), "session"),
    ],
)
def test_unknown_ids_are_404_json(loaded: Any, path: str, fragment: str) -> None:
    err = checked(ask(loaded, "password", path=path), 404)
    assert err["error"]["code"] == "not_found" and fragment in err["error"]["message"]


@pytest.mark.parametrize(
    "body, fragment",
    [
        ({}, "'input' is a required property"),
        ({"input": {"message_type": "image", "text": "x"}}, "$.input.message_type"),
        ({"input": {"message_type": "text"}}, "$.input: 'text' is a required property"),
        ({"input": {"text": "   "}}, "input.text"),
        ({"input": {"text": "x" * 2049}}, "$.input.text"),
        ({"input": {"text": 5}}, "$.input.text"),
        ({"input": {"message_type": "search_results", "text": "q"}}, "search_results"),
        (
            {"input": {"message_type": "search_results", "text": "q", "search_results": [{"title": "t"}]}},
            "$.input.search_results[0]: 'body' is a required property",
        ),
        (
            {"input": {"message_type": "search_results", "text": "q", "search_results": [{"title": "t", "body": 3}]}},
            "$.input.search_results[0].body",
        ),
        (
            {"input": {"message_type": "search_results", "text": "q", "search_results": {"title": "t"}}},
            "$.input.search_results",
        ),
        (
            {
                "input": {
                    "message_type": "search_results",
                    "text": "q",
                    "search_results": [{"title": "t", "body": "b", "highlight": {"body": "not a list"}}],
                }
            },
            "highlight.body",
        ),
        ({"input": {"text": "q", "options": {"search_confidence_threshold": "always"}}}, "search_confidence_threshold"),
        ({"input": {"text": "q", "options": {"thresholds": {"pre_gen": 2}}}}, "pre_gen"),
        ({"input": {"text": "q", "options": {"response_length": "long"}}}, "response_length"),
        ({"input": {"text": "q"}, "context": []}, "$.context"),
    ],
)
def test_bad_bodies_are_400_with_the_path(loaded: Any, body: Any, fragment: str) -> None:
    err = checked(loaded.post(url(), json=body), 400)
    assert fragment in err["error"]["message"], err


def test_malformed_json_and_oversized_bodies(loaded: Any) -> None:
    err = checked(loaded.post(url(), data=b"{nope", content_type="application/json"), 400)
    assert "JSON" in err["error"]["message"]
    results = [{"title": f"t{i}", "body": "b" * 1000} for i in range(120)]
    err = checked(
        loaded.post(url(), json={"input": {"message_type": "search_results", "text": "q", "search_results": results}}),
        400,
    )
    assert "must not exceed 100000 bytes" in err["error"]["message"]
    big = json.dumps({"input": {"text": "q"}, "context": {"pad": "x" * 1_100_000}})
    checked(loaded.post(url(), data=big, content_type="application/json"), 413)


def test_a_users_message_never_cites_another_users_documents(tmp_path: Path) -> None:
    app, _, _ = build(tmp_path, auth={"keys": KEYS})
    client = app.test_client()
    ingest(
        client,
        [("Alice payroll secret", "The payroll password rotation code is ZEBRA-42 for Alice.")],
        headers=headers_for("alice"),
    )
    ingest(
        client, [("Bob payroll notes", "Payroll questions go to the HR desk on floor two.")], headers=headers_for("bob")
    )
    assert checked(ask(client, "payroll", headers={}), 401)["error"]["code"] == "unauthorized"
    for who, mine, other in (("alice", "ZEBRA-42", "HR desk"), ("bob", "HR desk", "ZEBRA-42")):
        body = checked(ask(client, "payroll password rotation code", headers=headers_for(who)))
        text = json.dumps(body)
        assert mine in text and other not in text, who
    for tenant, mine, _other in (("t1", "tenant one", "tenant two"), ("t2", "tenant two", "tenant one")):
        ingest(
            client,
            [(f"Holidays {tenant}", f"Holiday calendar of {mine}: closed on Fridays.")],
            headers=headers_for("service", end_user=tenant),
        )
    body = checked(ask(client, "holiday calendar closed", headers=headers_for("service", end_user="t1")))
    text = json.dumps(body)
    assert "tenant one" in text and "tenant two" not in text
