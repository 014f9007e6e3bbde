"""The embedded planner: comparisons, conjunctions, bridge hops, sufficiency, routing."""

from __future__ import annotations

import pytest

from assistant_bridge.agentic.planner import (
    EmbeddedPlanner,
    EvidenceView,
    PlanningState,
    RetrieverInfo,
    SubQuery,
    route,
)

pytestmark = pytest.mark.unit
ONE = (RetrieverInfo("default"),)


def ev(title: str, text: str = "", *, target: str = "", rank: int = 0, round_: int = 0) -> EvidenceView:
    return EvidenceView(
        title=title,
        text=text or f"{title} is a thing.",
        document_id=f"doc-{title}",
        retriever="default",
        round=round_,
        query=target or "q",
        target=target,
        rank=rank,
    )


def state(
    question: str,
    *evidence: EvidenceView,
    history: tuple[SubQuery, ...] = (),
    iteration: int = 1,
    confidence: float | None = None,
    threshold: float | None = None,
    retrievers: tuple[RetrieverInfo, ...] = ONE,
) -> PlanningState:
    return PlanningState(
        question=question,
        retrievers=retrievers,
        iteration=iteration,
        max_iterations=3,
        history=history,
        evidence=evidence,
        confidence=confidence,
        confidence_threshold=threshold,
    )


COMPARISON = "Which magazine was started first, Arthur's Magazine or First for Women?"
BRIDGE = "The football manager who recruited David Beckham managed Manchester United during what timeframe?"


def test_comparison_gives_one_search_per_entity() -> None:
    plan = EmbeddedPlanner().plan(state(COMPARISON, ev("Women's magazines")))
    assert [s.text for s in plan.sub_queries] == ["Arthur's Magazine", "First for Women"]
    assert all(s.purpose == "entity" and s.retrievers == ("default",) for s in plan.sub_queries)
    assert {s.target for s in plan.sub_queries} == {"Arthur's Magazine", "First for Women"}
    assert not plan.sufficient


def test_comparison_searches_only_the_entity_still_missing() -> None:
    plan = EmbeddedPlanner().plan(state(COMPARISON, ev("Arthur's Magazine")))
    assert [s.target for s in plan.sub_queries] == ["First for Women"]


def test_comparison_is_sufficient_when_each_entity_has_its_passage() -> None:
    plan = EmbeddedPlanner().plan(state(COMPARISON, ev("First for Women"), ev("Arthur's Magazine")))
    assert plan.sufficient and not plan.sub_queries and plan.stops


def test_an_entity_searched_once_is_retried_with_the_focus_words_then_given_up() -> None:
    tried = (SubQuery("First for Women", ("default",), "First for Women", "entity"),)
    plan = EmbeddedPlanner().plan(state(COMPARISON, ev("Arthur's Magazine"), history=tried))
    assert [s.text for s in plan.sub_queries] == ["First for Women started"]
    tried += plan.sub_queries
    again = EmbeddedPlanner().plan(state(COMPARISON, ev("Arthur's Magazine"), history=tried))
    assert not again.sub_queries and again.stops


def test_conjunction_gives_one_search_per_clause() -> None:
    q = "Who was the writer of These Boots Are Made for Walkin' and who died in 2007?"
    plan = EmbeddedPlanner().plan(state(q, ev("Boots (album)")))
    assert [s.purpose for s in plan.sub_queries] == ["clause", "clause"]
    assert plan.sub_queries[1].text == "who died in 2007"


def test_bridge_hop_searches_the_name_found_in_the_first_passage() -> None:
    beckham = ev(
        "David Beckham",
        "David Beckham is an English former footballer. He joined Manchester United after "
        "being recruited by Alex Ferguson in 1991.",
    )
    plan = EmbeddedPlanner().plan(state(BRIDGE, beckham, ev("Manchester United F.C.")))
    bridges = [s for s in plan.sub_queries if s.purpose == "bridge"]
    assert bridges and bridges[0].text == "Alex Ferguson"
    assert not [s for s in plan.sub_queries if s.purpose == "entity"]  # both named entities have their passage


def test_bridge_question_is_sufficient_once_the_hop_found_its_passage() -> None:
    history = (SubQuery("Alex Ferguson", ("default",), "Alex Ferguson", "bridge"),)
    plan = EmbeddedPlanner().plan(
        state(
            BRIDGE,
            ev("David Beckham"),
            ev("Manchester United"),
            ev("Alex Ferguson", target="Alex Ferguson"),
            history=history,
            iteration=2,
        )
    )
    assert plan.sufficient and not plan.sub_queries


def test_confident_plain_question_stops_at_once() -> None:
    plan = EmbeddedPlanner().plan(state("How do I set up the VPN?", ev("VPN setup"), confidence=0.9, threshold=0.5))
    assert plan.sufficient and not plan.sub_queries


def test_unconfident_plain_question_gets_a_keyword_reformulation() -> None:
    plan = EmbeddedPlanner().plan(
        state("how do i configure the wireless printer", ev("Printers"), confidence=0.1, threshold=0.5)
    )
    assert [s.purpose for s in plan.sub_queries] == ["keywords"]
    assert plan.sub_queries[0].text == "configure wireless printer"


def test_first_plan_without_any_evidence_searches_the_question() -> None:
    plan = EmbeddedPlanner().plan(state("What is the leave policy?"))
    assert plan.sub_queries[0].text == "What is the leave policy?"
    assert plan.sub_queries[0].purpose == "question"


def test_a_planner_never_repeats_a_search() -> None:
    history = (SubQuery("Arthur's Magazine", ("default",)), SubQuery("First for Women", ("default",)))
    plan = EmbeddedPlanner().plan(state(COMPARISON, history=history))
    assert not {s.text for s in plan.sub_queries} & {"Arthur's Magazine", "First for Women"}


def test_sub_queries_are_capped() -> None:
    q = "Were Alpha Beta, Gamma Delta, Epsilon Zeta, Eta Theta, Iota Kappa or Lambda Mu founded first?"
    plan = EmbeddedPlanner(max_sub_queries=3).plan(state(q, ev("Nothing")))
    assert len(plan.sub_queries) == 3


def test_route_by_description() -> None:
    infos = (
        RetrieverInfo("hr", "HR policies: leave, holidays, expenses"),
        RetrieverInfo("it", "IT help: VPN, laptops"),
    )
    assert route("VPN on my laptop", infos) == ("it",)
    assert route("expenses for holidays", infos) == ("hr",)
    assert route("the weather", infos) == ("hr", "it")
    assert route("anything", infos[:1]) == ("hr",)
