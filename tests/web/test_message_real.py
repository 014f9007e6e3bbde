"""/message with the real default components: the ONNX pre/post filters, the thresholds file and the
extractive generator over USE-multilingual (loaded once per test process)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conversation.helpers import ask, build, checked, events, ingest, only_item, turn_event, url

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def real_client(tmp_path_factory: pytest.TempPathFactory) -> Any:
    app, _, runtime = build(tmp_path_factory.mktemp("real"), real=True)
    runtime.check_ready()  # a missing or corrupt model fails here, loudly
    client = app.test_client()
    ingest(client)
    return client


def test_answerable_question_gets_a_cited_extractive_answer(real_client: Any) -> None:
    body = checked(ask(real_client, "How do I reset my password?"))
    item = only_item(body)
    assert item["response_type"] == "conversation_search", turn_event(body)
    assert "self-service portal" in item["text"]
    scores = item["confidence_scores"]
    ev = turn_event(body)["generative_ai"]["confidence_scores"]
    assert scores["pre_gen"] >= ev["pre_gen_threshold"] and scores["post_gen"] >= ev["post_gen_threshold"]
    assert scores["extractiveness"] > 0.9  # the extractive generator copies sentences
    assert item["citations"]
    for c in item["citations"]:
        for r in c["ranges"]:
            assert item["text"][r["start"] : r["end"]] == c["text"]
    assert any(
        item["search_results"][c["search_result_index"]]["title"] == "Reset your password" for c in item["citations"]
    )


def test_unrelated_question_is_an_idk_with_the_reason(real_client: Any) -> None:
    body = checked(ask(real_client, "Who won the football world cup in 1998?"))
    item = only_item(body)
    ev = turn_event(body)
    assert item["response_type"] == "text" and ev["outcome"] == "idk", ev
    assert ev["callout"]["idk_reason_code"] in ("retrieval_confidence", "response_confidence", "generator_declined")
    pre = ev["generative_ai"]["confidence_scores"]
    if ev["callout"]["idk_reason_code"] == "retrieval_confidence":
        assert pre["pre_gen"] < pre["pre_gen_threshold"]


def test_real_components_stream(real_client: Any) -> None:
    evs = events(real_client.post(url(stream=True), json={"input": {"text": "How do I reset my password?"}}))
    assert [n for n, _ in evs][-2:] == ["complete_item", "final_response"]
    assert evs[-2][1]["response_type"] == "conversation_search"
