"""The agentic loop with fake search functions: bounds, early stop, dedup, failures, expansion, answers."""

from __future__ import annotations

from typing import Any

import pytest

from assistant_bridge.agentic.events import ExceptionEvent, ResponseEvent, ResultEvent, TraceEvent
from assistant_bridge.agentic.evidence import FullDocument
from assistant_bridge.agentic.loop import AgenticRun, ExpansionPolicy, RetrieverBinding, RunOptions
from assistant_bridge.agentic.planner import EmbeddedPlanner, Plan, PlanningState, SubQuery
from assistant_bridge.domain import Chunk, Ownership, SearchHit
from assistant_bridge.errors import BackendUnavailable
from assistant_bridge.generators import FakeGenerator

from .conftest import Clock, build_backend, failing, search_on

pytestmark = pytest.mark.unit
COMPARISON = "Which magazine was started first, Arthur's Magazine or First for Women?"
BRIDGE = "The football manager who recruited David Beckham managed Manchester United during what timeframe?"


class EndlessPlanner:
    """Always wants one more search."""

    name = "endless"

    def __init__(self) -> None:
        self.calls = 0

    def plan(self, state: PlanningState) -> Plan:
        self.calls += 1
        return Plan(
            sub_queries=(SubQuery(f"magazine {self.calls}", tuple(r.id for r in state.retrievers)),), reason="more"
        )


def run_of(question: str, bindings: list[RetrieverBinding], **kw: Any) -> AgenticRun:
    kw.setdefault("planner", EmbeddedPlanner())
    kw.setdefault("generator", FakeGenerator())
    kw.setdefault("clock", Clock())
    return AgenticRun(question, bindings, **kw)


def traces(events: list[Any], step: str | None = None, status: str | None = None) -> list[TraceEvent]:
    return [
        e
        for e in events
        if isinstance(e, TraceEvent) and (step is None or e.step == step) and (status is None or e.status == status)
    ]


def test_iterations_are_bounded_by_max_agent_iteration(backend: Any) -> None:
    calls: list[str] = []
    planner = EndlessPlanner()
    run = run_of(
        COMPARISON,
        [RetrieverBinding("kb", search_on(backend, calls=calls))],
        planner=planner,
        options=RunOptions(max_iterations=2),
    )
    events = list(run.events())
    assert planner.calls == 2 and run.stats.iterations == 2 and run.stats.stopped == "max_iterations"
    assert len(traces(events, "Planning", "IN_PROGRESS")) == 2
    assert calls == [COMPARISON, "magazine 1", "magazine 2"]  # speculative + one round per iteration
    assert isinstance(events[-1], ResultEvent)


def test_stops_early_when_the_evidence_suffices(backend: Any) -> None:
    run = run_of(
        COMPARISON, [RetrieverBinding("kb", search_on(backend), limit=2)], options=RunOptions(max_iterations=5)
    )
    events = list(run.events())
    assert run.stats.stopped == "sufficient" and run.stats.iterations <= 2
    titles = [r.metadata["title"] for r in events[-1].results]
    assert {"Arthur's Magazine", "First for Women"} <= set(titles[:3])


def test_bridge_question_reaches_the_second_hop(backend: Any) -> None:
    calls: list[str] = []
    run = run_of(BRIDGE, [RetrieverBinding("kb", search_on(backend, calls=calls), limit=1)])
    events = list(run.events())
    assert "Alex Ferguson" in calls
    assert "Alex Ferguson" in [r.metadata["title"] for r in events[-1].results][:3]


def test_results_are_deduplicated_across_rounds() -> None:
    same = Chunk(id="c1", document_id="d1", title="T", text="The only passage.")
    twin = Chunk(id="c2", document_id="d2", title="T copy", text="  the only passage ")

    def search(text: str, limit: int) -> list[SearchHit]:
        return [SearchHit(same, 1.0), SearchHit(twin, 0.9)]

    run = run_of(
        COMPARISON, [RetrieverBinding("kb", search)], planner=EndlessPlanner(), options=RunOptions(max_iterations=3)
    )
    result = list(run.events())[-1]
    assert isinstance(result, ResultEvent)
    assert [r.metadata["chunk_id"] for r in result.results] == ["c1"]
    assert run.stats.retrieval_calls == 4


def test_a_failing_retriever_gives_a_failed_trace_and_the_run_continues(backend: Any) -> None:
    bad_calls: list[str] = []
    run = run_of(
        COMPARISON,
        [RetrieverBinding("broken", failing(bad_calls)), RetrieverBinding("kb", search_on(backend))],
        planner=EndlessPlanner(),
        options=RunOptions(max_iterations=2),
    )
    events = list(run.events())
    failed = traces(events, status="FAILED")
    assert len(failed) == 1 and failed[0].retrievers == ("broken",)
    assert failed[0].failures == ("backend_unavailable: search backend unreachable",)
    assert failed[0].payload()["attributes"]["failures"] == [
        {"message": "backend_unavailable: search backend unreachable"}
    ]
    assert bad_calls == [COMPARISON]  # left out of the later rounds
    assert run.stats.failed_retrievers == ["broken"]
    result = events[-1]
    assert isinstance(result, ResultEvent) and result.results
    assert {r.retriever for r in result.results} == {"kb"}


def test_every_retriever_failing_ends_with_dependency_failed() -> None:
    run = run_of(COMPARISON, [RetrieverBinding("a", failing()), RetrieverBinding("b", failing())])
    events = list(run.events())
    last = events[-1]
    assert isinstance(last, ExceptionEvent) and last.name == "dependencyFailedException"
    assert last.payload() == {"message": "Every retriever failed; nothing could be retrieved.", "resourceName": "a,b"}
    assert not [e for e in events if isinstance(e, (ResultEvent, ResponseEvent))]


def _policy_doc() -> tuple[list[Chunk], FullDocument]:
    parts = [
        "Remote work is allowed two days a week.",
        "Managers approve remote days in the HR tool.",
        "Equipment for home offices is reimbursed up to 300 euros.",
    ]
    chunks = [
        Chunk(id=f"p{i}", document_id="policy", title="Remote work policy", text=t, position=i, ownership=Ownership())
        for i, t in enumerate(parts)
    ]
    return chunks, FullDocument("policy", "Remote work policy", " ".join(parts), len(parts))


def test_full_document_expansion_when_the_best_hits_share_a_document() -> None:
    chunks, doc = _policy_doc()
    backend = build_backend({"Other": "Unrelated text about remote controls."}, chunks=chunks)
    fetched: list[str] = []

    def fetch(document_id: str) -> FullDocument | None:
        fetched.append(document_id)
        return doc if document_id == "policy" else None

    run = run_of(
        "remote work days managers approve", [RetrieverBinding("kb", search_on(backend))], fetch_document=fetch
    )
    events = list(run.events())
    done = traces(events, "FullDocumentExpansion", "SUCCEEDED")
    assert fetched == ["policy"] and len(done) == 1
    assert done[0].actions[0].to_json() == {
        "fullDocumentExpansion": {"documentId": "policy", "sourceRetriever": {"identifier": "kb"}}
    }
    result = events[-1]
    assert isinstance(result, ResultEvent)
    full = [r for r in result.results if r.metadata.get("full_document")]
    assert len(full) == 1 and full[0].text == doc.text and full[0].metadata["chunk_count"] == 3
    assert not [
        r for r in result.results if r.metadata.get("document_id") == "policy" and not r.metadata.get("full_document")
    ]


def test_summary_request_expands_the_top_document_and_a_missing_one_fails() -> None:
    chunks, _ = _policy_doc()
    backend = build_backend({}, chunks=chunks[:1])
    run = run_of(
        "Summarize the remote work policy",
        [RetrieverBinding("kb", search_on(backend))],
        fetch_document=lambda _id: None,
    )
    events = list(run.events())
    failed = traces(events, "FullDocumentExpansion", "FAILED")
    assert len(failed) == 1 and failed[0].failures == ("document not found",)
    assert isinstance(events[-1], ResultEvent)


def test_expansion_can_be_turned_off(backend: Any) -> None:
    chunks, doc = _policy_doc()
    run = run_of(
        "Summarize the remote work policy",
        [RetrieverBinding("kb", search_on(build_backend({}, chunks=chunks)))],
        fetch_document=lambda _id: doc,
        options=RunOptions(expansion=ExpansionPolicy(enabled=False)),
    )
    assert not traces(list(run.events()), "FullDocumentExpansion")


def test_event_order_and_streamed_answer(backend: Any) -> None:
    run = run_of(
        COMPARISON, [RetrieverBinding("kb", search_on(backend), limit=2)], generator=FakeGenerator(chunk_chars=5)
    )
    events = list(run.events())
    kinds = [e.name for e in events]
    assert kinds[0] == "traceEvent" and kinds[-1] == "result"
    steps = [e.step for e in traces(events)]
    assert steps[0] == "SpeculativeRetrieval" and steps.index("Planning") > steps.index("SpeculativeRetrieval")
    first_response = kinds.index("responseEvent")
    assert all(k == "responseEvent" for k in kinds[first_response:-1])
    result = events[-1]
    assert isinstance(result, ResultEvent)
    assert "".join(e.text for e in events if isinstance(e, ResponseEvent)) == result.answer
    assert result.citations
    for c in result.citations:
        span = result.answer[c.start : c.end]  # type: ignore[index]
        assert 0 <= c.start < c.end <= len(result.answer or "")
        assert all(span in result.results[i].text for i in c.result_indexes)
    ids = [e.id for e in traces(events)]
    assert len(set(ids)) == len(ids)
    stamps = [e.timestamp for e in traces(events)]
    assert stamps == sorted(stamps) and stamps[0] > 1_700_000_000_000


def test_without_generation_there_is_no_answer(backend: Any) -> None:
    run = run_of(
        COMPARISON, [RetrieverBinding("kb", search_on(backend))], generator=None, options=RunOptions(generate=False)
    )
    events = list(run.events())
    assert not [e for e in events if isinstance(e, ResponseEvent)]
    assert "generatedResponse" not in events[-1].payload()


def test_a_generator_failure_ends_with_results_then_dependency_failed(backend: Any) -> None:
    run = run_of(COMPARISON, [RetrieverBinding("kb", search_on(backend))], generator=FakeGenerator(error="down"))
    events = list(run.events())
    result, last = events[-2], events[-1]
    assert isinstance(result, ResultEvent) and result.results and result.answer is None
    assert isinstance(last, ExceptionEvent) and last.payload()["resourceName"] == "generator"


def test_no_results_answers_i_dont_know() -> None:
    run = run_of("zzz qqq", [RetrieverBinding("kb", lambda text, limit: [])])
    events = list(run.events())
    assert events[-1].payload()["generatedResponse"] == {"answer": "I don't know", "citations": []}


def test_reranking_off_keeps_discovery_order(backend: Any) -> None:
    run = run_of(COMPARISON, [RetrieverBinding("kb", search_on(backend), limit=3)], options=RunOptions(rerank=False))
    events = list(run.events())
    spec = traces(events, "SpeculativeRetrieval", "SUCCEEDED")[0]
    first = [r.metadata["chunk_id"] for r in spec.retrieved]
    assert [r.metadata["chunk_id"] for r in events[-1].results][: len(first)] == first


def test_the_prefilter_is_asked_before_each_plan(backend: Any) -> None:
    from assistant_bridge.filters import FakePreFilter

    pre = FakePreFilter(0.9)
    run = run_of(
        "Where is Manchester United based?", [RetrieverBinding("kb", search_on(backend))], prefilter=pre, threshold=0.5
    )
    list(run.events())
    assert len(pre.calls) == 1 and run.stats.stopped == "sufficient" and run.stats.retrieval_calls == 1


def test_the_constructor_checks_its_options(backend: Any) -> None:
    with pytest.raises(ValueError):
        AgenticRun("q", [RetrieverBinding("kb", search_on(backend))], planner=EmbeddedPlanner(), generator=None)
    with pytest.raises(ValueError):
        AgenticRun("q", [], planner=EmbeddedPlanner(), generator=FakeGenerator(), options=RunOptions(max_iterations=0))


def test_backend_errors_other_than_the_tree_are_not_swallowed(backend: Any) -> None:
    def broken(text: str, limit: int) -> list[SearchHit]:
        raise RuntimeError("bug")

    with pytest.raises(RuntimeError):
        list(run_of("q", [RetrieverBinding("kb", broken)]).events())
    assert BackendUnavailable("x").status == 503


def test_a_planner_that_stops_before_any_search_gives_empty_results() -> None:
    class Satisfied:
        name = "satisfied"

        def plan(self, state: PlanningState) -> Plan:
            return Plan(sufficient=True, reason="nothing to do")

    run = run_of("q", [RetrieverBinding("kb", failing())], planner=Satisfied(), options=RunOptions(speculative=False))
    events = list(run.events())
    assert isinstance(events[-1], ResultEvent) and events[-1].results == ()
    assert run.stats.retrieval_calls == 0
