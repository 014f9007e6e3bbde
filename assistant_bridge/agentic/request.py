"""The ``agenticRetrieveStream`` request, checked and typed (spec §C.2).

The JSON Schema (``schemas/agentic_request.schema.json``) checks the shape at the edge; :func:`parse_request`
checks what a schema cannot say well and names the field of every problem (``$.retrievers[1]...``):

* at least one ``user`` message with text; the last one is the question, earlier ones are context;
* 1 to 5 retrievers, each naming a configured retriever once, either Bedrock style
  (``configuration.knowledgeBase.knowledgeBaseId`` with ``retrievalOverrides.filter`` and
  ``retrievalOverrides.maxNumberOfResults``) or in the short form ``{id, filter, maxNumberOfResults}``;
* a ``RetrievalFilter`` that converts (:func:`~assistant_bridge.core.filters.from_retrieval_filter`);
* ``maxAgentIteration`` up to the configured cap (0 and 1 run the least the loop needs, 2 rounds); ``rerankingModelType`` MANAGED or NONE;
* no ``nextToken`` (all results arrive in one ``result`` event) and no ``memoryConfiguration``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from assistant_bridge.core.filters import DEFAULT_FIELDS, Expr, FieldSpec, from_retrieval_filter
from assistant_bridge.errors import FilterSyntaxError, ValidationFailed

MAX_RETRIEVERS = 5
MIN_ITERATIONS = 2
# Bedrock's service model allows knowledge base ids of at most 10 letters and digits, which the AWS SDKs check
# before sending: DEFAULTKB0 names the default retriever (the service's own backend); a retriever of another
# id is named by its id, which a boto3 caller can use when it is 10 letters or digits
DEFAULT_KNOWLEDGE_BASE_ID = "DEFAULTKB0"
KNOWLEDGE_BASE_ALIASES = {DEFAULT_KNOWLEDGE_BASE_ID: "default"}


@dataclass(frozen=True)
class RetrieverRequest:
    id: str
    filter: Expr | None = None
    max_results: int | None = None
    description: str = ""


@dataclass(frozen=True)
class AgenticRequest:
    question: str
    retrievers: tuple[RetrieverRequest, ...]
    conversation: tuple[tuple[str, str], ...] = ()  # (role, text), oldest first, ending with the question
    planner: Literal["MANAGED", "CUSTOM"] = "MANAGED"
    max_iterations: int | None = None  # None = the configured default
    rerank: bool = True
    guardrail: tuple[str, str] | None = None  # (id, version)
    user_id: str | None = None
    generate: bool = True


def _fail(path: str, message: str) -> ValidationFailed:
    return ValidationFailed(f"{path}: {message}", path=path)


def _question(messages: list[Mapping[str, Any]]) -> tuple[str, tuple[tuple[str, str], ...]]:
    conversation = tuple((str(m["role"]), str((m.get("content") or {}).get("text") or "")) for m in messages)
    users = [i for i, (role, text) in enumerate(conversation) if role == "user" and text.strip()]
    if not users:
        raise _fail("$.messages", "at least one message with role 'user' and non-empty content.text is required")
    last = users[-1]
    return conversation[last][1].strip(), tuple(c for c in conversation[: last + 1] if c[1].strip())


def _retriever(
    item: Mapping[str, Any], i: int, known: Collection[str], max_results_cap: int, fields: Mapping[str, FieldSpec]
) -> RetrieverRequest:
    here = f"$.retrievers[{i}]"
    kb = (item.get("configuration") or {}).get("knowledgeBase")
    if kb is not None:
        rid, base = kb.get("knowledgeBaseId"), f"{here}.configuration.knowledgeBase"
        overrides = kb.get("retrievalOverrides") or {}
        opath = f"{base}.retrievalOverrides"
        if "id" in item and item["id"] != rid:
            raise _fail(f"{here}.id", "give either id or configuration.knowledgeBase.knowledgeBaseId, not both")
        id_path = f"{base}.knowledgeBaseId"
    else:
        rid, overrides, opath, id_path = item.get("id"), item, here, f"{here}.id"
    if not isinstance(rid, str) or not rid:
        raise _fail(id_path, "a retriever id is required (configuration.knowledgeBase.knowledgeBaseId or id)")
    rid = KNOWLEDGE_BASE_ALIASES.get(rid, rid) if rid not in known else rid
    if rid not in known:
        raise _fail(id_path, f"unknown retriever {rid[:64]!r}; configured: {', '.join(sorted(known))}")
    expr = None
    if overrides.get("filter") is not None:
        fpath = f"{opath}.filter"
        try:
            expr = from_retrieval_filter(overrides["filter"], fields)
        except FilterSyntaxError as exc:
            inner = str(exc.details.get("path", "$"))
            full = fpath + inner[1:]
            message = exc.message.replace(f" at {inner}", "")
            raise FilterSyntaxError(f"{full}: {message}", path=full) from None
    limit = overrides.get("maxNumberOfResults")
    if limit is not None and limit > max_results_cap:
        raise _fail(f"{opath}.maxNumberOfResults", f"must be at most {max_results_cap}, got {limit}")
    return RetrieverRequest(rid, expr, limit, str(item.get("description") or ""))


def parse_request(
    body: Mapping[str, Any],
    *,
    known_retrievers: Collection[str],
    max_iterations_cap: int = 10,
    max_results_cap: int = 50,
    fields: Mapping[str, FieldSpec] = DEFAULT_FIELDS,
) -> AgenticRequest:
    """Turn a schema-valid body into an :class:`AgenticRequest`.

    :raises ValidationFailed: naming the JSON path of the first problem.
    :raises FilterSyntaxError: for a filter that does not convert, naming its JSON path.
    """
    for unsupported, why in (
        ("nextToken", "pagination is not supported; every result arrives in one result event"),
        ("memoryConfiguration", "memory is not supported by this service"),
    ):
        if body.get(unsupported) is not None:
            raise _fail(f"$.{unsupported}", why)
    question, conversation = _question(list(body.get("messages") or []))
    items = list(body.get("retrievers") or [])
    if not 1 <= len(items) <= MAX_RETRIEVERS:
        raise _fail("$.retrievers", f"between 1 and {MAX_RETRIEVERS} retrievers are allowed, got {len(items)}")
    retrievers: list[RetrieverRequest] = []
    for i, item in enumerate(items):
        r = _retriever(item, i, known_retrievers, max_results_cap, fields)
        if any(x.id == r.id for x in retrievers):
            raise _fail(f"$.retrievers[{i}]", f"retriever {r.id!r} is listed twice")
        retrievers.append(r)
    cfg = body.get("agenticRetrieveConfiguration") or {}
    iterations = cfg.get("maxAgentIteration")
    where = "$.agenticRetrieveConfiguration"
    if iterations is not None and iterations > max_iterations_cap:
        raise _fail(f"{where}.maxAgentIteration", f"must be at most {max_iterations_cap}, got {iterations}")
    if iterations is not None and iterations < MIN_ITERATIONS:
        iterations = MIN_ITERATIONS  # 0 and 1 (which the service model allows) run the loop's least: plan, check
    rerank_type = cfg.get("rerankingModelType", "MANAGED")
    if rerank_type == "CUSTOM":
        raise _fail(f"{where}.rerankingModelType", "CUSTOM reranking is not supported; use MANAGED or NONE")
    guard = (body.get("policyConfiguration") or {}).get("bedrockGuardrailConfiguration")
    user = (body.get("userContext") or {}).get("userId")
    return AgenticRequest(
        question=question,
        retrievers=tuple(retrievers),
        conversation=conversation,
        planner="CUSTOM" if cfg.get("foundationModelType") == "CUSTOM" else "MANAGED",
        max_iterations=iterations,
        rerank=rerank_type != "NONE",
        guardrail=(guard["guardrailId"], guard["guardrailVersion"]) if guard else None,
        user_id=user,
        generate=bool(body.get("generateResponse", True)),
    )
