"""Agentic retrieval (spec §C, Bedrock ``AgenticRetrieveStream``): plan, search, judge, repeat, answer.

* :mod:`.loop` — :class:`~.loop.AgenticRun`, the I/O-free loop that yields the stream events;
* :mod:`.planner`, :mod:`.analysis` — the embedded planner (no LLM); :mod:`.llm_planner`, :mod:`.chat` — the
  planner backed by an OpenAI-compatible chat model, with the embedded one as fallback;
* :mod:`.evidence` — deduplication and ranking across rounds; :mod:`.answer` — snippets and citations;
* :mod:`.guardrail` — BLOCK guardrails; :mod:`.events` — the stream event shapes;
* :mod:`.request` — the request, checked; :mod:`.runtime` — settings and binding to the service's search.

See ``docs/agentic-retrieval.md``.
"""

from .events import ExceptionEvent, ResponseEvent, ResultEvent, StreamEvent, TraceEvent
from .guardrail import Guardrail, load_guardrails
from .loop import AgenticRun, ExpansionPolicy, RetrieverBinding, RunOptions
from .planner import EmbeddedPlanner, Plan, Planner, PlanningState, SubQuery
from .request import AgenticRequest, RetrieverRequest, parse_request

__all__ = [
    "AgenticRequest",
    "AgenticRun",
    "EmbeddedPlanner",
    "ExceptionEvent",
    "ExpansionPolicy",
    "Guardrail",
    "Plan",
    "Planner",
    "PlanningState",
    "ResponseEvent",
    "ResultEvent",
    "RetrieverBinding",
    "RetrieverRequest",
    "RunOptions",
    "StreamEvent",
    "SubQuery",
    "TraceEvent",
    "load_guardrails",
    "parse_request",
]
