"""The LLM planner (``foundationModelType: CUSTOM``): an OpenAI-compatible chat model plans each round.

The model gets the conversation, the retrievers (id and description), the searches already made and the
best passages found so far (numbered, with their document ids), and must answer one JSON object::

    {"sufficient": false, "reason": "…",
     "sub_queries": [{"query": "…", "retrievers": ["default"]}],
     "expand_documents": ["<document id of a passage above>"]}

The reply is checked: unknown retriever ids are dropped (an empty list means every retriever), sub-queries
already made are dropped, at most :data:`MAX_SUB_QUERIES` are kept, and only documents of passages shown to
the model may be expanded. When the model fails or answers something unusable, the embedded planner plans
that iteration instead: the plan carries a warning saying so (it shows in the Planning trace) and the
failure's error code (:attr:`~.planner.Plan.fallback_code`, ``generator_error`` for an unusable answer), and
``agentic.planner_fallback`` is logged without the question.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from assistant_bridge.errors import DependencyError, GeneratorError

from .analysis import fold
from .chat import ChatClient
from .planner import EmbeddedPlanner, Plan, Planner, PlanningState, SubQuery

log = logging.getLogger(__name__)
MAX_SUB_QUERIES = 5
PASSAGE_CHARS = 400
PASSAGES_SHOWN = 8
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")

SYSTEM_PROMPT = """You plan document searches for a question-answering system.
Each round you see the user's question, the retrievers you may search, the searches already made and the best
passages found so far. Decide whether the passages are enough to answer the question. If not, write new
search queries: split comparisons into one query per compared thing, split multi-part questions into parts,
and for questions that describe something instead of naming it, first find the thing, then search for it by
the name you found in the passages. Never repeat a search already made. Ask for a whole document only when
the question needs all of it (a summary) or the answer is spread over one document.
Answer with one JSON object only, no prose:
{"sufficient": true|false, "reason": "<one sentence>",
 "sub_queries": [{"query": "<search text>", "retrievers": ["<retriever id>", ...]}],
 "expand_documents": ["<document id>", ...]}"""


def build_messages(state: PlanningState) -> list[dict[str, str]]:
    lines = [f"Round {state.iteration} of {state.max_iterations}."]
    if len(state.conversation) > 1:
        lines.append("Conversation so far (oldest first):")
        lines += [f"- {role}: {text[:500]}" for role, text in state.conversation[-6:-1]]
    lines.append(f"Question: {state.question}")
    lines.append("Retrievers:")
    lines += [f"- {r.id}: {r.description or 'documents'}" for r in state.retrievers]
    if state.history:
        lines.append("Searches already made:")
        lines += [f"- {q.text} -> {', '.join(q.retrievers)}" for q in state.history]
    if state.evidence:
        lines.append("Best passages so far:")
        for i, e in enumerate(state.evidence[:PASSAGES_SHOWN], start=1):
            text = " ".join(e.text.split())[:PASSAGE_CHARS]
            lines.append(f"[{i}] document {e.document_id} | {e.title}: {text}")
    else:
        lines.append("No passages found yet.")
    if state.confidence is not None:
        lines.append(
            f"Answerability score of the best passages: {state.confidence:.2f}"
            + (f" (pass mark {state.confidence_threshold:.2f})" if state.confidence_threshold is not None else "")
        )
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "\n".join(lines)}]


class PlanError(ValueError):
    """The model's reply is not a usable plan."""


def parse_plan(raw: str, state: PlanningState, model: str) -> Plan:
    """:raises PlanError: when ``raw`` is not a JSON object of the expected shape."""
    try:
        data: Any = json.loads(_FENCE.sub("", raw.strip()))
    except json.JSONDecodeError:
        match = re.search(r"\{.*\}", raw, re.DOTALL)
        if match is None:
            raise PlanError("the reply is not JSON") from None
        try:
            data = json.loads(match.group())
        except json.JSONDecodeError:
            raise PlanError("the reply is not JSON") from None
    if not isinstance(data, dict):
        raise PlanError("the reply is not a JSON object")
    sufficient = data.get("sufficient", False)
    items = data.get("sub_queries", [])
    docs = data.get("expand_documents", [])
    if not isinstance(sufficient, bool) or not isinstance(items, list) or not isinstance(docs, list):
        raise PlanError("sufficient must be a boolean, sub_queries and expand_documents lists")
    ids = [r.id for r in state.retrievers]
    seen = {fold(q.text) for q in state.history}
    subs: list[SubQuery] = []
    for item in items:
        text = item.get("query") if isinstance(item, dict) else item
        if not isinstance(text, str) or not text.strip():
            raise PlanError("every sub-query needs a query text")
        text = " ".join(text.split())[:500]
        wanted = item.get("retrievers") if isinstance(item, dict) else None
        targets = tuple(r for r in (wanted or []) if isinstance(r, str) and r in ids) or tuple(ids)
        if fold(text) in seen or len(subs) >= MAX_SUB_QUERIES:
            continue
        seen.add(fold(text))
        subs.append(SubQuery(text, targets, target=text, purpose="llm"))
    shown = {e.document_id for e in state.evidence[:PASSAGES_SHOWN]}
    expand = tuple(dict.fromkeys(d for d in docs if isinstance(d, str) and d in shown))
    reason = str(data.get("reason") or "").strip()[:300]
    return Plan(
        sub_queries=tuple(subs),
        sufficient=sufficient and not subs,
        expand_documents=expand,
        reason=reason or f"Plan by {model}.",
        planner="llm",
    )


class LLMPlanner:
    """Plans with ``chat``; falls back to ``fallback`` (the embedded planner) for any round it cannot plan."""

    name = "llm"

    def __init__(self, chat: ChatClient, fallback: Planner | None = None, *, max_tokens: int = 512) -> None:
        self.chat = chat
        self.fallback = fallback or EmbeddedPlanner()
        self.max_tokens = max_tokens
        self.failures = 0

    def plan(self, state: PlanningState) -> Plan:
        try:
            raw = self.chat.complete(build_messages(state), json_mode=True, max_tokens=self.max_tokens)
            return parse_plan(raw, state, self.chat.model)
        except DependencyError as exc:
            why, code = exc.message, exc.code
        except PlanError as exc:
            why, code = str(exc), GeneratorError.code  # the model answered garbage
        self.failures += 1
        log.warning(
            "agentic.planner_fallback", extra={"iteration": state.iteration, "code": code, "model": self.chat.model}
        )
        plan = self.fallback.plan(state)
        note = f"The planner model failed ({why}); the embedded planner planned this iteration."
        return Plan(
            sub_queries=plan.sub_queries,
            sufficient=plan.sufficient,
            expand_documents=plan.expand_documents,
            reason=plan.reason,
            planner=plan.planner,
            warnings=(*plan.warnings, note),
            fallback_code=code,
        )
