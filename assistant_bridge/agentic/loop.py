"""The agentic retrieval loop (spec §C.3): plan, retrieve, judge, repeat; read documents whole; answer.

:class:`AgenticRun` does no I/O of its own: it is given one search function per retriever, a planner, an
optional document fetcher, generator, pre-generation filter and guardrail, and a clock, and yields the stream
events of :mod:`.events` in this order::

    [guardrail on the question]     Planning SUCCEEDED + guardrail warning, responseEvent, result  (end)
    SpeculativeRetrieval            the raw question to every retriever, before any plan
    Planning → Retrieval            × up to max_iterations; the planner stops early when evidence suffices
    FullDocumentExpansion           documents the planner asked for, the top document of a summary request,
                                    or a document holding several of the best hits
    responseEvent × n               the answer (streamed; buffered and checked first when a guardrail is set)
    result                          deduplicated results of every round + generatedResponse

Each retrieval round emits one ``IN_PROGRESS`` trace listing its searches, then one trace per retriever:
``SUCCEEDED`` with the new passages, or ``FAILED`` with the failures when every search of that retriever
failed; a failed retriever is left out of later rounds and the run continues with the others. When no
retriever ever answered, the stream ends with ``dependencyFailedException``. A generator failure ends the
stream with ``result`` (results only) and ``dependencyFailedException``; nothing is retried after the first
piece of the answer.

Iterations: the speculative round is not counted; each iteration is one planning call and, unless the plan
stops, one retrieval round.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

from assistant_bridge.domain import SearchHit
from assistant_bridge.errors import BridgeError, DependencyError
from assistant_bridge.logs import user_text
from assistant_bridge.text import pieces_at_spaces

from .analysis import analyze
from .answer import answer_snippets, citation_spans, fit_to_context
from .events import (
    Action,
    ExceptionEvent,
    ExpansionAction,
    GuardrailWarning,
    MessageWarning,
    ResponseEvent,
    ResultEvent,
    ResultItem,
    RetrieveAction,
    Status,
    Step,
    StreamEvent,
    TraceEvent,
    Warning_,
)
from .evidence import Evidence, FullDocument
from .guardrail import Guardrail
from .planner import Planner, PlanningState, RetrieverInfo, SubQuery

if TYPE_CHECKING:
    from assistant_bridge.generators.base import Generation, Generator

log = logging.getLogger(__name__)
NO_RESULTS_TEXT = "I don't know"  # the service's decline text (generators.base.IDK_TEXT)
DEFAULT_MAX_ITERATIONS = 3
ANSWER_PIECE_CHARS = 64


class PreFilterLike(Protocol):
    def score(self, query: str, snippets: Sequence[str]) -> float: ...


@dataclass(frozen=True)
class RetrieverBinding:
    """A retriever as the loop sees it: ``search(text, limit)`` already bound to the caller's scope and the
    retriever's filter, mode and collection."""

    id: str
    search: Callable[[str, int], Sequence[SearchHit]]
    limit: int = 5
    description: str = ""


@dataclass(frozen=True)
class ExpansionPolicy:
    """When a document is read whole (``fetch_document``): on a summary request (its best document), when
    ``concentration`` of the best ``window`` results come from one document, or when the planner asks."""

    enabled: bool = True
    concentration: int = 2
    window: int = 5
    max_documents: int = 2


@dataclass(frozen=True)
class RunOptions:
    max_iterations: int = DEFAULT_MAX_ITERATIONS
    rerank: bool = True
    generate: bool = True
    speculative: bool = True
    max_results: int = 25
    answer_passages: int = 5
    response_length: str = "moderate"
    expansion: ExpansionPolicy = ExpansionPolicy()
    no_results_text: str = NO_RESULTS_TEXT


@dataclass
class RunStats:
    """What a run did, for its log line and the caller's metrics.

    :param planner_fallbacks: the error code of each round the planner model failed to plan (another
        planner planned it), in order.
    :param generator_error: the error code of the generator's failure, when the answer could not be generated.
    :param dependency_failures: the error code of each search or document read that an outside system failed
        (a :class:`~assistant_bridge.errors.DependencyError`), in order.
    """

    retrieval_calls: int = 0
    iterations: int = 0
    expansions: int = 0
    stopped: str = ""
    failed_retrievers: list[str] = field(default_factory=list)
    planner_fallbacks: list[str] = field(default_factory=list)
    generator_error: str | None = None
    dependency_failures: list[str] = field(default_factory=list)


class AgenticRun:
    """One agentic retrieval; iterate :meth:`events` once.

    :param question: the last user message.
    :param retrievers: one binding per requested retriever, in request order.
    :param planner: decides each round (an :class:`~.planner.EmbeddedPlanner` or an LLM planner).
    :param fetch_document: reads a whole document within the caller's scope; ``None`` disables expansion.
    :param prefilter: the pre-generation filter, one signal of sufficiency; ``threshold`` is its pass mark.
    :param clock: seconds since the epoch (trace timestamps are milliseconds).
    :param log_user_text: the ``agentic.run`` log line also carries the question (``server.log_user_text``).
    """

    def __init__(
        self,
        question: str,
        retrievers: Sequence[RetrieverBinding],
        *,
        planner: Planner,
        generator: Generator | None = None,
        prefilter: PreFilterLike | None = None,
        threshold: float | None = None,
        guardrail: Guardrail | None = None,
        fetch_document: Callable[[str], FullDocument | None] | None = None,
        options: RunOptions = RunOptions(),
        clock: Callable[[], float] = time.time,
        run_id: str = "run",
        conversation: Sequence[tuple[str, str]] = (),
        log_user_text: bool = False,
    ) -> None:
        if options.max_iterations < 1:
            raise ValueError("max_iterations must be at least 1")
        if options.generate and generator is None:
            raise ValueError("a generator is needed when generate is true")
        self.question = question
        self.bindings = {b.id: b for b in retrievers}
        self.planner = planner
        self.generator = generator
        self.prefilter = prefilter
        self.threshold = threshold
        self.guardrail = guardrail
        self.fetch_document = fetch_document
        self.options = options
        self.clock = clock
        self.run_id = run_id
        self.conversation = tuple(conversation)
        self.log_user_text = log_user_text
        self.evidence = Evidence()
        self.history: list[SubQuery] = []
        self.healthy = [b.id for b in retrievers]
        self.stats = RunStats()
        self._seq = 0
        self._requested: list[str] = []

    # ------------------------------------------------------------------------------------------ helpers
    def _trace(
        self,
        step: Step,
        status: Status,
        message: str,
        *,
        actions: Sequence[Action] = (),
        retrievers: Sequence[str] = (),
        retrieved: Sequence[ResultItem] = (),
        failures: Sequence[str] = (),
        warnings: Sequence[Warning_] = (),
    ) -> TraceEvent:
        self._seq += 1
        return TraceEvent(
            id=f"{self.run_id}-{self._seq:03d}",
            timestamp=int(self.clock() * 1000),
            step=step,
            status=status,
            message=message,
            actions=tuple(actions),
            retrievers=tuple(retrievers),
            retrieved=tuple(retrieved),
            failures=tuple(failures),
            warnings=tuple(warnings),
        )

    def _failed(self, exc: BridgeError) -> None:
        if isinstance(exc, DependencyError):
            self.stats.dependency_failures.append(exc.code)

    def _state(self, iteration: int) -> PlanningState:
        views = self.evidence.views(self.options.rerank, limit=10)
        confidence = None
        if self.prefilter is not None and views:
            texts = [v.text for v in views[: self.options.answer_passages]]
            confidence = float(self.prefilter.score(self.question, texts))
        infos = tuple(RetrieverInfo(rid, self.bindings[rid].description) for rid in self.healthy)
        return PlanningState(
            question=self.question,
            retrievers=infos,
            iteration=iteration,
            max_iterations=self.options.max_iterations,
            history=tuple(self.history),
            evidence=views,
            confidence=confidence,
            confidence_threshold=self.threshold,
            conversation=self.conversation,
            expanded=self.evidence.expanded,
        )

    # ---------------------------------------------------------------------------------------------- run
    def events(self) -> Iterator[StreamEvent]:
        started = time.perf_counter()
        try:
            yield from self._run()
        finally:
            log.info(
                "agentic.run",
                extra={
                    "run": self.run_id,
                    "iterations": self.stats.iterations,
                    "calls": self.stats.retrieval_calls,
                    "expansions": self.stats.expansions,
                    "results": len(self.evidence),
                    "stopped": self.stats.stopped or "incomplete",
                    "ms": round((time.perf_counter() - started) * 1000),
                    **user_text(self.log_user_text, query=self.question),
                },
            )

    def _run(self) -> Iterator[StreamEvent]:
        if self.guardrail is not None:
            verdict = self.guardrail.check(self.question)
            if verdict.intervened:
                yield from self._blocked(
                    verdict.message,
                    "The guardrail blocked the question; nothing was retrieved.",
                    self.guardrail.blocked_input_message,
                    (),
                )
                self.stats.stopped = "guardrail_input"
                return
        if self.options.speculative:
            yield from self._round("SpeculativeRetrieval", [SubQuery(self.question, tuple(self.healthy))], 0)
        for iteration in range(1, self.options.max_iterations + 1):
            if not self.healthy:
                self.stats.stopped = "no_retriever_left"
                break
            self.stats.iterations = iteration
            yield self._trace(
                "Planning", "IN_PROGRESS", f"Planning iteration {iteration} of {self.options.max_iterations}."
            )
            plan = self.planner.plan(self._state(iteration))
            if plan.fallback_code is not None:
                self.stats.planner_fallbacks.append(plan.fallback_code)
            subs = [
                SubQuery(s.text, r, s.target, s.purpose)
                for s in plan.sub_queries
                if (r := tuple(x for x in s.retrievers if x in self.healthy))
            ]
            known = {v.document_id for v in self.evidence.views(limit=None)}
            expand = [d for d in plan.expand_documents if d in known and d not in self._requested]
            self._requested.extend(expand)
            actions: list[Action] = [RetrieveAction(s.text, s.retrievers) for s in subs]
            actions += [ExpansionAction(d, self._retriever_of(d)) for d in expand]
            yield self._trace(
                "Planning",
                "SUCCEEDED",
                plan.reason or f"Plan by the {plan.planner} planner.",
                actions=actions,
                warnings=[MessageWarning(w) for w in plan.warnings],
            )
            if plan.sufficient or not subs:
                self.stats.stopped = "sufficient" if plan.sufficient else "nothing_to_search"
                break
            yield from self._round("Retrieval", subs, iteration)
        else:
            self.stats.stopped = "max_iterations"
        yield from self._expand()
        if not self.evidence.searches and self.stats.failed_retrievers:
            failed = ",".join(self.stats.failed_retrievers)
            yield ExceptionEvent(
                "dependencyFailedException",
                "Every retriever failed; nothing could be retrieved.",
                {"resourceName": failed},
            )
            return
        results = tuple(self.evidence.results(self.options.rerank, limit=self.options.max_results))
        if not self.options.generate:
            yield ResultEvent(results)
            return
        yield from self._answer(results)

    def _retriever_of(self, document_id: str) -> str:
        for v in self.evidence.views(limit=None):
            if v.document_id == document_id:
                return v.retriever
        return self.healthy[0] if self.healthy else ""

    def _round(self, step: Step, subs: Sequence[SubQuery], round_: int) -> Iterator[StreamEvent]:
        involved = [rid for rid in self.bindings if any(rid in s.retrievers for s in subs)]
        searches = sum(len(s.retrievers) for s in subs)
        yield self._trace(
            step,
            "IN_PROGRESS",
            f"{searches} search{'es' if searches != 1 else ''} on "
            f"{len(involved)} retriever{'s' if len(involved) != 1 else ''}.",
            actions=[RetrieveAction(s.text, s.retrievers) for s in subs],
            retrievers=involved,
        )
        new: dict[str, list[ResultItem]] = {rid: [] for rid in involved}
        failures: dict[str, list[str]] = {rid: [] for rid in involved}
        ok: dict[str, int] = {rid: 0 for rid in involved}
        for sq in subs:
            for rid in sq.retrievers:
                binding = self.bindings[rid]
                self.stats.retrieval_calls += 1
                try:
                    hits = binding.search(sq.text, binding.limit)
                except BridgeError as exc:
                    log.warning(
                        "agentic.retriever_failed", extra={"run": self.run_id, "retriever": rid, "code": exc.code}
                    )
                    self._failed(exc)
                    failures[rid].append(f"{exc.code}: {exc.message}")
                    continue
                ok[rid] += 1
                for hit in self.evidence.add(round_, sq, rid, hits):
                    new[rid].append(_trace_item(hit, rid))
        self.history.extend(subs)
        for rid in involved:
            failed = bool(failures[rid]) and not ok[rid]  # then it retrieved nothing either
            if failed:
                self.healthy = [h for h in self.healthy if h != rid]
                self.stats.failed_retrievers.append(rid)
                message = f"Retriever {rid} failed; continuing without it."
            else:
                message = f"Retriever {rid}: {len(new[rid])} new passage{'s' if len(new[rid]) != 1 else ''}."
            status: Status = "FAILED" if failed else "SUCCEEDED"
            yield self._trace(step, status, message, retrievers=[rid], retrieved=new[rid], failures=failures[rid])

    def _expansion_targets(self) -> list[tuple[str, str]]:
        policy = self.options.expansion
        targets: list[str] = list(self._requested)
        top = self.evidence.top_documents(self.options.rerank, policy.window)
        if top and analyze(self.question).summary:
            targets.append(top[0][0])
        targets += [doc for doc, _, hits in top if hits >= policy.concentration]
        out: list[tuple[str, str]] = []
        for doc in targets:
            if doc not in self.evidence.expanded and doc not in (d for d, _ in out):
                out.append((doc, self._retriever_of(doc)))
        return out[: policy.max_documents]

    def _expand(self) -> Iterator[StreamEvent]:
        if not self.options.expansion.enabled or self.fetch_document is None or not len(self.evidence):
            return
        for doc_id, rid in self._expansion_targets():
            action = ExpansionAction(doc_id, rid)
            yield self._trace("FullDocumentExpansion", "IN_PROGRESS", "Reading a whole document.", actions=[action])
            try:
                doc = self.fetch_document(doc_id)
            except BridgeError as exc:
                log.warning("agentic.expansion_failed", extra={"run": self.run_id, "code": exc.code})
                self._failed(exc)
                yield self._trace(
                    "FullDocumentExpansion",
                    "FAILED",
                    "The document could not be read.",
                    actions=[action],
                    failures=[f"{exc.code}: {exc.message}"],
                )
                continue
            if doc is None:
                yield self._trace(
                    "FullDocumentExpansion",
                    "FAILED",
                    "The document is not available.",
                    actions=[action],
                    failures=["document not found"],
                )
                continue
            self.evidence.add_document(doc, rid)
            self.stats.expansions += 1
            yield self._trace(
                "FullDocumentExpansion",
                "SUCCEEDED",
                f"Read the whole document ({doc.chunk_count} chunks{', truncated' if doc.truncated else ''}).",
                actions=[action],
            )

    # ------------------------------------------------------------------------------------------- answer
    def _blocked(
        self, verdict_message: str, trace_message: str, text: str, results: tuple[ResultItem, ...]
    ) -> Iterator[StreamEvent]:
        assert self.guardrail is not None
        warning = GuardrailWarning(self.guardrail.guardrail_id, self.guardrail.version, "INTERVENED", verdict_message)
        yield self._trace("Planning", "SUCCEEDED", trace_message, warnings=[warning])
        if self.options.generate:
            yield ResponseEvent(text)
        yield ResultEvent(
            results, answer=text if self.options.generate else None, guardrail_action="INTERVENED", warnings=(warning,)
        )

    def _answer(self, results: tuple[ResultItem, ...]) -> Iterator[StreamEvent]:
        assert self.generator is not None
        action: Literal["NONE"] | None = "NONE" if self.guardrail is not None else None
        snippets = fit_to_context(self.question, answer_snippets(results, self.options.answer_passages), self.generator)
        if not snippets:
            yield ResponseEvent(self.options.no_results_text)
            yield ResultEvent(results, answer=self.options.no_results_text, guardrail_action=action)
            return
        length = self.options.response_length
        generation: Generation | None = None
        try:
            if self.guardrail is not None:
                generation = self.generator.generate(self.question, snippets, length)  # type: ignore[arg-type]
            else:
                stream = self.generator.stream(self.question, snippets, length)  # type: ignore[arg-type]
                try:
                    for delta in stream:
                        if delta:
                            yield ResponseEvent(delta)
                    generation = stream.result()
                finally:
                    stream.close()
        except DependencyError as exc:
            log.warning("agentic.generation_failed", extra={"run": self.run_id, "code": exc.code})
            self.stats.generator_error = exc.code
            yield ResultEvent(results, warnings=(MessageWarning("The answer could not be generated."),))
            yield ExceptionEvent(
                "dependencyFailedException", f"Answer generation failed: {exc.message}", {"resourceName": "generator"}
            )
            return
        assert generation is not None
        if self.guardrail is not None:
            verdict = self.guardrail.check(generation.text)
            if verdict.intervened:
                self.stats.stopped += "+guardrail_output"
                yield from self._blocked(
                    verdict.message,
                    "The guardrail blocked the generated answer.",
                    self.guardrail.blocked_output_message,
                    results,
                )
                return
            for piece in pieces_at_spaces(generation.text, ANSWER_PIECE_CHARS):
                yield ResponseEvent(piece)
        yield ResultEvent(
            results, answer=generation.text, citations=citation_spans(generation, len(results)), guardrail_action=action
        )


def _trace_item(hit: SearchHit, retriever: str) -> ResultItem:
    c = hit.chunk
    return ResultItem(
        text=c.text,
        retriever=retriever,
        metadata={
            "document_id": c.document_id,
            "chunk_id": c.id,
            "title": c.title,
            "score": round(float(hit.score), 6),
        },
    )
