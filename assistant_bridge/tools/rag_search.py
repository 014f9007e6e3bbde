"""The ``rag_search`` tool (spec §D): retrieve chunks within the caller's scope, run the conversational search
loop over them, and answer in Markdown with inline ``<citation id="CHUNK_ID">[n]</citation>`` tags.

No I/O of its own: the search function, the generator and the filters are passed in, and progress goes to
an ``emit`` callback. The steps and the events they send:

1. ``SEARCH_PREPARATION`` started.
2. Search ``retrieve_limit`` chunks within the scope (``document_ids`` narrow it, never widen it: an id the
   caller cannot see simply matches nothing), the hits a ``/message`` turn answers from (the pages the query
   names and a follow-up's topic page first, :meth:`~assistant_bridge.services.Services.answer_hits`)
   → ``RETRIEVAL`` completed ``{retrieved_count}``.
3. The loop's snippet step (duplicates dropped, at most five), pre-generation filter and context-budget
   truncation → ``RERANKING`` completed ``{initial_count, reranked_count, kept_count}``. There is no
   separate reranking model: ``reranked_count`` is the number of candidates the step looked at, and
   ``kept_count`` the number of chunks it kept (they become ``contexts``).
4. ``COMPILING_RESULTS`` started; generation, then the post-generation filter.
5. The final text, *already verified*, as ``tool_partial_update`` fragments; the caller then records the
   result and sends ``tool_end``. Streaming after verification is a deliberate choice: nothing that the
   post-generation filter would reject is ever shown, and the fragments carry the final citation tags
   (never ``<source_n>`` placeholders), so the fragments concatenate to ``tool_end.response`` exactly.

Conversation and safety (``docs/conversation-and-safety.md``): with a chat session, ``inputs.history`` holds
the remembered turns and ``components.rewriter`` rewrites the query with them before step 2 (the rewritten
query is searched, filtered and answered; the result says ``inferred_query`` and, when a rewrite was
attempted, ``query_rewrite``). ``components.hap`` checks the query before step 2 and the answer before it is
sent; a hit answers the HAP message with outcome ``hap`` and ``is_hap_detected: true``.

Ranks: ``contexts[i].rank`` is ``i + 1``; ``[n]`` in a citation tag is the rank of the cited context and
``sources_used`` lists the ranks cited at least once. "I don't know", "no results" and "search failed"
outcomes answer with the configured message, cite nothing and say which in ``outcome``.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assistant_bridge.conversation.memory import MemoryTurn
from assistant_bridge.conversation.rewrite import Rewrite, Rewriter
from assistant_bridge.core.loop import (
    Answer,
    IDontKnow,
    NoResults,
    Outcome,
    PostFilterLike,
    PreFilterLike,
    Prepared,
    SearchFailed,
    ThresholdsLike,
    finish_generation,
    outcome_name,
    prepare_generation,
)
from assistant_bridge.core.results import SearchResult
from assistant_bridge.core.scope import chunk_visible
from assistant_bridge.core.snippets import Snippet
from assistant_bridge.domain import Chunk, Scope, SearchHit
from assistant_bridge.generators.base import Generator
from assistant_bridge.safety.hap import HapCheck, HapVerdict
from assistant_bridge.tools import events as ev
from assistant_bridge.tools.config import RagSearchSettings

# (query, scope, limit, filter, blend, topic): blend is the query as asked and its weight when the query is a
# rewrite; topic the command a follow-up is about (Rewrite.topic), whose page is read first when another leads
SearchFn = Callable[[str, Scope, int, Any, tuple[str, float] | None, str | None], Sequence[SearchHit]]
Emit = Callable[[ev.ToolEvent], None]
_TAG = re.compile(r'(<citation id="[^"<>]*">\[\d+\]</citation>)')
_SPOOF = re.compile(r"<(/?citation\b|source_\d)", re.IGNORECASE)


class Cancelled(Exception):
    """The caller went away; the execution stops at its next step."""


@dataclass(frozen=True)
class RagSearchInputs:
    """Validated inputs. ``filter`` is a parsed filter-language expression (or ``None``); ``history`` the
    remembered turns of the chat session, oldest first."""

    query: str
    document_ids: tuple[str, ...] | None = None
    filter: Any = None
    history: tuple[MemoryTurn, ...] = ()


@dataclass(frozen=True)
class RagComponents:
    """What the loop needs, plus the texts of the answers that are not generated."""

    generator: Generator
    prefilter: PreFilterLike
    postfilter: PostFilterLike
    thresholds: ThresholdsLike
    response_length: str = "moderate"
    idk_message: str = "I don't know."
    no_result_message: str = "I did not find anything about this in the documents available to me."
    failed_message: str = "I could not search the documents available to me."
    rewriter: Rewriter | None = None
    hap: HapCheck | None = None
    hap_input_message: str = (
        "I can't respond to that message because it may contain hateful, abusive or profane language."
    )
    hap_output_message: str = "I can't share the answer because it may contain hateful, abusive or profane language."


def narrowed(scope: Scope, document_ids: tuple[str, ...] | None) -> Scope:
    """``scope`` restricted to ``document_ids`` (intersected with any restriction it already has)."""
    if document_ids is None:
        return scope
    ids = tuple(dict.fromkeys(document_ids))
    if scope.document_ids is not None:
        ids = tuple(i for i in ids if i in scope.document_ids)
    return dataclasses.replace(scope, document_ids=ids)


def preview(text: str, limit: int) -> str:
    """The first ``limit`` characters of ``text``, cut at a space when there is one near the end."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", int(limit * 0.6), limit)
    return text[: cut if cut > 0 else limit - 1].rstrip() + "…"


def hit_result(hit: SearchHit) -> SearchResult:
    c = hit.chunk
    return SearchResult(
        title=c.title,
        body=c.text,
        url=c.url,
        id=c.id,
        result_metadata={"score": float(hit.score), "chunk_id": c.id, "document_id": c.document_id},
        similarity=hit.similarity,
    )


def context_json(rank: int, hit: SearchHit, used: bool, preview_chars: int) -> dict[str, Any]:
    c = hit.chunk
    return {
        "rank": rank,
        "chunk_id": c.id,
        "document_id": c.document_id,
        "text_preview": preview(c.text, preview_chars),
        "used_in_response": used,
        "title": c.title,
        "filename": c.filename or None,
        "modality": c.modality,
        "language": c.language or None,
        "page_number": c.page_number,
        "start_time": c.start_time,
        "end_time": c.end_time,
        "score": round(float(hit.score), 6),
    }


def neutralize(text: str) -> str:
    """Escape tag openings a document could use to forge a citation (``<citation``, ``<source_1``)."""
    return _SPOOF.sub(r"&lt;\1", text)


def render_response(
    answer: Answer, rank_of: Mapping[int, int], chunk_of_rank: Mapping[int, Chunk]
) -> tuple[str, list[int]]:
    """The answer text with a citation tag after every cited span, and the ranks cited (sorted)."""
    marks: dict[int, set[int]] = {}
    for cit in answer.citations:
        rank = rank_of.get(cit.search_result_index)
        if rank is None:
            continue
        for _start, end in cit.ranges:
            if 0 < end <= len(answer.text):
                marks.setdefault(end, set()).add(rank)
    text = answer.text
    out: list[str] = []
    cursor = 0
    for end in sorted(marks):
        out.append(neutralize(text[cursor:end]))
        out.append(" " + "".join(f'<citation id="{chunk_of_rank[r].id}">[{r}]</citation>' for r in sorted(marks[end])))
        cursor = end
    out.append(neutralize(text[cursor:]))
    return "".join(out), sorted({r for ranks in marks.values() for r in ranks})


def fragments(text: str, size: int) -> list[str]:
    """Pieces of about ``size`` characters that concatenate to ``text``; a citation tag is never cut."""
    pieces: list[str] = []
    for part in _TAG.split(text):
        if not part:
            continue
        if _TAG.fullmatch(part):
            if pieces:
                pieces[-1] += part
            else:
                pieces.append(part)
            continue
        start = 0
        while start < len(part):
            end = min(len(part), start + size)
            if end < len(part):
                space = part.rfind(" ", start + 1, end + 1)
                end = space + 1 if space > start else end
            pieces.append(part[start:end])
            start = end
    return pieces


def _kept(step: Prepared | Outcome) -> tuple[Snippet, ...]:
    """The snippets that became contexts: those sent (or, for an early "I don't know", judged)."""
    if isinstance(step, Prepared):
        return step.snippets
    if isinstance(step, (Answer, IDontKnow)):
        return step.snippets_used
    return ()


def run_rag_search(
    inputs: RagSearchInputs,
    scope: Scope,
    *,
    search: SearchFn,
    components: RagComponents,
    settings: RagSearchSettings,
    execution_id: str,
    emit: Emit = lambda _e: None,
    cancelled: Callable[[], bool] = lambda: False,
    clock: Callable[[], float] = time.perf_counter,
    timings: dict[str, float] | None = None,
    on_fallback: Callable[[str, str], None] = lambda _component, _code: None,
) -> dict[str, Any]:
    """Run one rag_search and return its result (the ``tool_end`` data). Sends every event but ``tool_end``.

    :param timings: filled with ``stage -> milliseconds`` for every stage that ran: ``rewrite`` (when a
        rewriter is set), ``search``, then the loop's stages (``snippets``, ``pre_filter``, ...), for the
        caller's metrics.
    :param on_fallback: called with ``(component, error code)`` when a model failed and the run went on
        without it: ``("rewrite", code)`` when the LLM rewrite failed and the embedded rewriter rewrote instead.
    :raises Cancelled: when ``cancelled()`` turns true between two steps or two generated deltas.
    :raises BridgeError: what the search, the filters or the generator raise (the caller reports it).
    """
    stages: dict[str, float] = {} if timings is None else timings

    def step() -> None:
        if cancelled():
            raise Cancelled()

    emit(ev.phase(ev.SEARCH_PREPARATION, "started"))
    c = components
    verdicts: dict[str, HapVerdict] = {}
    if c.hap is not None:
        verdicts["input"] = c.hap.check("input", inputs.query)
        if verdicts["input"].detected:
            result = _hap_result(
                c.hap_input_message, (), [], components, settings, execution_id, inputs.query, None, verdicts
            )
            emit(ev.partial(result["response"]))
            return result
    rewrite = c.rewriter.rewrite(inputs.query, inputs.history) if c.rewriter is not None else None
    if rewrite is not None and rewrite.method != "none":
        stages["rewrite"] = rewrite.ms
    if rewrite is not None and rewrite.error_code is not None:
        on_fallback("rewrite", rewrite.error_code)
    query = rewrite.query if rewrite is not None else inputs.query
    scope = narrowed(scope, inputs.document_ids)
    step()
    started = clock()
    blend, topic = (rewrite.blend, rewrite.topic) if rewrite is not None else (None, None)
    found = search(query, scope, settings.retrieve_limit, inputs.filter, blend, topic)
    stages["search"] = (clock() - started) * 1000
    hits = [h for h in found if chunk_visible(h.chunk, scope)]
    emit(ev.phase(ev.RETRIEVAL, "completed", {"retrieved_count": len(hits)}))
    step()
    prepared = prepare_generation(
        query,
        [hit_result(h) for h in hits],
        prefilter=c.prefilter,
        generator=c.generator,
        thresholds=c.thresholds,
        clock=clock,
        message=inputs.query,
    )
    kept = _kept(prepared)
    emit(
        ev.phase(
            ev.RERANKING,
            "completed",
            {"initial_count": len(hits), "reranked_count": len(hits), "kept_count": len(kept)},
        )
    )
    step()
    emit(ev.phase(ev.COMPILING_RESULTS, "started"))
    outcome: Outcome
    if isinstance(prepared, Prepared):
        started = clock()
        stream = c.generator.stream(query, list(prepared.snippets), c.response_length)  # type: ignore[arg-type]
        try:
            for _delta in stream:
                step()
            generation = stream.result()
        finally:
            stream.close()
        step()
        outcome = finish_generation(
            prepared,
            generation,
            postfilter=c.postfilter,
            thresholds=c.thresholds,
            generation_ms=(clock() - started) * 1000,
            clock=clock,
        )
        kept = _kept(outcome)
    else:
        outcome = prepared
    stages.update((k, v) for k, v in outcome.timings.items() if k != "total")
    step()
    if isinstance(outcome, Answer) and c.hap is not None:
        verdicts["output"] = c.hap.check("output", outcome.text)
        if verdicts["output"].detected:
            result = _hap_result(
                c.hap_output_message, kept, hits, components, settings, execution_id, query, rewrite, verdicts
            )
            emit(ev.partial(result["response"]))
            return result
    result = build_result(outcome, kept, hits, components, settings, execution_id)
    result.update(_conversation_fields(query, rewrite, verdicts))
    for piece in fragments(result["response"], settings.partial_chars):
        emit(ev.partial(piece))
    return result


def _conversation_fields(query: str, rewrite: Rewrite | None, verdicts: Mapping[str, HapVerdict]) -> dict[str, Any]:
    out: dict[str, Any] = {"inferred_query": query, "is_hap_detected": any(v.detected for v in verdicts.values())}
    if rewrite is not None and rewrite.mode != "single_turn":
        out["query_rewrite"] = rewrite.to_json()
    return out


def _hap_result(
    message: str,
    kept: Sequence[Snippet],
    hits: Sequence[SearchHit],
    components: RagComponents,
    settings: RagSearchSettings,
    execution_id: str,
    query: str,
    rewrite: Rewrite | None,
    verdicts: Mapping[str, HapVerdict],
) -> dict[str, Any]:
    """The result of a turn blocked by the HAP filter: the message, nothing cited."""
    contexts = [
        context_json(rank, hits[snippet.result_index], False, settings.preview_chars)
        for rank, snippet in enumerate(dict((s.result_index, s) for s in kept).values(), start=1)
    ]
    return {
        "response": message,
        "contexts": contexts,
        "sources_used": [],
        "model": components.generator.name,
        "execution_id": execution_id,
        "outcome": "hap",
        **_conversation_fields(query, rewrite, verdicts),
    }


def build_result(
    outcome: Outcome,
    kept: Sequence[Snippet],
    hits: Sequence[SearchHit],
    components: RagComponents,
    settings: RagSearchSettings,
    execution_id: str,
) -> dict[str, Any]:
    """The rag_search output for a loop outcome (spec §D.4, plus ``outcome`` and the loop's scores)."""
    rank_of: dict[int, int] = {}
    for snippet in kept:
        rank_of.setdefault(snippet.result_index, len(rank_of) + 1)
    chunk_of_rank = {rank: hits[index].chunk for index, rank in rank_of.items()}
    used: list[int] = []
    extra: dict[str, Any] = {}
    if isinstance(outcome, Answer):
        response, used = render_response(outcome, rank_of, chunk_of_rank)
        model = outcome.model or components.generator.name
        extra["confidence_scores"] = outcome.confidence_scores.to_json()
    else:
        model = components.generator.name
        if isinstance(outcome, IDontKnow):
            response = components.idk_message
            extra["idk_reason"] = outcome.reason
        elif isinstance(outcome, NoResults):
            response = components.no_result_message
        else:
            assert isinstance(outcome, SearchFailed)
            response = components.failed_message
            extra["failure_reason"] = outcome.reason
    contexts = [
        context_json(rank, hits[index], rank in used, settings.preview_chars) for index, rank in rank_of.items()
    ]
    return {
        "response": response,
        "contexts": contexts,
        "sources_used": used,
        "model": model,
        "execution_id": execution_id,
        "outcome": outcome_name(outcome),
        **extra,
    }
