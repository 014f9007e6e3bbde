"""The per-worker components of the ``/message`` API: assistants, sessions, search sources, filters,
thresholds and generators, made once per worker by :func:`runtime_for` (``Services.feature``).

Constructors are light; :meth:`ConversationRuntime.warm_up` loads the models once per worker, after the
gunicorn fork (``post_worker_init``). The multilingual sentence encoder and the filter models are loaded once
per *process* and shared by every app in it (the filters and the extractive generator share one encoder and
its cache; it runs with ``message.encoder_threads`` BLAS threads, 1 by default). A model that fails to load
is logged at warm-up with its file path, makes ``/readyz`` answer false with the reason
(:meth:`ConversationRuntime.not_ready_reason`), and is raised again as
:class:`~assistant_bridge.errors.ModelLoadError` by the ``/message`` turns that need a model, with the
path left out of the error (the log has it); the rest of the service keeps working. A turn without search
results needs no model: :meth:`ConversationRuntime.filters` hands out filters that load on their first
score. Tests inject fakes through the constructor.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from assistant_bridge.conversation.assistants import Assistant, AssistantsConfig, load_assistants
from assistant_bridge.conversation.rewrite import Rewriter, make_rewriter
from assistant_bridge.conversation.sessions import SessionStore
from assistant_bridge.conversation.sources import BuiltinSource, RemoteSource, SearchSource
from assistant_bridge.core.loop import SecondLookLike
from assistant_bridge.errors import ConfigurationError, ModelLoadError
from assistant_bridge.filters import PostFilter, PreFilter, Thresholds, load_filters, load_thresholds
from assistant_bridge.generators import Generator, make_generator
from assistant_bridge.generators.coverage import CoveringPreFilter
from assistant_bridge.safety.hap import HapCheck, HapScorer, shared_scorer
from assistant_bridge.services import Services
from assistant_bridge.settings import Secret, Settings, build, table

log = logging.getLogger(__name__)

_shared_lock = threading.Lock()
_shared_encoder: Any = None
_shared_filters: dict[str, tuple[PreFilter, PostFilter]] = {}


def shared_encoder(threads: int = 1) -> Any:
    """The process-wide USE-multilingual encoder (light to build; loads in ``warm_up``).

    :param threads: BLAS threads of its forward pass, used by the first call of the process. One is the
        default: a turn encodes small batches, which gain nothing from more threads, and on a busy 2-core
        host two threads per worker ran 5–10 times slower than one.
    """
    global _shared_encoder
    with _shared_lock:
        if _shared_encoder is None:
            from assistant_bridge.filters.encoder import UseEncoder

            _shared_encoder = UseEncoder(threads=threads)
        return _shared_encoder


def shared_filters(model_dir: str | None, threads: int = 1, embedder: Any = None) -> tuple[PreFilter, PostFilter]:
    """The ONNX pre/post filters of ``model_dir``, loaded and warmed once per process.

    :param embedder: the service's embedder; the pre-filter's dense similarity uses it when it is the
        multilingual-e5-small the filter was trained with, and its own copy of that model otherwise.

    :raises ModelLoadError: a model file is missing or corrupt.
    """
    key = model_dir or ""
    encoder = shared_encoder(threads)
    with _shared_lock:
        found = _shared_filters.get(key)
    if found is not None:
        return found
    from assistant_bridge.embedders.e5 import E5Embedder
    from assistant_bridge.filters.onnx_filters import EmbedderSimilarity

    dense = EmbedderSimilarity(embedder) if isinstance(embedder, E5Embedder) else None
    loaded, post = load_filters(Path(model_dir) if model_dir else None, encoder=encoder, dense=dense)
    pre = CoveringPreFilter(loaded)  # the loop's coverage rule reads the snippets' sentences
    pre.warm_up()
    post.warm_up()
    with _shared_lock:
        _shared_filters.setdefault(key, (pre, post))
        return _shared_filters[key]


@dataclass(frozen=True)
class MessageSettings:
    """The ``[message]`` settings table."""

    filters_dir: str | None = None  # default: the filters package's model directory
    heartbeat_seconds: float = 10.0  # SSE keep-alive comment while a streamed turn is still working
    max_search_results_bytes: int = 100_000  # spec §A.2: a larger search_results message is a 400
    encoder_threads: int = 1  # BLAS threads of the shared USE-multilingual encoder (filters and generator)

    @classmethod
    def from_settings(cls, settings: Settings) -> MessageSettings:
        """:raises ConfigurationError: naming the key that is unknown, of the wrong type or out of range."""
        data = table(settings.extra.get("message"), "message")
        if not data.get("filters_dir"):  # "" = the default directory
            data.pop("filters_dir", None)
        out: MessageSettings = build(cls, data, "message")
        if out.heartbeat_seconds <= 0 or out.max_search_results_bytes < 1000:
            raise ConfigurationError("message.heartbeat_seconds must be > 0 and max_search_results_bytes >= 1000")
        if not 1 <= out.encoder_threads <= 64:
            raise ConfigurationError("message.encoder_threads must be between 1 and 64")
        return out


def _generator_options(config: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    opts = {k: (v.get() if isinstance(v, Secret) else v) for k, v in config.items() if k != "kind"}
    return str(config.get("kind", "extractive")), opts


class ConversationRuntime:
    """Everything a ``/message`` turn needs besides the request.

    :param prefilter, postfilter: replace the ONNX filters (tests, or a custom model).
    :param generator: one generator for every assistant instead of each assistant's ``generator`` table.
    :param thresholds: ``level -> Thresholds`` instead of :func:`~assistant_bridge.filters.load_thresholds`.
    :param transport: an httpx transport for remote search servers (tests use ``httpx.MockTransport``).
    :param sessions: a session store (default: the ``message_sessions`` table of ``services.store``).
    :param hap_scorer: replaces the word-list HAP scorer (tests, or a model).
    :param rewriters: ``(assistant id, environment id) -> Rewriter`` replacing the configured ones (tests).
        A configured rewrite LLM uses ``transport`` too.
    """

    def __init__(
        self,
        services: Services,
        assistants: AssistantsConfig | None = None,
        *,
        prefilter: PreFilter | None = None,
        postfilter: PostFilter | None = None,
        generator: Generator | None = None,
        thresholds: Callable[[str], Thresholds] | None = None,
        transport: httpx.BaseTransport | None = None,
        sessions: SessionStore | None = None,
        hap_scorer: HapScorer | None = None,
        rewriters: Mapping[tuple[str, str], Rewriter] | None = None,
    ) -> None:
        self.services = services
        self.settings = MessageSettings.from_settings(services.settings)
        self.assistants = assistants or load_assistants(services.settings)
        self.sessions = sessions or SessionStore(services.store)
        self._filters = (prefilter, postfilter) if prefilter is not None and postfilter is not None else None
        if (prefilter is None) != (postfilter is None):
            raise ConfigurationError("give both prefilter and postfilter, or neither")
        self._thresholds_fn = thresholds or (
            lambda level: load_thresholds(level, Path(self.settings.filters_dir) if self.settings.filters_dir else None)
        )
        self._thresholds: dict[str, Thresholds] = {}
        self._generators: dict[tuple[str, str], Generator] = {}
        self._sources: dict[tuple[str, str], SearchSource] = {}
        self._rewriters: dict[tuple[str, str], Rewriter] = dict(rewriters or {})
        self._hap: dict[tuple[str, str], HapCheck] = {}
        scorer = hap_scorer or shared_scorer()
        for key, assistant in self.assistants.pairs.items():
            self._generators[key] = generator or self._make_generator(assistant, self.settings.encoder_threads)
            cs = assistant.conversational
            if key not in self._rewriters:
                try:
                    self._rewriters[key] = make_rewriter(
                        cs.contextual_mode, cs.query_rewrite, assistant.generator, transport=transport
                    )
                except ConfigurationError as exc:
                    raise ConfigurationError(f"assistants.{assistant.id}.conversational_search.{exc.message}") from None
            self._hap[key] = HapCheck(cs.hap, scorer)
            if assistant.search.type == "builtin":
                self._sources[key] = BuiltinSource(services, assistant.search)
            elif assistant.search.type == "server":
                self._sources[key] = RemoteSource(assistant.search, transport=transport)
        self._load_error: ModelLoadError | None = None
        self._warm = False
        # a Flask app in TESTING mode sets this to load models on first use instead of at warm-up, so test
        # suites that never run a turn do not pay for them
        self.preload: Callable[[], bool] = lambda: True
        self._lock = threading.Lock()

    @staticmethod
    def _make_generator(assistant: Assistant, threads: int = 1) -> Generator:
        kind, opts = _generator_options(assistant.generator)
        if kind in ("extractive", "default") and "embedder" not in opts:
            opts["embedder"] = shared_encoder(threads)  # one encoder for the filters and the generator
        try:
            return make_generator(kind, **opts)
        except ConfigurationError as exc:
            raise ConfigurationError(f"assistants.{assistant.id}.generator: {exc.message}") from None

    def warm_up(self) -> None:
        """Load the filters, thresholds and generators once (``Services.warm_up`` calls this after the fork),
        unless :attr:`preload` says not to; :meth:`check_ready` then loads them on the first turn that needs
        them. A load failure is logged (with the file path), not raised: ``/readyz`` reports it
        (:meth:`not_ready_reason`), the ``/message`` turns that need a model raise it (:meth:`check_ready`)
        and the other routes keep working."""
        if self.preload():
            self._load()

    def _load(self) -> None:
        with self._lock:
            if self._warm:
                return
            try:
                self._loaded_filters()
                for assistant in self.assistants.pairs.values():
                    self.thresholds(assistant.conversational.threshold_level)
                for gen in {id(g): g for g in self._generators.values()}.values():
                    gen.warm_up()
            except ModelLoadError as exc:
                self._load_error = public_error(exc)
                log.error(
                    "conversation.warm_up_failed",
                    extra={"code": exc.code, "error": exc.message, "details": exc.details},
                )
            self._warm = True

    def check_ready(self) -> None:
        """Load the models if that was not done yet.

        :raises ModelLoadError: when a model failed to load; its message names the file but no path, and it
            carries no details (the log has them).
        """
        self._load()
        if self._load_error is not None:
            raise ModelLoadError(self._load_error.message)

    def not_ready_reason(self) -> str | None:
        """Why this worker cannot answer ``/message`` turns (a model failed to load at warm-up), or ``None``."""
        return None if self._load_error is None else f"conversational search: {self._load_error.message}"

    def _loaded_filters(self) -> tuple[PreFilter, PostFilter]:
        if self._filters is None:
            self._filters = shared_filters(
                self.settings.filters_dir, self.settings.encoder_threads, self.services.embedder
            )
        return self._filters

    def filters(self) -> tuple[PreFilter, PostFilter]:
        """The pre- and post-generation filters. Until the models are loaded (an app in TESTING mode, or a
        load that failed), stand-ins that load them on their first ``score`` (:meth:`check_ready`), so a turn
        that scores nothing, such as one without search results, needs no model."""
        if self._filters is not None:
            return self._filters
        return _LazyPreFilter(self), _LazyPostFilter(self)

    def thresholds(self, level: str) -> Thresholds:
        found = self._thresholds.get(level)
        if found is None:
            found = self._thresholds[level] = self._thresholds_fn(level)
        return found

    def generator(self, assistant: Assistant) -> Generator:
        return self._generators[(assistant.id, assistant.environment_id)]

    def rewriter(self, assistant: Assistant) -> Rewriter:
        """How the assistant turns the last message into the query (its ``contextual_mode``)."""
        return self._rewriters[(assistant.id, assistant.environment_id)]

    def hap(self, assistant: Assistant) -> HapCheck:
        """The assistant's HAP filtering of questions and answers."""
        return self._hap[(assistant.id, assistant.environment_id)]

    def source(self, assistant: Assistant) -> SearchSource | None:
        """``None`` for client-side search."""
        return self._sources.get((assistant.id, assistant.environment_id))


_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\\/][^\s\\/'\"]+){2,}[\\/]?")


def public_error(exc: ModelLoadError) -> ModelLoadError:
    """The same error without file paths: no ``details`` (they hold the path) and paths in the message
    replaced by ``<path>``. HTTP bodies and ``/readyz`` show this one; the log keeps the original."""
    return ModelLoadError(_PATH.sub("<path>", exc.message))


class _LazyPreFilter:
    def __init__(self, runtime: ConversationRuntime) -> None:
        self._rt = runtime

    def warm_up(self) -> None:
        self._rt.check_ready()

    def score(self, query: str, snippets: Sequence[str]) -> float:
        self._rt.check_ready()
        return self._rt._loaded_filters()[0].score(query, snippets)

    def second_look(self, query: str, snippets: Sequence[str]) -> list[tuple[int, float]]:
        self._rt.check_ready()
        pre = self._rt._loaded_filters()[0]
        return pre.second_look(query, snippets) if isinstance(pre, SecondLookLike) else []


class _LazyPostFilter:
    def __init__(self, runtime: ConversationRuntime) -> None:
        self._rt = runtime

    def warm_up(self) -> None:
        self._rt.check_ready()

    def score(self, query: str, snippets: Sequence[str], answer: str) -> float:
        self._rt.check_ready()
        return self._rt._loaded_filters()[1].score(query, snippets, answer)


def runtime_for(services: Services) -> ConversationRuntime:
    """The runtime registered on ``services``, created on first use."""
    return services.feature(ConversationRuntime, ConversationRuntime)
