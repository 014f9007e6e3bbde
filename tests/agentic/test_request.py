"""parse_request: the Bedrock and short retriever forms, and every rejected input naming its field."""

from __future__ import annotations

from typing import Any

import pytest

from assistant_bridge.agentic.request import parse_request
from assistant_bridge.core.filters import Comparison
from assistant_bridge.errors import FilterSyntaxError, ValidationFailed

pytestmark = pytest.mark.unit
KNOWN = ("default", "hr")


def body(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "messages": [
            {"role": "user", "content": {"text": "First question?"}},
            {"role": "assistant", "content": {"text": "An answer."}},
            {"role": "user", "content": {"text": "  The real question?  "}},
        ],
        "retrievers": [
            {
                "configuration": {
                    "knowledgeBase": {
                        "knowledgeBaseId": "default",
                        "retrievalOverrides": {
                            "filter": {"equals": {"key": "language", "value": "en"}},
                            "maxNumberOfResults": 7,
                        },
                    }
                }
            }
        ],
    }
    base.update(over)
    return base


def test_bedrock_form() -> None:
    req = parse_request(
        body(
            agenticRetrieveConfiguration={"maxAgentIteration": 4, "rerankingModelType": "NONE"},
            policyConfiguration={"bedrockGuardrailConfiguration": {"guardrailId": "hr", "guardrailVersion": "2"}},
            userContext={"userId": "u1"},
            generateResponse=False,
        ),
        known_retrievers=KNOWN,
    )
    assert req.question == "The real question?"
    assert [r for r, _ in req.conversation] == ["user", "assistant", "user"]
    r = req.retrievers[0]
    assert (r.id, r.max_results, r.filter) == ("default", 7, Comparison("language", "==", "en"))
    assert (req.max_iterations, req.rerank, req.guardrail, req.user_id, req.generate) == (
        4,
        False,
        ("hr", "2"),
        "u1",
        False,
    )
    assert req.planner == "MANAGED"


def test_short_form_and_defaults() -> None:
    req = parse_request(
        body(retrievers=[{"id": "hr"}, {"id": "default", "maxNumberOfResults": 3}]), known_retrievers=KNOWN
    )
    assert [(r.id, r.max_results, r.filter) for r in req.retrievers] == [("hr", None, None), ("default", 3, None)]
    assert (req.max_iterations, req.rerank, req.generate, req.guardrail) == (None, True, True, None)


@pytest.mark.parametrize(
    "over,path",
    [
        ({"messages": [{"role": "assistant", "content": {"text": "hi"}}]}, "$.messages"),
        ({"messages": [{"role": "user", "content": {"text": "   "}}]}, "$.messages"),
        ({"retrievers": [{"id": "default"}, {"id": "hr"}] * 3}, "$.retrievers"),
        ({"retrievers": []}, "$.retrievers"),
        ({"retrievers": [{"id": "nope"}]}, "$.retrievers[0].id"),
        (
            {"retrievers": [{"configuration": {"knowledgeBase": {"knowledgeBaseId": "nope"}}}]},
            "$.retrievers[0].configuration.knowledgeBase.knowledgeBaseId",
        ),
        ({"retrievers": [{"id": "hr"}, {"id": "hr"}]}, "$.retrievers[1]"),
        (
            {"retrievers": [{"id": "hr", "configuration": {"knowledgeBase": {"knowledgeBaseId": "default"}}}]},
            "$.retrievers[0].id",
        ),
        ({"retrievers": [{"id": "hr", "maxNumberOfResults": 500}]}, "$.retrievers[0].maxNumberOfResults"),
        (
            {"agenticRetrieveConfiguration": {"maxAgentIteration": 99}},
            "$.agenticRetrieveConfiguration.maxAgentIteration",
        ),
        (
            {"agenticRetrieveConfiguration": {"rerankingModelType": "CUSTOM"}},
            "$.agenticRetrieveConfiguration.rerankingModelType",
        ),
        ({"nextToken": "abc"}, "$.nextToken"),
        ({"memoryConfiguration": {"memoryId": "m"}}, "$.memoryConfiguration"),
    ],
)
def test_rejected_inputs_name_their_field(over: dict[str, Any], path: str) -> None:
    with pytest.raises(ValidationFailed) as info:
        parse_request(body(**over), known_retrievers=KNOWN)
    assert info.value.details["path"] == path
    assert info.value.message.startswith(path + ":")


@pytest.mark.parametrize(
    "flt,path",
    [
        ({"equals": {"key": "tenant", "value": "x"}}, ".filter.equals.key"),
        ({"andAll": [{"equals": {"key": "title", "value": "a"}}]}, ".filter.andAll"),
        ({"greaterThan": {"key": "page_number", "value": "three"}}, ".filter.greaterThan.value"),
        ({"bogus": {}}, ".filter"),
    ],
)
def test_a_malformed_filter_names_its_path(flt: dict[str, Any], path: str) -> None:
    bad = body(
        retrievers=[
            {"id": "hr"},
            {"configuration": {"knowledgeBase": {"knowledgeBaseId": "default", "retrievalOverrides": {"filter": flt}}}},
        ]
    )
    with pytest.raises(FilterSyntaxError) as info:
        parse_request(bad, known_retrievers=KNOWN)
    expected = "$.retrievers[1].configuration.knowledgeBase.retrievalOverrides" + path
    assert info.value.details["path"] == expected
    assert info.value.message.startswith(expected + ": ")
    assert info.value.status == 400


def test_what_the_service_model_allows_is_accepted() -> None:
    """boto3 checks requests against Bedrock's service model before sending them: what it lets through is
    served (iterations of 0 and 1 run the loop's least, the default knowledge base id names the default)."""
    for n in (0, 1):
        req = parse_request(body(agenticRetrieveConfiguration={"maxAgentIteration": n}), known_retrievers={"default"})
        assert req.max_iterations == 2
    kb = {"configuration": {"knowledgeBase": {"knowledgeBaseId": "DEFAULTKB0"}}}
    assert parse_request(body(retrievers=[kb]), known_retrievers={"default"}).retrievers[0].id == "default"
