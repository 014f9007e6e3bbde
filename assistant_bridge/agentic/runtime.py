"""The per-worker side of agentic retrieval: settings, retrievers, guardrails, the planner model, and how a
request becomes an :class:`~.loop.AgenticRun` bound to the service's own search and document paths.

Made once per worker by :func:`runtime_for` (``Services.feature``). Settings (all optional)::

    [agentic]
    default_max_iterations = 3     # maxAgentIteration when the request has none
    max_iterations = 10            # the largest maxAgentIteration accepted
    results_per_query = 5          # maxNumberOfResults when the request has none
    max_results = 25               # results in the final result event
    answer_passages = 5            # best results handed to the generator
    response_length = "moderate"
    speculative = true
    sufficiency = "auto"           # when the pre-generation filter scores the evidence for the planner:
                                   # auto = for an LLM planner (CUSTOM) only; prefilter = always; none = never
    threshold_level = "less_often" # the pre-generation filter level that is its pass mark
    planner = {base_url = "http://127.0.0.1:8000/v1", model = "…", api_key = "…", timeout = 30}
    generator = {kind = "openai", …}   # default: the /message default assistant's generator, else extractive
    expansion = {enabled = true, concentration = 2, window = 5, max_documents = 2, max_chars = 20000}

    [retrievers.default]           # the built-in backend; more retrievers are views of it
    description = "Company documents"
    mode = "hybrid"                # lexical | dense | hybrid (default: backend.default_mode)
    filter = "language == 'en'"    # a fixed filter (filter language), combined with the request's
    max_results = 5                # default: agentic.results_per_query
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assistant_bridge.core.filters import And, Expr, parse_filter
from assistant_bridge.domain import Chunk, Scope, SearchHit
from assistant_bridge.errors import BridgeError, ConfigurationError, ModelLoadError, NotFound, ValidationFailed
from assistant_bridge.generators.options import CHAT_ENDPOINT_TYPES, generator_table
from assistant_bridge.services import Services
from assistant_bridge.settings import Secret, build, coerce, table

from .chat import ChatClient, OpenAIChatClient
from .evidence import FullDocument
from .guardrail import Guardrail, load_guardrails
from .llm_planner import LLMPlanner
from .loop import AgenticRun, ExpansionPolicy, PreFilterLike, RetrieverBinding, RunOptions
from .planner import EmbeddedPlanner, Planner
from .request import AgenticRequest

if TYPE_CHECKING:
    from assistant_bridge.conversation.runtime import ConversationRuntime

log = logging.getLogger(__name__)
DEFAULT_RETRIEVER = "default"
_RETRIEVER_KEYS = {"description", "mode", "filter", "max_results", "collection"}


@dataclass(frozen=True)
class RetrieverConfig:
    id: str
    description: str = "The built-in document index"
    mode: str | None = None
    filter: Expr | None = None
    max_results: int | None = None  # None: agentic.results_per_query


#: when the pre-generation filter scores a run's evidence for its planner (``agentic.sufficiency``)
SUFFICIENCY = ("auto", "prefilter", "none")


@dataclass(frozen=True)
class AgenticSettings:
    default_max_iterations: int = 3
    max_iterations: int = 10
    results_per_query: int = 5
    max_results: int = 25
    answer_passages: int = 5
    response_length: str = "moderate"
    speculative: bool = True
    sufficiency: str = "auto"
    threshold_level: str = "less_often"
    expansion: ExpansionPolicy = ExpansionPolicy()
    max_document_chars: int = 20_000
    heartbeat_seconds: float = 10.0
    planner: Mapping[str, Any] | None = None
    generator: Mapping[str, Any] | None = None

    @classmethod
    def from_table(cls, raw: Any) -> AgenticSettings:
        """The ``[agentic]`` table, read like every setting (:func:`~assistant_bridge.settings.coerce`): values
        from environment variables arrive as strings, ``"false"`` is false, a nested table may be JSON.

        :raises ConfigurationError: naming the key that is unknown, of the wrong type or out of range.
        """
        data = table(raw, "agentic")
        if "max_document_chars" in data:  # set as expansion.max_chars
            raise ConfigurationError("unknown setting agentic.max_document_chars")
        exp = table(data.pop("expansion", None), "agentic.expansion")
        if "max_chars" in exp:
            data["max_document_chars"] = coerce(int, exp.pop("max_chars"), "agentic.expansion.max_chars")
        data["expansion"] = build(ExpansionPolicy, exp, "agentic.expansion")
        if data.get("planner") is not None:
            data["planner"] = _planner(data["planner"])
        if data.get("generator") is not None:
            data["generator"] = generator_table(data["generator"], "agentic.generator")
        out: AgenticSettings = build(cls, data, "agentic")
        if not 2 <= out.default_max_iterations <= out.max_iterations:
            raise ConfigurationError("agentic.default_max_iterations must be from 2 to agentic.max_iterations")
        if min(out.results_per_query, out.max_results, out.answer_passages) < 1:
            raise ConfigurationError("agentic.results_per_query, max_results and answer_passages must be >= 1")
        if out.sufficiency not in SUFFICIENCY:
            raise ConfigurationError(f"agentic.sufficiency must be one of {', '.join(SUFFICIENCY)}")
        return out


# the agentic.planner keys: the options of OpenAIChatClient an operator sets
_PLANNER_KEYS: dict[str, Any] = {**CHAT_ENDPOINT_TYPES, "temperature": float}


def _planner(raw: Any) -> dict[str, Any]:
    where = "agentic.planner"
    data = table(raw, where)
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key not in _PLANNER_KEYS:
            raise ConfigurationError(f"unknown setting {where}.{key}")
        out[key] = coerce(_PLANNER_KEYS[key], value, f"{where}.{key}")
    if not (out.get("base_url") and out.get("model")):
        raise ConfigurationError("agentic.planner needs base_url and model")
    return out


def load_retrievers(settings: Any) -> dict[str, RetrieverConfig]:
    """``retrievers.default`` (the built-in backend) plus every ``[retrievers.<id>]`` table.

    :raises ConfigurationError: on an unknown key, a bad mode, a filter that does not parse, or a collection
        other than the one this service serves.
    """
    retrievers = table(settings.extra.get("retrievers"), "retrievers")
    out = {DEFAULT_RETRIEVER: RetrieverConfig(DEFAULT_RETRIEVER)}
    for rid, raw in retrievers.items():
        where = f"retrievers.{rid}"
        cfg = table(raw, where)
        if set(cfg) - _RETRIEVER_KEYS:
            raise ConfigurationError(f"{where} must be a table with keys among {sorted(_RETRIEVER_KEYS)}")
        if not str(rid).replace("-", "").replace("_", "").replace(".", "").isalnum() or len(str(rid)) > 64:
            raise ConfigurationError(f"{where}: ids are letters, digits, '-', '_' or '.' (at most 64)")
        mode = coerce(str | None, cfg.get("mode"), f"{where}.mode")
        if mode is not None and mode not in ("lexical", "dense", "hybrid"):
            raise ConfigurationError(f"{where}.mode must be lexical, dense or hybrid")
        if coerce(str | None, cfg.get("collection"), f"{where}.collection") not in (None, settings.backend.collection):
            raise ConfigurationError(f"{where}.collection: this service serves only {settings.backend.collection!r}")
        text = coerce(str | None, cfg.get("filter"), f"{where}.filter")
        try:
            expr = parse_filter(text)
        except BridgeError as exc:
            raise ConfigurationError(f"{where}.filter: {exc.message}") from None
        fallback = out[DEFAULT_RETRIEVER].description if rid == DEFAULT_RETRIEVER else ""
        limit = coerce(int | None, cfg.get("max_results"), f"{where}.max_results")
        if limit is not None and limit < 1:
            raise ConfigurationError(f"{where}.max_results must be at least 1")
        description = coerce(str | None, cfg.get("description"), f"{where}.description")
        out[str(rid)] = RetrieverConfig(str(rid), description or fallback, mode, expr, limit)
    return out


def stitch(chunks: list[Chunk]) -> str:
    """A document's text from its chunks in position order, without the overlap between neighbours."""
    parts: list[str] = []
    end = -1
    for c in chunks:
        if parts and c.end_char > c.start_char and 0 <= c.start_char < end:
            skip = end - c.start_char
            parts.append(c.text[skip:] if skip < len(c.text) else "")
        else:
            parts.append(("\n\n" if parts else "") + c.text)
        end = max(end, c.end_char)
    return "".join(parts)


class AgenticRuntime:
    """:param generator, prefilter, threshold, chat: replace the configured components (tests, benchmarks)."""

    def __init__(
        self,
        services: Services,
        *,
        generator: Any = None,
        prefilter: PreFilterLike | None = None,
        threshold: float | None = None,
        chat: ChatClient | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.services = services
        self.settings = AgenticSettings.from_table(services.settings.extra.get("agentic") or {})
        self.retrievers = load_retrievers(services.settings)
        self.guardrails = load_guardrails(services.settings.extra.get("guardrails"))
        self.clock = clock
        self._generator = generator
        self._prefilter = prefilter
        self._threshold = threshold
        self._prefilter_resolved = prefilter is not None
        self.chat = chat
        if chat is None and self.settings.planner is not None:
            # from_table kept only OpenAIChatClient's options, each of its type (the key a Secret)
            self.chat = OpenAIChatClient(**self.settings.planner)
        self._lock = threading.Lock()

    # ------------------------------------------------------------------------------------- components
    def warm_up(self) -> None:
        """Open the planner model's connection pool. The generator and the pre-generation filter are
        resolved on the first request: they are usually borrowed from the ``/message`` runtime, which warms
        them itself, and an app that never serves this route should not load them twice."""
        warm = getattr(self.chat, "warm_up", None)
        if callable(warm):
            warm()

    def generator(self) -> Any:
        """Injected > ``agentic.generator`` > the /message default assistant's generator > extractive."""
        with self._lock:
            if self._generator is None:
                self._generator = self._make_generator()
                self._generator.warm_up()
            return self._generator

    def _make_generator(self) -> Any:
        from assistant_bridge.generators import make_generator

        if self.settings.generator is not None:
            cfg = {k: (v.get() if isinstance(v, Secret) else v) for k, v in self.settings.generator.items()}
            return make_generator(str(cfg.pop("kind", "extractive")), **cfg)
        conversation = self._conversation()
        if conversation is not None:
            try:
                return conversation.generator(conversation.assistants.get("default"))
            except (BridgeError, AttributeError, KeyError):
                log.info("agentic.generator", extra={"source": "extractive", "reason": "no_default_assistant"})
        return make_generator("extractive")

    def _conversation(self) -> ConversationRuntime | None:
        """The ``/message`` runtime when this worker has made one (its generator and filters are reused)."""
        from assistant_bridge.conversation.runtime import ConversationRuntime

        return self.services.registered(ConversationRuntime)

    def prefilter(self) -> tuple[PreFilterLike | None, float | None]:
        """The /message pre-generation filter and its threshold, when that feature is configured and loads."""
        with self._lock:
            if not self._prefilter_resolved:
                self._prefilter_resolved = True
                conversation = self._conversation()
                if conversation is not None:
                    try:
                        self._prefilter = conversation.filters()[0]
                        self._threshold = conversation.thresholds(self.settings.threshold_level).pre_gen
                    except (ModelLoadError, ConfigurationError) as exc:
                        log.warning("agentic.prefilter_unavailable", extra={"code": exc.code})
                        self._prefilter, self._threshold = None, None
            return self._prefilter, self._threshold

    def scores_evidence(self, request: AgenticRequest) -> bool:
        """Whether the pre-generation filter scores the run's evidence for its planner (``agentic.sufficiency``).

        ``auto`` gives the score to an LLM planner only, as one line of its prompt. The embedded planner does
        without it: on HotpotQA and CLAPNQ its runs found the same passages with the score and without
        (docs/agentic-retrieval.md), and the score cost five to ten times the rest of a run."""
        mode = self.settings.sufficiency
        return mode == "prefilter" or (mode == "auto" and request.planner == "CUSTOM")

    # ------------------------------------------------------------------------------------------ a run
    def bindings(self, request: AgenticRequest, scope: Scope) -> list[RetrieverBinding]:
        out = []
        for r in request.retrievers:
            cfg = self.retrievers[r.id]
            expr = (
                And((cfg.filter, r.filter))
                if cfg.filter is not None and r.filter is not None
                else cfg.filter or r.filter
            )
            limit = r.max_results or cfg.max_results or self.settings.results_per_query
            out.append(
                RetrieverBinding(r.id, self._search_fn(scope, cfg.mode, expr), limit, r.description or cfg.description)
            )
        return out

    def _search_fn(self, scope: Scope, mode: str | None, expr: Expr | None) -> Callable[[str, int], list[SearchHit]]:
        svc = self.services

        def search(text: str, limit: int) -> list[SearchHit]:
            return svc.search(text, scope, mode=mode, limit=limit, filter=expr)

        return search

    def fetch_document(self, scope: Scope) -> Callable[[str], FullDocument | None]:
        """Reads a document within ``scope``: the backend decides visibility; the stored text is used when
        the store has it, otherwise the chunks are stitched together."""
        svc, limit = self.services, self.settings.max_document_chars

        def fetch(document_id: str) -> FullDocument | None:
            chunks = svc.backend.document_chunks(document_id, scope)
            if not chunks:
                return None
            doc = svc.store.get_document(document_id)
            text = doc.text if doc is not None and doc.text else stitch(chunks)
            title = doc.title if doc is not None else chunks[0].title
            return FullDocument(document_id, title, text[:limit], len(chunks), chunks[0].url, len(text) > limit)

        return fetch

    def guardrail(self, request: AgenticRequest) -> Guardrail | None:
        if request.guardrail is None:
            return None
        found = self.guardrails.get(request.guardrail)
        if found is None:
            path = "$.policyConfiguration.bedrockGuardrailConfiguration"
            raise NotFound(
                f"{path}: unknown guardrail {request.guardrail[0]!r} version {request.guardrail[1]!r}", path=path
            )
        return found

    def planner(self, request: AgenticRequest) -> Planner:
        if request.planner == "CUSTOM":
            if self.chat is None:
                raise ValidationFailed(
                    "$.agenticRetrieveConfiguration.foundationModelType: CUSTOM needs a planner "
                    "model in the agentic.planner settings",
                    path="$.agenticRetrieveConfiguration.foundationModelType",
                )
            return LLMPlanner(self.chat, EmbeddedPlanner())
        return EmbeddedPlanner()

    def options(self, request: AgenticRequest) -> RunOptions:
        s = self.settings
        return RunOptions(
            max_iterations=request.max_iterations or s.default_max_iterations,
            rerank=request.rerank,
            generate=request.generate,
            speculative=s.speculative,
            max_results=s.max_results,
            answer_passages=s.answer_passages,
            response_length=s.response_length,
            expansion=s.expansion,
        )

    def build_run(self, request: AgenticRequest, scope: Scope, run_id: str = "run") -> AgenticRun:
        """Everything checked before the stream starts: guardrail id, planner model, retrievers."""
        guardrail = self.guardrail(request)
        planner = self.planner(request)
        prefilter, threshold = self.prefilter() if self.scores_evidence(request) else (None, None)
        return AgenticRun(
            request.question,
            self.bindings(request, scope),
            planner=planner,
            generator=self.generator() if request.generate else None,
            prefilter=prefilter,
            threshold=threshold,
            guardrail=guardrail,
            fetch_document=self.fetch_document(scope),
            options=self.options(request),
            clock=self.clock,
            run_id=run_id,
            conversation=request.conversation,
            log_user_text=self.services.settings.server.log_user_text,
        )


def runtime_for(services: Services) -> AgenticRuntime:
    """The runtime registered on ``services``, created on first use."""
    return services.feature(AgenticRuntime, AgenticRuntime)
