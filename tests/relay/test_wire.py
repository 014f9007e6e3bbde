"""The relay's pure wire logic: reading search actions, merging, trimming to the request limit, outcomes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assistant_bridge.core.custom_search import fit_within
from assistant_bridge.logs import JsonFormatter
from assistant_bridge.relay import wire
from assistant_bridge.relay.errors import MalformedAssistantResponse, RelayRequestTooLarge, SearchActionInvalid

pytestmark = pytest.mark.unit


def response(*actions: Any, **extra: Any) -> dict[str, Any]:
    return {"output": {"generic": [], "actions": list(actions)}, **extra}


def result(title: str, body: str = "text", **extra: Any) -> dict[str, Any]:
    return {"result_metadata": {"score": 1.0}, "title": title, "body": body, **extra}


def test_every_search_action_is_found_in_order_and_other_types_are_ignored(caplog: Any) -> None:
    body = response(
        {"type": "client", "name": "x"},
        {"type": "search", "query": " vpn "},
        {"type": "search", "query": "expenses", "filter": "lang:en", "metadata": {"limit": 3}},
    )
    caplog.set_level("INFO", logger="assistant_bridge.relay.wire")
    assert wire.search_actions(wire.check_response(body)) == [
        {"query": "vpn"},
        {"query": "expenses", "filter": "lang:en", "metadata": {"limit": 3}},
    ]
    assert [(r.getMessage(), r.type) for r in caplog.records] == [("relay.action_ignored", "client")]
    assert not any("vpn" in JsonFormatter().format(r) for r in caplog.records)  # queries stay out of logs


@pytest.mark.parametrize(
    "action",
    [
        {"type": "search"},
        {"type": "search", "query": ""},
        {"type": "search", "query": "   "},
        {"type": "search", "query": 42},
        {"type": "search", "query": "q", "filter": 3},
        {"type": "search", "query": "q", "metadata": "big"},
    ],
)
def test_a_search_action_without_a_usable_query_is_an_error(action: dict[str, Any]) -> None:
    with pytest.raises(SearchActionInvalid) as err:
        wire.search_actions(response({"type": "search", "query": "fine"}, action))
    assert err.value.details["path"].startswith("$.output.actions[1]")
    assert isinstance(err.value, MalformedAssistantResponse)


@pytest.mark.parametrize(
    "body, path",
    [
        ([], None),
        ("text", None),
        ({"context": {}}, "$.output"),
        ({"output": []}, "$.output"),
        ({"output": {"generic": {}}}, "$.output.generic"),
        ({"output": {"actions": "search"}}, "$.output.actions"),
        ({"output": {"actions": ["search"]}}, "$.output.actions[0]"),
        ({"output": {}, "context": []}, "$.context"),
    ],
)
def test_malformed_responses_are_named(body: Any, path: str | None) -> None:
    with pytest.raises(MalformedAssistantResponse) as err:
        wire.check_response(body)
    assert err.value.details.get("path") == path


def test_merge_interleaves_by_rank_and_drops_duplicates() -> None:
    a = [result("a1"), result("shared", "same body", url="https://x/1"), result("a3")]
    b = [result("b1"), result("other title", "same  body", url="https://x/1"), result("b3"), result("b4")]
    merged = wire.merge_results([a, b], max_results=10)
    assert [r["title"] for r in merged] == ["a1", "b1", "shared", "a3", "b3", "b4"]


def test_merge_keeps_distinct_chunks_of_one_document_and_caps_the_count() -> None:
    a = [
        result("doc", "part one", url="https://x", result_metadata={"chunk_id": "c1"}),
        result("doc", "part two", url="https://x", result_metadata={"chunk_id": "c2"}),
    ]
    b = [result("doc", "part one again", result_metadata={"chunk_id": "c1"})]
    merged = wire.merge_results([a, b], max_results=10)
    assert [r["result_metadata"]["chunk_id"] for r in merged] == ["c1", "c2"]
    assert len(wire.merge_results([a, b], max_results=1)) == 1


def test_results_message_echoes_context_and_user_id() -> None:
    prev = {"output": {}, "context": {"global": {"system": {"turn_count": 1}}}, "user_id": "u1"}
    body, trimmed = wire.results_message(prev, [result("t")], 100_000, user_id="ignored", options={"debug": True})
    assert body == {
        "input": {"message_type": "search_results", "search_results": [result("t")], "options": {"debug": True}},
        "context": prev["context"],
        "user_id": "u1",
    }
    assert trimmed == 0
    body, _ = wire.results_message({"output": {}}, [], 100_000, user_id="caller")
    assert body["user_id"] == "caller" and "context" not in body


@pytest.mark.parametrize("limit", [5_000, 20_000, 100_000])
def test_results_message_stays_under_the_limit_with_a_big_context(limit: int) -> None:
    prev = {"output": {}, "context": {"blob": "é" * (limit // 8)}, "user_id": "u"}
    results = [result(f"r{i}", "ü" * 3000, highlight={"body": ["x" * 500]}) for i in range(60)]
    body, trimmed = wire.results_message(prev, results, limit)
    assert len(wire.body_bytes(body)) <= limit
    assert trimmed > 0 and body["input"]["search_results"]
    assert body["context"] == prev["context"]


def test_one_huge_result_is_shortened_rather_than_dropped() -> None:
    body, trimmed = wire.results_message({"output": {}}, [result("big", "word " * 50_000)], 100_000)
    sent = body["input"]["search_results"]
    assert trimmed == 1 and len(sent) == 1 and 90_000 < len(sent[0]["body"]) < 100_000
    assert len(json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()) <= 100_000


def test_a_context_over_the_limit_is_refused() -> None:
    with pytest.raises(RelayRequestTooLarge):
        wire.results_message({"output": {}, "context": {"blob": "x" * 200_000}}, [result("t")], 100_000)


@pytest.mark.parametrize(
    "body, outcome",
    [
        ({"output": {"generic": [{"response_type": "conversational_search", "text": "a"}]}}, "answer"),
        ({"output": {"generic": [{"response_type": "conversation_search", "text": "a"}]}}, "answer"),
        (
            {
                "output": {
                    "generic": [{"response_type": "text", "text": "?"}],
                    "debug": {
                        "turn_events": [{"event": "generative_ai_called", "generative_ai": {"is_idk_response": True}}]
                    },
                }
            },
            "idk",
        ),
        (
            {
                "output": {
                    "generic": [{"response_type": "text", "text": "?"}],
                    "debug": {"turn_events": [{"event": "generative_ai_called", "outcome": "no_results"}]},
                }
            },
            "no_results",
        ),
        (
            {
                "output": {
                    "generic": [{"response_type": "text", "text": "?"}],
                    "debug": {"turn_events": [{"outcome": "connectivity"}]},
                }
            },
            "error",
        ),
        (
            {"output": {"generic": [{"response_type": "text", "text": "?", "errors": [{"message": "m", "path": ""}]}]}},
            "error",
        ),
        ({"output": {"generic": [{"response_type": "search", "primary_results": []}]}}, "search"),
        ({"output": {"generic": [{"response_type": "text", "text": "hello"}]}}, "text"),
        ({"output": {"generic": []}}, "empty"),
    ],
)
def test_outcomes(body: dict[str, Any], outcome: str) -> None:
    assert wire.classify(body) == outcome


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.fixed_dictionaries({"title": st.text(max_size=40), "body": st.text(max_size=6000)}), max_size=25),
    st.sampled_from([2_500, 10_000, 100_000]),
    st.text(max_size=800),
)
def test_trimming_matches_fit_within_and_never_exceeds_the_limit(
    results: list[dict[str, Any]], limit: int, ctx: str
) -> None:
    prev = {"output": {}, "context": {"note": ctx}}
    body, trimmed = wire.results_message(prev, results, limit)
    assert len(wire.body_bytes(body)) <= limit
    empty = {"input": {"message_type": "search_results", "search_results": []}, "context": prev["context"]}
    overhead = len(wire.body_bytes(empty)) - len(wire.body_bytes({"search_results": []}))
    expected, expected_trimmed = fit_within(results, limit - overhead)
    assert body["input"]["search_results"] == expected["search_results"] and trimmed == expected_trimmed


def test_trimming_two_hundred_big_results_serialises_each_about_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Trimming is linear: it measures each result once instead of re-serialising the list after every drop."""
    big = [{"title": f"t{i}", "body": "ü" * 5000} for i in range(200)]
    real = json.dumps
    serialised: list[int] = []

    def counting(obj: Any, *args: Any, **kwargs: Any) -> str:
        out = real(obj, *args, **kwargs)
        serialised.append(len(out))
        return out

    monkeypatch.setattr(json, "dumps", counting)
    body, trimmed = wire.results_message({"output": {}}, big, 100_000)
    monkeypatch.undo()
    assert sum(serialised) <= 3 * len(real(big, ensure_ascii=False))
    assert trimmed == 200 - len(body["input"]["search_results"]) and trimmed > 150
