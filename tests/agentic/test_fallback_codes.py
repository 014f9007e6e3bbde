"""The error codes a run keeps for its caller's metrics: each round the planner model could not plan (the
embedded planner planned it), the generator's failure and each search an outside system failed, with the code
of the error tree."""

from __future__ import annotations

import pytest

from assistant_bridge.agentic.chat import FakeChatClient
from assistant_bridge.agentic.events import ExceptionEvent
from assistant_bridge.agentic.llm_planner import LLMPlanner
from assistant_bridge.agentic.loop import AgenticRun, RetrieverBinding, RunOptions
from assistant_bridge.domain import SearchHit
from assistant_bridge.errors import BackendUnavailable, EmbedderError, GeneratorError, ValidationFailed
from assistant_bridge.generators import FakeGenerator

from .conftest import Clock, build_backend, search_on

pytestmark = pytest.mark.unit
QUESTION = "Which magazine was started first, Arthur's Magazine or First for Women?"


def _run(planner: LLMPlanner, generator: FakeGenerator | None = None, iterations: int = 2) -> AgenticRun:
    return AgenticRun(
        QUESTION,
        [RetrieverBinding("kb", search_on(build_backend()))],
        planner=planner,
        generator=generator or FakeGenerator(),
        clock=Clock(),
        options=RunOptions(max_iterations=iterations),
    )


@pytest.mark.parametrize(
    "reply, code",
    [
        (GeneratorError("planner model endpoint failed: timed out"), "generator_error"),
        (BackendUnavailable("a dependency of the endpoint is down"), "backend_unavailable"),
        ("not json at all", "generator_error"),
    ],
)
def test_each_round_the_planner_model_failed_is_kept_with_its_code(reply: str | Exception, code: str) -> None:
    planner = LLMPlanner(FakeChatClient(reply))
    run = _run(planner)
    list(run.events())
    assert run.stats.planner_fallbacks == [code] * planner.failures and planner.failures >= 1
    assert run.stats.generator_error is None


def test_a_planner_model_that_answers_keeps_nothing() -> None:
    plan = LLMPlanner(FakeChatClient('{"sufficient": true, "reason": "enough"}'))
    run = _run(plan)
    list(run.events())
    assert run.stats.planner_fallbacks == [] and plan.failures == 0


class _EmbedderDown(FakeGenerator):
    def generate(self, *args: object, **kw: object) -> object:  # type: ignore[override]
        raise EmbedderError("the sentence embedder failed")


def test_the_generators_error_code_is_kept() -> None:
    run = _run(LLMPlanner(FakeChatClient('{"sufficient": true}')), _EmbedderDown())
    events = list(run.events())
    assert isinstance(events[-1], ExceptionEvent) and events[-1].extra == {"resourceName": "generator"}
    assert run.stats.generator_error == "embedder_error"


def test_each_failed_search_keeps_its_code_and_a_request_error_is_not_kept() -> None:
    def down(query: str, limit: int) -> list[SearchHit]:
        raise BackendUnavailable("Milvus search failed")

    def refused(query: str, limit: int) -> list[SearchHit]:
        raise ValidationFailed("bad filter")

    run = AgenticRun(
        QUESTION,
        [
            RetrieverBinding("kb", search_on(build_backend())),
            RetrieverBinding("down", down),
            RetrieverBinding("refused", refused),
        ],
        planner=LLMPlanner(FakeChatClient('{"sufficient": true}')),
        generator=FakeGenerator(),
        clock=Clock(),
        options=RunOptions(max_iterations=1),
    )
    list(run.events())
    assert run.stats.dependency_failures == ["backend_unavailable"]
    assert set(run.stats.failed_retrievers) == {"down", "refused"}
