"""Prometheus metrics. Under gunicorn, ``serve`` sets ``PROMETHEUS_MULTIPROC_DIR`` (see
:mod:`assistant_bridge.metrics_dir`) before this module is imported, so every worker's samples are
aggregated at ``/metrics``.

Metric names are defined here once; other modules record through the helpers (:func:`observe_stages`,
:func:`count_outcome`, :func:`count_backend_error`, :func:`count_fallback`, :func:`count_http_error`). The
core loop records nothing: the layer that calls it (routes, the tool runtime) hands its per-stage timings
and outcome to these helpers.

Every label value is one of a small fixed set (a route name, a stage name, an outcome, an IDK reason, a
configured backend kind, an error code of the error tree): never user text, an id or a tenant. Values
outside the known sets are recorded as ``other``.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest

from assistant_bridge.metrics_dir import multiprocess_dir as multiprocess_dir  # where it was first defined

if TYPE_CHECKING:
    from assistant_bridge.errors import DependencyError
    from assistant_bridge.settings import Settings

REQUESTS = Counter("assistant_bridge_http_requests_total", "HTTP requests", ["route", "method", "status"])
LATENCY = Histogram(
    "assistant_bridge_http_request_duration_seconds",
    "HTTP request latency",
    ["route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
STAGES = Histogram(
    "assistant_bridge_stage_duration_seconds",
    "Duration of one stage of a turn or search (search, pre_filter, generation, post_filter, ...)",
    ["route", "stage"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
IDK = Counter(
    "assistant_bridge_idk_total",
    "Turns answered with a fallback message (I don't know, no results, connectivity), by reason",
    ["route", "reason"],
)
OUTCOMES = Counter(
    "assistant_bridge_answer_outcomes_total", "Turn outcomes: answer, idk, error, ...", ["route", "outcome"]
)
BACKEND_ERRORS = Counter(
    "assistant_bridge_backend_errors_total",
    "Errors from outside systems, by the kind of system and the error code of the error tree",
    ["backend", "code"],
)
RATE_LIMITED = Counter("assistant_bridge_rate_limited_total", "Requests refused by the per-key rate limit", ["key"])

ROUTES = frozenset({"message", "rag_search", "agentic", "relay", "search"})
STAGE_NAMES = frozenset(
    {
        "rewrite",
        "embedding",
        "search",
        "snippets",
        "pre_filter",
        "truncation",
        "generation",
        "post_filter",
        "citations",
        "planning",
        "speculative_retrieval",
        "retrieval",
        "document_expansion",
    }
)
IDK_REASONS = frozenset(
    {
        "retrieval_confidence",
        "generator_declined",
        "response_confidence",
        "no_results",
        "prompt_too_long",
        "backend_error",
    }
)
# the service's outcome names (/message turns, rag_search results, the relay's classification) -> the metric's
_OUTCOMES = {
    "answer": "answer",
    "search": "answer",
    "idk": "idk",
    "no_results": "idk",
    "search_failed": "error",
    "connectivity": "error",
    "error": "error",
    "hap": "blocked",
    "blocked": "blocked",
    "client_search": "client_search",
    "social": "social",
}
# a model whose failure a turn survives by falling back (component -> the metric's backend): the agentic LLM
# planner (the embedded planner plans instead) and the query-rewrite LLM (the embedded rewriter rewrites instead)
FALLBACK_BACKENDS = {"planner": "planner_llm", "rewrite": "rewrite_llm"}
_RELAY_SEARCH_CODES = frozenset({"relay_search_failed", "invalid_search_results"})
_RELAY_CODES = frozenset(
    {
        "relay_error",
        "assistant_unavailable",
        "assistant_http_error",
        "token_exchange_failed",
        "malformed_assistant_response",
        "invalid_search_action",
        "search_loop_exceeded",
        "relay_request_too_large",
    }
)


def _known(value: str, known: frozenset[str]) -> str:
    return value if value in known else "other"


def observe_stage(route: str, stage: str, seconds: float) -> None:
    STAGES.labels(route=_known(route, ROUTES), stage=_known(stage, STAGE_NAMES)).observe(max(0.0, seconds))


def observe_stages(route: str, timings_ms: Mapping[str, float]) -> None:
    """Record ``stage -> milliseconds`` (the loop's ``timings`` and the caller's own); ``total`` is skipped."""
    for stage, ms in timings_ms.items():
        if stage != "total":
            observe_stage(route, stage, ms / 1000.0)


def outcome_label(outcome: str) -> str:
    """The metric's outcome (``answer``, ``idk``, ``error``, ``blocked``, ``client_search``, ``social`` or
    ``other``) of an outcome name of the service (``answer``, ``no_results``, ``connectivity``, ``hap``...)."""
    return _OUTCOMES.get(outcome, "other")


def idk_reason(outcome: str, reason: str | None = None) -> str | None:
    """Why a turn with this outcome answered with one of the assistant's fallback messages ("I don't know",
    no results, the connectivity message), or ``None`` when it did not (an answer, a block, a search handed
    to the client, an error answered as an error). ``reason`` is the loop's IDK reason of an ``idk`` outcome."""
    if outcome == "idk":
        return reason or "other"
    return {"no_results": "no_results", "search_failed": "prompt_too_long", "connectivity": "backend_error"}.get(
        outcome
    )


def count_outcome(route: str, outcome: str, reason: str | None = None) -> None:
    """Count one finished turn: its outcome, and the IDK reason when it did not answer.

    :param outcome: an outcome name of the service (see :func:`outcome_label`).
    :param reason: the loop's IDK reason (``retrieval_confidence``...) of an ``idk`` outcome.
    """
    route = _known(route, ROUTES)
    OUTCOMES.labels(route=route, outcome=outcome_label(outcome)).inc()
    why = idk_reason(outcome, reason)
    if why is not None:
        IDK.labels(route=route, reason=_known(why, IDK_REASONS)).inc()


def backend_of(code: str, settings: Settings, generator: str | None = None) -> str:
    """The kind of outside system an error code of the tree comes from: the configured search backend
    (``milvus-lite``, ``elasticsearch``...), the embedder (``e5-small``, ``openai``...), the generator
    (its name when known), ``custom_search`` (a remote search server), ``storage`` (the data directory is
    full), ``assistant`` or ``search_provider`` (the relay's), else ``other``."""
    if code == "backend_unavailable":
        return settings.backend.kind
    if code == "embedder_error":
        return settings.embedder.kind
    if code == "generator_error":
        return generator or "generator"
    if code == "search_service_error":
        return "custom_search"
    if code == "insufficient_storage":
        return "storage"
    if code in _RELAY_SEARCH_CODES:
        return "search_provider"
    if code in _RELAY_CODES:
        return "assistant"
    return "other"


_passed_on: weakref.WeakSet[BaseException] = weakref.WeakSet()


def count_backend_error(backend: str, code: str, passed_on: BaseException | None = None) -> None:
    """Count one failure of an outside system.

    :param backend: from :func:`backend_of`, or a generator's name.
    :param code: the error's code in the error tree.
    :param passed_on: the error, when the caller raises it on to become the HTTP answer:
        :func:`count_http_error` then leaves it to this count.
    """
    if passed_on is not None:
        _passed_on.add(passed_on)
    BACKEND_ERRORS.labels(backend=backend[:64], code=code[:64]).inc()


def count_fallback(component: str, code: str) -> None:
    """Count one failure of a model that the turn survived by falling back, so that a model that is down
    shows even though every turn still answers.

    :param component: ``planner`` (the agentic LLM planner) or ``rewrite`` (the query-rewrite LLM); recorded
        as backend ``planner_llm`` or ``rewrite_llm`` (anything else as ``other``).
    :param code: the failure's code in the error tree (``generator_error``...).
    """
    count_backend_error(FALLBACK_BACKENDS.get(component, "other"), code)


def count_http_error(error: DependencyError, settings: Settings) -> None:
    """Count a dependency error that became an HTTP answer, unless the layer that knew which system failed
    counted it already (and passed it on)."""
    if error in _passed_on:
        _passed_on.discard(error)
        return
    count_backend_error(backend_of(error.code, settings), error.code)


def render() -> tuple[bytes, str]:
    """The exposition text: aggregated over workers in multiprocess mode, else this process's registry."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(), CONTENT_TYPE_LATEST
