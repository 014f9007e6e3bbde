"""The per-worker tool runtime: settings, execution store, session access, async pool, and the three ways to
run an execution (synchronously, streamed to the caller, in the background). Independent of Flask.

Made once per worker by :func:`tools_for` (``Services.feature``). ``rag_search`` takes its generator, filters,
thresholds and messages from the ``/message`` runtime, from the assistant named by
``tools.rag_search.assistant``, so both APIs answer and abstain alike and share one copy of each model. A
:class:`~assistant_bridge.tools.rag_search.RagComponents` registered on the services
(``services.register(components)``) replaces them (tests, custom set-ups).

Conversation memory: an execution with a chat session id reads that session's remembered turns (kind
``tool`` in :mod:`~assistant_bridge.conversation.memory`) for query rewriting and records its own turn; the
memory expires ``tools.rag_search.memory_ttl_seconds`` after the session's last call (the next call starts
afresh). Without a session id nothing is remembered.

Cancellation: a streamed execution runs in a thread of its own while the response generator forwards its
events; when the client goes away the server closes the generator, which sets the execution's cancel flag,
and the execution stops at its next step (a model call already running finishes first). Background
executions are not cancelled by a closed stream: their result stays available.

Metrics (route ``rag_search``): :meth:`ToolsRuntime.run` records the stage durations of every execution, the
outcome of every one that ended (``error`` when it failed), and the outside system whose failure ended it.
Its ``tools.execution.*`` log lines carry the query, and the answer, only with ``server.log_user_text``.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assistant_bridge import metrics
from assistant_bridge.conversation.memory import ConversationMemory, MemoryLimits, MemoryTurn
from assistant_bridge.domain import Scope
from assistant_bridge.errors import BridgeError, ConfigurationError, DependencyError
from assistant_bridge.logs import user_text
from assistant_bridge.services import Services
from assistant_bridge.streaming.delta import dumps
from assistant_bridge.streaming.framing import comment, encode_payload
from assistant_bridge.streaming.pump import TIMED_OUT, ThreadPump
from assistant_bridge.tools import events as ev
from assistant_bridge.tools.config import ToolSettings
from assistant_bridge.tools.executions import ExecutionRecord, ExecutionStore
from assistant_bridge.tools.rag_search import Cancelled, RagComponents, RagSearchInputs, run_rag_search
from assistant_bridge.tools.runner import ExecutionRunner
from assistant_bridge.tools.sessions import SessionAccess

if TYPE_CHECKING:
    from assistant_bridge.conversation.assistants import Assistant

log = logging.getLogger(__name__)
INTERNAL_MESSAGE = "internal error; see the server log"
METRICS_ROUTE = "rag_search"
MEMORY_KIND = "tool"
_CITATION_TAG = re.compile(r'\s?<citation id="[^"<>]*">\[\d+\]</citation>')


class Execution:
    """One execution in progress: numbers its events and sends them to the store and/or a live queue."""

    def __init__(
        self,
        record: ExecutionRecord,
        store: ExecutionStore,
        runner: ExecutionRunner,
        *,
        persist: bool,
        sink: Callable[[tuple[int, ev.ToolEvent]], object] | None = None,
    ) -> None:
        self.record = record
        self.cancel = threading.Event()
        self.cancel_reason = "the client disconnected"
        self._store = store
        self._runner = runner
        self._persist = persist
        self._sink = sink
        self._seq = 0

    def emit(self, event: ev.ToolEvent) -> None:
        self._seq += 1
        if self._persist:
            self._store.append(self.record.id, self._seq, event)
        if self._sink is not None:
            self._sink((self._seq, event))
        if self._persist:
            self._runner.notify()


@dataclass(frozen=True)
class Job:
    """A validated request: what to run, for whom."""

    inputs: RagSearchInputs
    scope: Scope


class ToolsRuntime:
    def __init__(self, services: Services, settings: ToolSettings | None = None) -> None:
        self.services = services
        self.settings = settings or ToolSettings.from_settings(services.settings)
        s = self.settings
        self.executions = ExecutionStore(
            services.store, max_execution_seconds=s.max_execution_seconds, ttl_seconds=s.execution_ttl_seconds
        )
        self.sessions = SessionAccess(services.store)
        self.memory = ConversationMemory(services.store)
        self.runner = ExecutionRunner(s.async_threads, s.max_queued)

    # -- components -------------------------------------------------------------------------------------
    def components(self) -> RagComponents:
        """The generator, filters, thresholds and messages rag_search uses.

        :raises ModelLoadError: a model failed to load.
        :raises ConfigurationError: ``tools.rag_search.assistant`` names no assistant.
        """
        override = self.services.registered(RagComponents)
        if override is not None:
            return override
        from assistant_bridge.conversation.runtime import runtime_for

        rt = runtime_for(self.services)
        r = self.settings.rag_search
        assistant = self.assistant()
        rt.check_ready()
        pre, post = rt.filters()
        cs = assistant.conversational
        rewriter = rt.rewriter(assistant)
        if r.contextual_mode and r.contextual_mode != cs.contextual_mode:
            from assistant_bridge.conversation.rewrite import Rewriter

            rewriter = Rewriter(
                r.contextual_mode,
                rewriter.primary,
                fallback=rewriter.fallback,
                as_asked_weight=rewriter.as_asked_weight,
            )
        return RagComponents(
            generator=rt.generator(assistant),
            prefilter=pre,
            postfilter=post,
            thresholds=rt.thresholds(r.threshold_level or cs.threshold_level),
            response_length=r.response_length or cs.response_length,
            idk_message=assistant.messages.idk,
            no_result_message=assistant.messages.no_result,
            failed_message=assistant.messages.error,
            rewriter=rewriter,
            hap=rt.hap(assistant),
            hap_input_message=assistant.messages.hap_input,
            hap_output_message=assistant.messages.hap_output,
        )

    def memory_limits(self) -> MemoryLimits:
        """The memory bounds of the assistant rag_search borrows from (defaults with custom components)."""
        if self.services.registered(RagComponents) is not None:
            return MemoryLimits()
        return self.assistant().conversational.memory

    def _remember(self, session_id: str, job: Job, result: dict[str, Any]) -> None:
        answered = result["outcome"] == "answer"
        turn = MemoryTurn(
            question=job.inputs.query,
            query=str(result.get("inferred_query") or job.inputs.query),
            answer=_CITATION_TAG.sub("", result["response"]) if answered else "",
            result_ids=tuple(c["chunk_id"] for c in result["contexts"]),
            cited_ids=tuple(c["chunk_id"] for c in result["contexts"] if c["used_in_response"]),
            outcome=result["outcome"],
            # what the rewriter reads a follow-up's topic from, as a /message turn's memory holds it
            titles=tuple(
                dict.fromkeys(str(c["title"]) for c in result["contexts"] if c["used_in_response"] and c["title"])
            ),
            first_title=str(result["contexts"][0]["title"] or "") if result["contexts"] else "",
        )
        self.memory.append(
            MEMORY_KIND, session_id, turn, self.settings.rag_search.memory_ttl_seconds, self.memory_limits()
        )

    def assistant(self) -> Assistant:
        """The ``/message`` assistant rag_search borrows its components and messages from.

        :raises ConfigurationError: ``tools.rag_search.assistant`` names no configured assistant.
        """
        from assistant_bridge.conversation.runtime import runtime_for

        pairs = runtime_for(self.services).assistants.pairs
        wanted = self.settings.rag_search.assistant
        if wanted:
            matches = [a for (aid, _), a in pairs.items() if aid == wanted]
        else:
            matches = [a for (aid, _), a in pairs.items() if aid == "default"]
            matches += [a for a in pairs.values() if a.search.type == "builtin"] + list(pairs.values())
        if not matches:
            raise ConfigurationError(f"tools.rag_search.assistant: unknown assistant {wanted!r}")
        return matches[0]

    def _search(
        self, query: str, scope: Scope, limit: int, expr: Any, blend: tuple[str, float] | None, topic: str | None
    ) -> Any:
        mode = self.settings.rag_search.mode or None
        return self.services.answer_hits(query, scope, mode=mode, limit=limit, filter=expr, blend=blend, topic=topic)

    # -- running --------------------------------------------------------------------------------------
    def run(self, execution: Execution, job: Job, *, raise_errors: bool = False) -> dict[str, Any] | None:
        """Run ``job`` to its end, recording the outcome. Returns the result, or ``None`` when it failed.

        :raises BridgeError: only with ``raise_errors`` (the synchronous route maps it to an HTTP status).
        """
        rid = execution.record.id
        self.executions.start(rid)
        started = time.perf_counter()
        session_id = job.scope.session_id
        timings: dict[str, float] = {}
        generator: str | None = None
        query = user_text(self.services.settings.server.log_user_text, query=job.inputs.query)
        try:
            inputs = job.inputs
            if session_id:
                inputs = dataclasses.replace(inputs, history=tuple(self.memory.turns(MEMORY_KIND, session_id)))
            components = self.components()
            generator = components.generator.name
            result = run_rag_search(
                inputs,
                job.scope,
                search=self._search,
                components=components,
                settings=self.settings.rag_search,
                execution_id=rid,
                emit=execution.emit,
                cancelled=execution.cancel.is_set,
                timings=timings,
                on_fallback=metrics.count_fallback,
            )
            if session_id:
                self._remember(session_id, job, result)
        except Cancelled:
            metrics.observe_stages(METRICS_ROUTE, timings)
            log.info("tools.execution.cancelled", extra={"id": rid})
            self.executions.fail(rid, execution.cancel_reason, "cancelled", status="cancelled")
            execution.emit(ev.error(execution.cancel_reason, "cancelled"))
            return None
        except BridgeError as exc:
            self._record_failure(timings, exc, generator, passed_on=raise_errors)
            log.warning("tools.execution.failed", extra={"id": rid, "code": exc.code, **query})
            self.executions.fail(rid, exc.message, exc.code)
            execution.emit(ev.error(exc.message, exc.code))
            if raise_errors:
                raise
            return None
        except Exception:
            self._record_failure(timings, None, generator)
            log.exception("tools.execution.crashed", extra={"id": rid})
            self.executions.fail(rid, INTERNAL_MESSAGE, "internal_error")
            execution.emit(ev.error(INTERNAL_MESSAGE, "internal_error"))
            if raise_errors:
                raise
            return None
        self.executions.complete(rid, result)
        execution.emit(ev.end(result))
        metrics.observe_stages(METRICS_ROUTE, timings)
        metrics.count_outcome(METRICS_ROUTE, result["outcome"], result.get("idk_reason"))
        answer = user_text(self.services.settings.server.log_user_text, answer=result["response"])
        log.info(
            "tools.execution.completed",
            extra={
                "id": rid,
                "outcome": result["outcome"],
                "contexts": len(result["contexts"]),
                "cited": len(result["sources_used"]),
                "ms": round((time.perf_counter() - started) * 1000, 1),
                **query,
                **answer,
            },
        )
        return result

    def _record_failure(
        self, timings: dict[str, float], exc: BridgeError | None, generator: str | None, *, passed_on: bool = False
    ) -> None:
        """Metrics of an execution that failed: the stages that ran, outcome ``error``, and the outside system
        that failed (counted here, with the generator's name, also when ``passed_on``: the error is raised on
        to become the HTTP answer of a synchronous call)."""
        metrics.observe_stages(METRICS_ROUTE, timings)
        metrics.count_outcome(METRICS_ROUTE, "error")
        if isinstance(exc, DependencyError):
            backend = metrics.backend_of(exc.code, self.services.settings, generator)
            metrics.count_backend_error(backend, exc.code, exc if passed_on else None)

    def run_sync(self, record: ExecutionRecord, job: Job) -> dict[str, Any]:
        """:raises BridgeError: when the execution fails."""
        result = self.run(Execution(record, self.executions, self.runner, persist=False), job, raise_errors=True)
        assert result is not None
        return result

    def start_async(self, record: ExecutionRecord, job: Job) -> None:
        """Run in the pool; the caller has already called ``runner.acquire()``."""
        execution = Execution(record, self.executions, self.runner, persist=True)

        def job_body() -> None:
            self.run(execution, job)

        self.runner.run(job_body)

    def stream_live(self, record: ExecutionRecord, job: Job) -> Iterator[bytes]:
        """SSE bytes of an execution run for this very response; closing the iterator cancels it."""
        s = self.settings

        def produce(put: Callable[[tuple[int, ev.ToolEvent]], bool]) -> None:
            self.run(execution, job)  # its events reach ``put`` through the execution's sink

        events: ThreadPump[tuple[int, ev.ToolEvent]] = ThreadPump(
            produce, thread_name="tool-stream", heartbeat_seconds=s.heartbeat_seconds, max_seconds=s.stream_max_seconds
        )
        execution = Execution(record, self.executions, self.runner, persist=False, sink=events.put)

        def body() -> Iterator[bytes]:
            try:
                for item in events:
                    if item is TIMED_OUT:
                        execution.cancel_reason = "the stream reached its time limit"
                        execution.cancel.set()
                        yield self.encode(None, _stream_timeout(s.stream_max_seconds))[0]
                        return
                    if not isinstance(item, tuple):
                        yield comment()
                        continue
                    data, last = self.encode(item[0], item[1])
                    yield data
                    if last:
                        return
            finally:
                execution.cancel.set()  # no effect once the execution has ended

        return body()

    def stream_stored(self, record: ExecutionRecord, after: int = 0) -> Iterator[bytes]:
        """SSE bytes of an execution from the store (any worker), from event ``after + 1`` to its end."""
        s = self.settings
        rid = record.id

        def body() -> Iterator[bytes]:
            last = after
            version = self.runner.version()
            deadline = time.monotonic() + s.stream_max_seconds
            quiet_since = time.monotonic()
            while True:
                for seq, event in self.executions.events_after(rid, last):
                    data, end = self.encode(seq, event)
                    yield data
                    last, quiet_since = seq, time.monotonic()
                    if end:
                        return
                rec = self.executions.get(rid)
                if rec is None:
                    yield self.encode(None, ev.error("the execution no longer exists", "not_found"))[0]
                    return
                if rec.terminal:
                    if self.executions.events_after(rid, last, limit=1):
                        continue  # its last events were written after the status
                    yield self.encode(last + 1, terminal_event(rec))[0]
                    return
                if time.monotonic() >= deadline:
                    yield self.encode(None, _stream_timeout(s.stream_max_seconds))[0]
                    return
                if time.monotonic() - quiet_since >= s.heartbeat_seconds:
                    yield comment()
                    quiet_since = time.monotonic()
                version = self.runner.wait(version, s.poll_seconds)

        return body()

    def encode(self, seq: int | None, event: ev.ToolEvent) -> tuple[bytes, bool]:
        """The SSE frames of ``event`` (split when large) and whether the stream ends with it.

        An event over ``sse_max_split_bytes`` is replaced by an ``error`` event (code ``event_too_large``),
        which ends the stream.
        """
        s = self.settings
        payload = dumps(dict(event.data))
        size = len(payload.encode("utf-8"))
        if size > s.sse_max_split_bytes:
            log.warning("tools.stream.event_too_large", extra={"type": event.type, "bytes": size})
            hint = "; the result is stored: read it from the execution details" if event.type == ev.TOOL_END else ""
            event = ev.error(
                f"a {event.type} event of {size} bytes is over this stream's limit of "
                f"{s.sse_max_split_bytes} bytes{hint}",
                "event_too_large",
            )
            payload = dumps(dict(event.data))
        ident = str(seq) if seq is not None else None
        return encode_payload(event.type, payload, max_bytes=s.sse_max_event_bytes, id=ident), event.terminal


def terminal_event(rec: ExecutionRecord) -> ev.ToolEvent:
    """The last event of a finished execution, rebuilt from its record."""
    if rec.status == "completed" and rec.outputs is not None:
        return ev.end(rec.outputs)
    return ev.error(rec.error or f"the execution {rec.status}", rec.error_code or rec.status)


def _stream_timeout(seconds: float) -> ev.ToolEvent:
    return ev.error(
        f"the stream was open for {seconds:g} s and was closed; the execution details have the result", "stream_timeout"
    )


def tools_for(services: Services) -> ToolsRuntime:
    """The runtime registered on ``services``, created on first use."""
    return services.feature(ToolsRuntime, ToolsRuntime)
