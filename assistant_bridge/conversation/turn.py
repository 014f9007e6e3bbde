"""One ``/message`` turn: resolve the query, search, run the conversational search loop, build the output.

Independent of Flask so the routes, the ``ask`` command and the benchmark share it. Constructing a
:class:`Turn` resolves the query and raises every 4xx error, so a streamed turn fails before its first
byte; everything after that ends in an ``output.generic`` item, never in an exception, except a model that
failed to load (:class:`~assistant_bridge.errors.ModelLoadError`).

Streaming (:meth:`Turn.events`) follows the assistant's ``conversational_search.streaming`` choice:

* ``verify_then_stream`` (default): the answer is generated and checked by the post-generation filter
  before any of it is sent; the verified text is then sent as ``partial_item`` chunks and a
  ``complete_item``. Nothing is ever retracted; the first chunk arrives when the whole turn is done.
* ``stream_then_verify``: the generator's deltas are sent as they come; when the post-generation filter
  rejects the answer (or the generator fails midway), the ``complete_item`` with the same
  ``streaming_metadata.id`` is the "I don't know" (or connectivity) text item, which replaces the streamed
  text. Nothing is retried after the first delta is out.

Conversation (``docs/conversation-and-safety.md``): a text message is first checked by the assistant's HAP
input filter (when enabled), then rewritten by the assistant's rewriter with the remembered turns
(``TurnRequest.history``, sessions only); a social message ("thanks", "ok", "hello", only punctuation) is
answered with the assistant's social message and not searched (outcome ``social``); the rewritten query is
what is searched, filtered, generated from and handed to a client search, and a name the question itself
asks about must be mentioned by the results (``must_mention`` of the loop). A generated answer goes through
the HAP output filter before it is sent; a hit answers the assistant's ``hap_input``/``hap_output`` message
with outcome ``hap``. The result carries the :class:`~assistant_bridge.conversation.memory.MemoryTurn` the
session should remember.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping
from collections.abc import Generator as PyGenerator
from dataclasses import dataclass
from typing import Any

from assistant_bridge.conversation import responses as rsp
from assistant_bridge.conversation.assistants import Assistant
from assistant_bridge.conversation.memory import MemoryTurn
from assistant_bridge.conversation.rewrite import Rewrite
from assistant_bridge.conversation.rewrite_embedded import asked_names, social
from assistant_bridge.conversation.runtime import ConversationRuntime
from assistant_bridge.core.language import detect_language
from assistant_bridge.core.loop import Answer, Outcome, Prepared, finish_generation, outcome_name, prepare_generation
from assistant_bridge.core.results import SearchResult
from assistant_bridge.domain import Scope
from assistant_bridge.errors import DependencyError, ValidationFailed
from assistant_bridge.filters import Thresholds
from assistant_bridge.logs import user_text
from assistant_bridge.text import pieces_at_spaces

log = logging.getLogger(__name__)
STREAM_CHUNK_CHARS = 24


@dataclass(frozen=True)
class TurnRequest:
    """The parts of a message request a turn uses (validated at the edge).

    :param pending: the search action this ``search_results`` message answers (from the session, or from
        the context a stateless client echoes back).
    :param threshold_level, thresholds, response_length: per-request overrides of the assistant's settings.
    :param history: the remembered turns of the session, oldest first (empty when stateless).
    """

    message_type: str = "text"
    text: str | None = None
    search_results: tuple[SearchResult, ...] | None = None
    debug: bool = False
    threshold_level: str | None = None
    thresholds: Thresholds | None = None
    response_length: str | None = None
    pending: Mapping[str, Any] | None = None
    history: tuple[MemoryTurn, ...] = ()


@dataclass(frozen=True)
class TurnResult:
    """``pending`` is the search action the client must answer next (``None`` clears it); ``memory`` is what
    a session remembers of this turn; ``trace`` what happened in it (stage timings, scores, a failure), for
    the caller's metrics."""

    generic: tuple[dict[str, Any], ...]
    actions: tuple[dict[str, Any], ...] = ()
    debug: dict[str, Any] | None = None
    pending: dict[str, Any] | None = None
    outcome: str = ""
    memory: MemoryTurn | None = None
    trace: rsp.TurnTrace | None = None


class Turn:
    """:raises ValidationFailed: when no query can be found for a ``search_results`` message or a text
    message has no text."""

    def __init__(
        self,
        runtime: ConversationRuntime,
        assistant: Assistant,
        request: TurnRequest,
        scope: Scope,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.rt, self.assistant, self.req, self.scope, self.clock = runtime, assistant, request, scope, clock
        self.started = clock()
        if request.message_type == "search_results":
            query = (request.pending or {}).get("query") or request.text
            if not query:
                raise ValidationFailed(
                    "$.input.text: a search_results message needs a pending search action in its session (or in "
                    "the echoed context), or the query in input.text",
                    path="$.input.text",
                )
            if request.search_results is None:
                raise ValidationFailed(
                    "$.input.search_results: required when message_type is search_results",
                    path="$.input.search_results",
                )
        else:
            query = (request.text or "").strip()
            if not query:
                raise ValidationFailed("$.input.text: a text message needs a non-empty input.text", path="$.input.text")
        self.query: str = query
        # what the user asked: a search_results message completes the question of the client search
        last = request.history[-1] if request.history else None
        self.question = (
            last.question
            if request.message_type == "search_results" and last is not None and last.outcome == "client_search"
            else query
        )
        # the default messages speak the question's language
        self.assistant = assistant = assistant.in_language(detect_language(self.question))
        self.rewrite: Rewrite | None = None
        self._results: list[SearchResult] = []
        cs = assistant.conversational
        self.response_length = request.response_length or cs.response_length
        self.thresholds = request.thresholds or runtime.thresholds(request.threshold_level or cs.threshold_level)
        source = runtime.source(assistant)
        client = request.message_type == "search_results" or source is None
        self.trace = rsp.TurnTrace(
            assistant_id=assistant.id,
            environment_id=assistant.environment_id,
            query=query,
            engine="client" if client else source.engine,  # type: ignore[union-attr]
            index="" if client else getattr(source, "index", ""),
            url="" if client else getattr(source, "url", ""),
        )

    # -- public -----------------------------------------------------------------------------------
    def run(self) -> TurnResult:
        steps = self._steps(stream=False)
        while True:
            try:
                next(steps)
            except StopIteration as stop:
                result: TurnResult = stop.value
                return result

    def events(self) -> Iterator[tuple[str, Any]]:
        """``("partial_item" | "complete_item", payload)`` pairs, then ``("final", TurnResult)``."""
        steps = self._steps(stream=self.assistant.conversational.streaming == "stream_then_verify")
        streamed = False
        while True:
            try:
                delta = next(steps)
            except StopIteration as stop:
                result: TurnResult = stop.value
                break
            streamed = True
            yield (
                "partial_item",
                {
                    "response_type": self.assistant.conversational.response_type,
                    "text": delta,
                    "streaming_metadata": {"id": 1},
                },
            )
        for n, item in enumerate(result.generic, start=1):
            if not (streamed and n == 1):
                for piece in pieces_at_spaces(str(item.get("text") or ""), STREAM_CHUNK_CHARS):
                    yield (
                        "partial_item",
                        {"response_type": item["response_type"], "text": piece, "streaming_metadata": {"id": n}},
                    )
            yield "complete_item", {**item, "streaming_metadata": {"id": n}}
        yield "final", result

    # -- steps ------------------------------------------------------------------------------------
    def _steps(self, stream: bool) -> PyGenerator[str, None, TurnResult]:
        """Yields text deltas (only when ``stream``) and returns the :class:`TurnResult`."""
        a, req = self.assistant, self.req
        if req.message_type == "text":
            verdict = self.rt.hap(a).check("input", self.question)
            self.trace.hap["input"] = verdict
            if verdict.detected:
                self._log_hap("input", verdict)
                return self._done(rsp.text_item(a.messages.hap_input), "hap")
            kind = social(self.question)
            if kind is not None:  # "thanks", "ok", "👍": answered as such, not searched
                return self._done(rsp.text_item(a.messages.social(kind)), "social")
            self._rewrite()
        source = self.rt.source(a)
        searched = req.message_type != "search_results"
        if req.message_type == "search_results":
            results = list(req.search_results or ())
            self.trace.result_count = len(results)
        elif source is None:
            action = rsp.search_action(self.query, a.search)
            return self._action(action)
        else:
            self.trace.search_called = True
            t0 = self.clock()
            try:
                blend = self.rewrite.blend if self.rewrite is not None else None
                topic = self.rewrite.topic if self.rewrite is not None else None
                results = source.search(self.query, self.scope, blend, topic)
            except DependencyError as exc:
                self.trace.search_ms = (self.clock() - t0) * 1000
                return self._failure(exc, list(exc.details.get("errors") or []), "search")
            self.trace.search_ms = (self.clock() - t0) * 1000
            self.trace.result_count = len(results)
        self._results = results
        if not a.conversational.enabled:
            item = rsp.search_item(results, self.trace.engine) if results else rsp.text_item(a.messages.no_result)
            return self._done(item, "search" if results else "no_results")
        if results:
            self.rt.check_ready()  # a turn without results needs no model
        pre, post = self.rt.filters()
        gen = self.rt.generator(a)
        self.trace.generator = self.trace.generator_kind = gen.name
        prepared = prepare_generation(
            self.query,
            results,
            prefilter=pre,
            generator=gen,
            thresholds=self.thresholds,
            clock=self.clock,
            must_mention=asked_names(self.question),
            message=self.question,
            # only for results this turn's own search found within the caller's scope, never for results a client
            # sent back (their document ids would open documents the caller may not read)
            option_words=source.option_words(self.question, results) if searched and source is not None else None,
        )
        if not isinstance(prepared, Prepared):
            return self._outcome(prepared)
        t0 = self.clock()
        try:
            if stream:
                parts = gen.stream(self.query, list(prepared.snippets), self.response_length)  # type: ignore[arg-type]
                try:
                    yield from parts
                    generation = parts.result()
                finally:
                    parts.close()
            else:
                generation = gen.generate(self.query, list(prepared.snippets), self.response_length)  # type: ignore[arg-type]
        except DependencyError as exc:
            return self._failure(exc, [], "generation")
        outcome = finish_generation(
            prepared,
            generation,
            postfilter=post,
            thresholds=self.thresholds,
            generation_ms=(self.clock() - t0) * 1000,
            clock=self.clock,
        )
        return self._outcome(outcome)

    def _rewrite(self) -> None:
        rw = self.rt.rewriter(self.assistant).rewrite(self.question, self.req.history)
        self.rewrite, self.query, self.trace.query, self.trace.rewrite = rw, rw.query, rw.query, rw

    # -- endings ----------------------------------------------------------------------------------
    def _outcome(self, outcome: Outcome) -> TurnResult:
        self.trace.outcome_obj = outcome
        if isinstance(outcome, Answer):
            verdict = self.rt.hap(self.assistant).check("output", outcome.text)
            self.trace.hap["output"] = verdict
            if verdict.detected:
                self._log_hap("output", verdict)
                return self._done(rsp.text_item(self.assistant.messages.hap_output), "hap")
        item = rsp.outcome_item(outcome, self.assistant, self.response_length, self.trace.engine)
        return self._done(item, outcome_name(outcome))

    def _failure(self, exc: DependencyError, errors: list[dict[str, str]], stage: str) -> TurnResult:
        self.trace.errors = errors
        self.trace.error_code, self.trace.error_stage = exc.code, stage
        log.warning(
            "message.dependency_failed",
            extra={"assistant": self.assistant.id, "engine": self.trace.engine, "code": exc.code},
        )
        return self._done(rsp.text_item(self.assistant.messages.error, errors), "connectivity")

    def _done(self, item: dict[str, Any], outcome: str) -> TurnResult:
        self.trace.outcome = outcome
        self.trace.total_ms = (self.clock() - self.started) * 1000
        self._log(str(item.get("text") or ""))
        debug = rsp.debug_block(self.trace, item) if self.req.debug else None
        return TurnResult(
            generic=(item,), debug=debug, outcome=outcome, memory=self._memory(item, outcome), trace=self.trace
        )

    def _action(self, action: dict[str, Any]) -> TurnResult:
        self.trace.outcome = "client_search"
        self.trace.total_ms = (self.clock() - self.started) * 1000
        self._log()
        debug = rsp.action_debug(self.trace, action) if self.req.debug else None
        return TurnResult(
            generic=(),
            actions=(action,),
            debug=debug,
            pending=action,
            outcome="client_search",
            memory=MemoryTurn(self.question, self.query, outcome="client_search"),
            trace=self.trace,
        )

    def _memory(self, item: Mapping[str, Any], outcome: str) -> MemoryTurn:
        ids = [str(rsp.result_json(r, i, self.trace.engine)["id"]) for i, r in enumerate(self._results)]
        o = self.trace.outcome_obj
        cited = (
            [ids[c.search_result_index] for c in o.citations if 0 <= c.search_result_index < len(ids)]
            if outcome == "answer" and isinstance(o, Answer)
            else []
        )
        answer = str(item.get("text") or "") if outcome == "answer" else ""
        titles = (
            [self._results[c.search_result_index].title for c in o.citations if 0 <= c.search_result_index < len(ids)]
            if outcome == "answer" and isinstance(o, Answer)
            else []
        )
        return MemoryTurn(
            self.question,
            self.query,
            answer,
            tuple(ids),
            tuple(dict.fromkeys(cited)),
            outcome,
            titles=tuple(t for t in dict.fromkeys(titles) if t),
            first_title=(self._results[0].title or "") if self._results else "",
        )

    def _log_hap(self, stage: str, verdict: Any) -> None:
        log.info(
            "message.hap_detected",
            extra={
                "assistant": self.assistant.id,
                "stage": stage,
                "score": round(verdict.score, 3),
                "threshold": round(verdict.threshold, 3),
                "categories": list(verdict.categories),
            },
        )

    def _log(self, answer: str = "") -> None:
        """The turn's log line; with ``server.log_user_text`` it also carries the query that was searched, the
        user's question when a rewrite changed it, and the text of the reply."""
        o = self.trace.outcome_obj
        texts = user_text(
            self.rt.services.settings.server.log_user_text,
            query=self.query,
            question=self.question if self.question != self.query else None,
            answer=answer,
        )
        log.info(
            "message.turn",
            extra={
                "assistant": self.assistant.id,
                "environment": self.assistant.environment_id,
                "engine": self.trace.engine,
                "outcome": self.trace.outcome,
                "idk_reason": getattr(o, "reason", None) if self.trace.outcome == "idk" else None,
                "results": self.trace.result_count,
                "search_ms": round(self.trace.search_ms, 1),
                "total_ms": round(self.trace.total_ms, 1),
                **texts,
            },
        )
