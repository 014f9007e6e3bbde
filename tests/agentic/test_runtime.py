"""Agentic settings, configured retrievers, scoped document reading and run assembly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.agentic.llm_planner import LLMPlanner
from assistant_bridge.agentic.planner import EmbeddedPlanner
from assistant_bridge.agentic.request import AgenticRequest, RetrieverRequest
from assistant_bridge.agentic.runtime import AgenticRuntime, AgenticSettings, load_retrievers, runtime_for, stitch
from assistant_bridge.core.filters import And
from assistant_bridge.domain import Chunk, Ownership, Principal, Scope
from assistant_bridge.errors import ConfigurationError, NotFound, ValidationFailed
from assistant_bridge.generators import FakeGenerator
from tests.conftest import make_services, make_settings

pytestmark = pytest.mark.unit


def test_settings_defaults_and_checks() -> None:
    s = AgenticSettings.from_table({})
    assert (s.default_max_iterations, s.max_iterations, s.results_per_query, s.max_results) == (3, 10, 5, 25)
    s = AgenticSettings.from_table({"default_max_iterations": 4, "expansion": {"concentration": 3, "max_chars": 500}})
    assert s.default_max_iterations == 4 and s.expansion.concentration == 3 and s.max_document_chars == 500
    for bad in (
        {"default_max_iterations": 1},
        {"colour": 1},
        {"max_results": 0},
        {"planner": {"model": "m"}},
        {"expansion": {"bogus": 1}},
        {"results_per_query": "many"},
    ):
        with pytest.raises(ConfigurationError):
            AgenticSettings.from_table(bad)


def test_configured_retrievers(tmp_path: Path) -> None:
    s = make_settings(
        tmp_path,
        retrievers={"hr": {"description": "HR", "mode": "lexical", "filter": "title == 'x'", "max_results": 3}},
    )
    found = load_retrievers(s)
    assert set(found) == {"default", "hr"} and found["hr"].mode == "lexical" and found["hr"].max_results == 3
    for bad in (
        {"hr": {"mode": "fuzzy"}},
        {"hr": {"filter": "tenant == 'a'"}},
        {"hr": {"collection": "other"}},
        {"hr": {"colour": 1}},
        {"bad id!": {}},
    ):
        with pytest.raises(ConfigurationError):
            load_retrievers(make_settings(tmp_path, retrievers=bad))


def test_stitch_removes_the_overlap_between_chunks() -> None:
    text = "Alpha beta gamma delta epsilon."
    chunks = [
        Chunk(id="1", document_id="d", title="t", text=text[0:16], start_char=0, end_char=16),
        Chunk(id="2", document_id="d", title="t", text=text[11:31], start_char=11, end_char=31, position=1),
    ]
    assert stitch(chunks) == text
    assert (
        stitch(
            [
                Chunk(id="a", document_id="d", title="t", text="One."),
                Chunk(id="b", document_id="d", title="t", text="Two."),
            ]
        )
        == "One.\n\nTwo."
    )


def test_fetch_document_respects_scope(tmp_path: Path) -> None:
    svc = make_services(make_settings(tmp_path))
    rt = AgenticRuntime(svc, generator=FakeGenerator())
    mine = Ownership(owner_user_id="alice")
    doc = svc.ingestor.ingest_text("Private notes about the budget. " * 5, title="Notes", ownership=mine).document
    alice = Scope(Principal("alice"))
    bob = Scope(Principal("bob"))
    full = rt.fetch_document(alice)(doc.id)
    assert full is not None and full.text.startswith("Private notes") and full.title == "Notes"
    assert rt.fetch_document(bob)(doc.id) is None
    assert rt.fetch_document(alice)("no-such-document") is None


def test_build_run_combines_filters_and_checks_guardrail_and_planner(tmp_path: Path) -> None:
    s = make_settings(
        tmp_path, retrievers={"hr": {"filter": "language == 'en'"}}, guardrails={"hr": {"1": {"denied_words": ["x"]}}}
    )
    svc = make_services(s)
    rt = runtime_for(svc)
    rt._generator = FakeGenerator()  # noqa: SLF001 - avoid loading the extractive model in a unit test
    assert runtime_for(svc) is rt
    from assistant_bridge.core.filters import Comparison

    req = AgenticRequest("q", (RetrieverRequest("hr", Comparison("title", "==", "T"), 4),), guardrail=("hr", "1"))
    scope = Scope(Principal("u"))
    binding = rt.bindings(req, scope)[0]
    assert binding.limit == 4
    run = rt.build_run(req, scope)
    assert run.guardrail is not None and isinstance(run.planner, EmbeddedPlanner)
    assert run.options.max_iterations == 3
    with pytest.raises(NotFound):
        rt.build_run(AgenticRequest("q", req.retrievers, guardrail=("hr", "9")), scope)
    with pytest.raises(ValidationFailed):
        rt.build_run(AgenticRequest("q", req.retrievers, planner="CUSTOM"), scope)
    expr: Any = None

    def capture(text: str, _scope: Scope, **kw: Any) -> list[Any]:
        nonlocal expr
        expr = kw["filter"]
        return []

    svc.search = capture  # type: ignore[method-assign]
    rt.bindings(req, scope)[0].search("q", 3)
    assert isinstance(expr, And) and len(expr.items) == 2


def test_custom_planner_uses_the_configured_model(tmp_path: Path) -> None:
    from assistant_bridge.agentic.chat import FakeChatClient

    svc = make_services(make_settings(tmp_path))
    rt = AgenticRuntime(svc, generator=FakeGenerator(), chat=FakeChatClient())
    req = AgenticRequest("q", (RetrieverRequest("default"),), planner="CUSTOM", max_iterations=5)
    run = rt.build_run(req, Scope(Principal("u")))
    assert isinstance(run.planner, LLMPlanner) and run.options.max_iterations == 5


def test_the_prefilter_scores_evidence_for_the_llm_planner_only_unless_configured(tmp_path: Path) -> None:
    """``agentic.sufficiency``: ``auto`` hands the pre-generation filter to runs with an LLM planner only (it
    reads the score in its prompt); ``prefilter`` to every run; ``none`` to none."""
    from assistant_bridge.agentic.chat import FakeChatClient

    class Pre:
        def score(self, query: str, snippets: Any) -> float:
            return 0.5

    pre = Pre()
    managed = AgenticRequest("q", (RetrieverRequest("default"),))
    custom = AgenticRequest("q", (RetrieverRequest("default"),), planner="CUSTOM")
    for mode, expected in (("auto", (None, pre)), ("prefilter", (pre, pre)), ("none", (None, None))):
        svc = make_services(make_settings(tmp_path, agentic={"sufficiency": mode}))
        rt = AgenticRuntime(svc, generator=FakeGenerator(), prefilter=pre, threshold=0.3, chat=FakeChatClient())
        runs = [rt.build_run(r, Scope(Principal("u"))) for r in (managed, custom)]
        assert tuple(r.prefilter for r in runs) == expected, mode
        assert all(r.threshold == (0.3 if r.prefilter else None) for r in runs)
    assert AgenticSettings.from_table({}).sufficiency == "auto"
    with pytest.raises(ConfigurationError, match="agentic.sufficiency"):
        AgenticSettings.from_table({"sufficiency": "sometimes"})


def test_planner_settings_build_an_http_client(tmp_path: Path) -> None:
    s = make_settings(
        tmp_path,
        agentic={"planner": {"base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key": "sk-1", "timeout": 2}},
    )
    rt = AgenticRuntime(make_services(s), generator=FakeGenerator())
    assert rt.chat is not None and rt.chat.model == "m"
    with pytest.raises(ConfigurationError):
        AgenticRuntime(
            make_services(make_settings(tmp_path, agentic={"planner": {"base_url": "u", "model": "m", "colour": 1}}))
        )


def test_results_per_search_fall_back_from_request_to_retriever_to_settings(tmp_path: Path) -> None:
    s = make_settings(tmp_path, agentic={"results_per_query": 7}, retrievers={"hr": {"max_results": 2}})
    rt = AgenticRuntime(make_services(s), generator=FakeGenerator())
    req = AgenticRequest("q", (RetrieverRequest("default"), RetrieverRequest("hr"), RetrieverRequest("x", None, 9)))
    rt.retrievers["x"] = rt.retrievers["default"]
    assert [b.limit for b in rt.bindings(req, Scope(Principal("u")))] == [7, 2, 9]
