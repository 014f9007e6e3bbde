"""The /message schemas accept the wire examples of the spec (both spellings of the answer item) and refuse
what the service never sends."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from assistant_bridge.errors import ValidationFailed
from assistant_bridge.validation import validate

pytestmark = pytest.mark.unit

SPEC_ITEM = {  # spec §A.4, "Illustrative item"
    "response_type": "conversational_search",
    "text": "You can reset your password from Settings > Security.",
    "citations_title": "How do we know?",
    "citations": [
        {
            "title": "Reset your password",
            "text": "Go to Settings > Security and choose Reset.",
            "body": "…full body…",
            "search_result_index": 0,
            "ranges": [{"start": 0, "end": 54}],
        }
    ],
    "confidence_scores": {"threshold": 0.3, "pre_gen": 0.82, "post_gen": 0.77, "extractiveness": 0.64},
    "response_length_option": "moderate",
    "search_results": [
        {
            "result_metadata": {"document_retrieval_source": "…", "score": 12.3},
            "id": "…",
            "title": "Reset your password",
            "body": "…",
        }
    ],
    "disclaimer": "…",
}


def response(*items: Any, **output: Any) -> dict[str, Any]:
    return {"output": {"generic": list(items), **output}, "context": {"global": {"system": {"turn_count": 1}}}}


def test_spec_item_validates_in_both_spellings() -> None:
    validate("message_response", response(SPEC_ITEM))
    validate("message_response", response({**SPEC_ITEM, "response_type": "conversation_search"}))


@pytest.mark.parametrize(
    "change",
    [
        lambda i: i.pop("citations_title"),
        lambda i: i["citations"][0].pop("ranges"),
        lambda i: i["confidence_scores"].update(pre_gen=1.5),
        lambda i: i["search_results"][0].pop("id"),
        lambda i: i.update(response_length_option="long"),
        lambda i: i.update(response_type="answer"),
    ],
)
def test_broken_items_are_refused(change: Any) -> None:
    item = copy.deepcopy(SPEC_ITEM)
    change(item)
    with pytest.raises(ValidationFailed):
        validate("message_response", response(item))


def test_client_side_request_and_action_of_the_spec() -> None:
    validate(
        "message_request",
        {
            "user_id": "wxa_user",
            "input": {
                "message_type": "search_results",
                "search_results": [
                    {
                        "result_metadata": {"score": 1.0},
                        "title": "t",
                        "body": "b",
                        "url": "u",
                        "highlight": {"body": ["h"]},
                    }
                ],
            },
        },
    )
    validate("message_response", response(actions=[{"type": "search", "query": "q", "filter": "f", "metadata": {}}]))
    with pytest.raises(ValidationFailed):
        validate("message_response", response(actions=[{"type": "search"}]))


def test_stream_events_have_exactly_one_key() -> None:
    validate(
        "message_stream_event",
        {"partial_item": {"response_type": "text", "text": "a", "streaming_metadata": {"id": 1}}},
    )
    validate("message_stream_event", {"complete_item": {**SPEC_ITEM, "streaming_metadata": {"id": 1}}})
    validate("message_stream_event", {"final_response": response(SPEC_ITEM)})
    for bad in (
        {},
        {"partial_item": {"text": "a"}},
        {"complete_item": SPEC_ITEM},
        {"final_response": response(SPEC_ITEM), "partial_item": {}},
    ):
        with pytest.raises(ValidationFailed):
            validate("message_stream_event", bad)
