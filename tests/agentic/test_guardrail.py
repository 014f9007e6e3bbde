"""Guardrails (BLOCK only): configuration, matching, and their effect on a run's input and answer."""

from __future__ import annotations

from typing import Any

import pytest

from assistant_bridge.agentic.events import ResponseEvent, ResultEvent, TraceEvent
from assistant_bridge.agentic.guardrail import Guardrail, load_guardrails
from assistant_bridge.agentic.loop import AgenticRun, RetrieverBinding
from assistant_bridge.agentic.planner import EmbeddedPlanner
from assistant_bridge.errors import ConfigurationError
from assistant_bridge.generators import FakeGenerator

from .conftest import search_on

pytestmark = pytest.mark.unit
CONFIG = {
    "blocked_input_message": "I can't help with that.",
    "blocked_output_message": "That answer can't be shared.",
    "denied_words": ["salary grid"],
    "denied_topics": [{"name": "Legal advice", "phrases": ["sue", "lawsuit"]}],
    "regex": [{"name": "card number", "pattern": r"\b\d{4}-\d{4}-\d{4}-\d{4}\b"}],
}


def guard(**over: Any) -> Guardrail:
    return Guardrail.from_config("hr", "1", {**CONFIG, **over})


@pytest.mark.parametrize(
    "text,rules",
    [
        ("Can I sue my manager?", ("topic:Legal advice",)),
        ("Where is the SALARY   grid?", ("word",)),
        ("my card is 1234-5678-9012-3456", ("regex:card number",)),
        ("There is an issue with the lawsuits page", ()),  # whole words only: "issue" is not "sue"
        ("Nothing to see here", ()),
    ],
)
def test_check(text: str, rules: tuple[str, ...]) -> None:
    verdict = guard().check(text)
    assert verdict.rules == rules and verdict.intervened == bool(rules)
    assert text not in verdict.message


def test_cjk_words_match_inside_text() -> None:
    g = Guardrail.from_config("jp", "DRAFT", {"denied_words": ["給与"]})
    assert g.check("部長の給与はいくら？").intervened


@pytest.mark.parametrize(
    "cfg,needle",
    [
        ({"denied_words": ["x"], "action": "ANONYMIZE"}, "only the BLOCK action"),
        ({"regex": [{"pattern": "("}]}, "invalid pattern"),
        ({"denied_words": ["x"], "colour": "red"}, "unknown keys"),
        ({}, "at least one"),
        ({"denied_topics": [{"name": "t"}]}, "phrases"),
    ],
)
def test_bad_configuration(cfg: dict[str, Any], needle: str) -> None:
    with pytest.raises(ConfigurationError, match=needle):
        Guardrail.from_config("g1", "1", cfg)


def test_load_guardrails_by_id_and_version() -> None:
    table = load_guardrails({"hr": {"1": CONFIG, "DRAFT": {"denied_words": ["draft"]}}})
    assert set(table) == {("hr", "1"), ("hr", "DRAFT")}
    with pytest.raises(ConfigurationError):
        load_guardrails({"Bad-Id": {"1": CONFIG}})


def _run(question: str, backend: Any, generator: FakeGenerator, calls: list[str]) -> list[Any]:
    run = AgenticRun(
        question,
        [RetrieverBinding("kb", search_on(backend, calls=calls))],
        planner=EmbeddedPlanner(),
        generator=generator,
        guardrail=guard(),
    )
    return list(run.events())


def test_a_blocked_question_retrieves_nothing(backend: Any) -> None:
    calls: list[str] = []
    generator = FakeGenerator()
    events = _run("Should I file a lawsuit against Manchester United?", backend, generator, calls)
    assert calls == [] and generator.calls == []
    assert [e.name for e in events] == ["traceEvent", "responseEvent", "result"]
    trace, response, result = events
    assert isinstance(trace, TraceEvent) and trace.step == "Planning"
    assert trace.payload()["attributes"]["warnings"] == [
        {"guardrail": {"action": "INTERVENED", "id": "hr", "version": "1", "message": "Blocked by topic:Legal advice"}}
    ]
    assert response.text == "I can't help with that."
    body = result.payload()
    assert body["results"] == [] and body["guardrailAction"] == "INTERVENED"
    assert body["generatedResponse"]["answer"] == "I can't help with that." and body["warnings"]


def test_a_blocked_answer_is_never_streamed(backend: Any) -> None:
    secret = "The salary grid of Manchester United is private."
    events = _run("Where is Manchester United based?", backend, FakeGenerator(text=secret), [])
    responses = [e.text for e in events if isinstance(e, ResponseEvent)]
    assert responses == ["That answer can't be shared."]
    result = events[-1]
    assert isinstance(result, ResultEvent)
    assert result.answer == "That answer can't be shared." and result.citations == ()
    assert result.guardrail_action == "INTERVENED" and result.results  # passages the caller may read stay
    assert "salary" not in str(result.payload()["generatedResponse"])


def test_an_allowed_answer_is_checked_then_sent_in_pieces(backend: Any) -> None:
    events = _run("Where is Manchester United based?", backend, FakeGenerator(), [])
    result = events[-1]
    assert isinstance(result, ResultEvent) and result.guardrail_action == "NONE"
    pieces = [e.text for e in events if isinstance(e, ResponseEvent)]
    assert "".join(pieces) == result.answer and all(len(p) <= 64 for p in pieces)
