"""The error codes a run keeps for its caller's metrics: each round the planner model could not plan (the
embedded planner planned it) and the generator's failure, with the code of the error tree."""

from __future__ import annotations

import pytest

from assistant_bridge.agentic.chat import FakeChatClient
from assistant_bridge.agentic.events import ExceptionEvent
from assistant_bridge.agentic.llm_planner import LLMPlanner
from assistant_bridge.agentic.loop import AgenticRun, RetrieverBinding, RunOptions
from assistant_bridge.errors import BackendUnavailable, EmbedderError, GeneratorError
from assistant_bridge.generators import FakeGenerator

from .conftest import Clock, build_backend, search_on

pytestmark = pytest.mark.unit
QUESTION = "Which magazine was started first, Arthur's Magazine or First for Women?"


def _run(planner: LLMPlanner, generator: FakeGenerator | None = None, iterations: int = 2) -> AgenticRun:
    return AgenticRun(QUESTION, [RetrieverBinding("kb", search_on(build_backend()))], planner=planner,
                      generator=generator or FakeGenerator(), clock=Clock(),
                      options=RunOptions(max_iterations=iterations))  # fmt: skip


@pytest.mark.parametrize("reply, code", [
    (GeneratorError("planner model endpoint failed: timed out"), "generator_error"),
    (BackendUnavailable("a dependency of the endpoint is down"), "backend_unavailable"),
    ("not json at all", "generator_error"),
])  # fmt: skip
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
