"""A failed LLM rewrite keeps the failure's error code (for the caller's metrics) and logs one
``rewrite.fallback`` event without the message; a rewrite that works keeps none."""

from __future__ import annotations

import logging

import pytest

from assistant_bridge.conversation.memory import MemoryTurn
from assistant_bridge.conversation.rewrite import Rewriter
from assistant_bridge.conversation.rewrite_llm import FakeLLMRewriter
from assistant_bridge.errors import BackendUnavailable, GeneratorError

pytestmark = pytest.mark.unit
HISTORY = [MemoryTurn("What is a Roth IRA?", "What is a Roth IRA?", "A retirement account.", (), (), "answer")]
QUESTION = "Is there a zanzibar penalty for it?"


class _Empty(FakeLLMRewriter):
    def rewrite(self, question: str, history: object) -> str:  # type: ignore[override]
        return "  "


@pytest.mark.parametrize(
    "primary, code, reason",
    [
        (FakeLLMRewriter(GeneratorError("down", reason="timeout")), "generator_error", "timeout"),
        (FakeLLMRewriter(BackendUnavailable("down")), "backend_unavailable", "backend_unavailable"),
        (_Empty(), "generator_error", "empty_rewrite"),
    ],
)
def test_a_fallback_keeps_the_error_code_and_logs_it(
    caplog: pytest.LogCaptureFixture, primary: FakeLLMRewriter, code: str, reason: str
) -> None:
    caplog.set_level(logging.WARNING)
    rw = Rewriter("entire_conversation", primary).rewrite(QUESTION, HISTORY)
    embedded = Rewriter("entire_conversation").rewrite(QUESTION, HISTORY).query  # the fallback's rewrite
    assert (rw.query, rw.method, rw.error_code, rw.fallback_reason) == (embedded, "fallback", code, reason)
    assert rw.query != QUESTION
    assert "error_code" not in rw.to_json()  # not part of the debug output
    logged = [(r.getMessage(), r.mode, r.rewriter, r.code, r.reason) for r in caplog.records]  # type: ignore[attr-defined]
    assert logged == [("rewrite.fallback", "entire_conversation", "llm", code, reason)]


def test_a_working_rewrite_keeps_no_code(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    rw = Rewriter("entire_conversation", FakeLLMRewriter('{"query": "Roth IRA early withdrawal penalty"}')).rewrite(
        QUESTION, HISTORY
    )
    assert rw.method == "llm" and rw.error_code is None and not caplog.records
