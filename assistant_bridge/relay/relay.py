"""The client-side search relay (spec §A.2): send a message, answer every search action with a search
provider, repeat until the assistant answers, return (or stream) that answer.

::

    result = relay_message("https://.../v2/assistants/A/environments/E/message", "How do I reset my password?",
                           provider=HttpSearchProvider("http://127.0.0.1:8080/v1/search"))
    print(result.text)

One round: every ``search`` action of the response is run (in order) and the result lists are merged by
rank (:func:`~assistant_bridge.relay.wire.merge_results`); the ``search_results`` message echoes the
response's ``context`` and ``user_id`` and is trimmed to ``max_request_bytes``. A turn that still asks for a
search after ``max_rounds`` rounds raises :class:`SearchLoopExceeded`. Logs carry counts and timings, never
a result, and the user's text, the queries and the answer only when the relay is built with
``log_user_text`` (``server.log_user_text``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict, Unpack

import httpx

from assistant_bridge.domain import Principal, Scope
from assistant_bridge.errors import BridgeError, ConfigurationError
from assistant_bridge.logs import user_text
from assistant_bridge.relay import wire
from assistant_bridge.relay.auth import Credentials, credentials_from_config
from assistant_bridge.relay.client import DEFAULT_VERSION, AssistantClient
from assistant_bridge.relay.config import RelayConfig, SearchProviderConfig
from assistant_bridge.relay.errors import MalformedAssistantResponse, RelaySearchFailed, SearchLoopExceeded
from assistant_bridge.relay.providers import HttpSearchProvider, SearchProvider, ServicesProvider, checked_results
from assistant_bridge.services import Services
from assistant_bridge.settings import Settings

log = logging.getLogger(__name__)
IN_PROCESS_ORIGIN = "http://assistant-bridge.internal"
LOCAL_PRINCIPAL = Principal(user_id="local", admin=True, key_id="relay-local")


@dataclass(frozen=True)
class SearchRecord:
    """One search action the relay ran. ``query`` is kept for the caller; it is never logged."""

    round: int
    query: str
    filter: str | None
    result_count: int
    ms: float
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "round": self.round,
            "query": self.query,
            "result_count": self.result_count,
            "ms": round(self.ms, 1),
        }
        if self.filter:
            out["filter"] = self.filter
        if self.error:
            out["error"] = self.error
        return out


@dataclass(frozen=True)
class RelayResult:
    """The assistant's final ``/message`` response and what the relay did to get it.

    :param response: the final response body, as the assistant sent it.
    :param rounds: search rounds run (0 when the assistant answered at once).
    :param search_results: the results sent in the last round (after merging and trimming).
    :param trimmed: results dropped or shortened to respect the request limit, over all rounds.
    """

    response: dict[str, Any]
    rounds: int = 0
    searches: tuple[SearchRecord, ...] = ()
    search_results: tuple[dict[str, Any], ...] = ()
    trimmed: int = 0
    session_id: str | None = None

    @property
    def generic(self) -> list[dict[str, Any]]:
        return list(self.response.get("output", {}).get("generic") or [])

    @property
    def text(self) -> str:
        """The texts of the response's items, one per line."""
        return "\n".join(str(g["text"]) for g in self.generic if isinstance(g, dict) and isinstance(g.get("text"), str))

    @property
    def outcome(self) -> str:
        return wire.classify(self.response)

    def summary(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "rounds": self.rounds,
            "trimmed": self.trimmed,
            "searches": [s.to_json() for s in self.searches],
        }


class TurnOptions(TypedDict, total=False):
    """The options of one relayed turn (:meth:`Relay.send`, :meth:`Relay.stream`).

    ``session_id``: the assistant's session (none: a stateless turn); ``context``: a stateless conversation's
    context, echoed from the previous response; ``user_id``; ``options``: ``input.options`` of every message of
    the turn (e.g. ``{"debug": true}``); ``headers``: extra headers for every request of the turn."""

    session_id: str | None
    context: Mapping[str, Any] | None
    user_id: str | None
    options: Mapping[str, Any] | None
    headers: Mapping[str, str] | None


@dataclass
class _Turn:
    """One relayed turn: what was asked (see :class:`TurnOptions`) and its state so far."""

    text: str
    session_id: str | None = None
    context: Mapping[str, Any] | None = None
    user_id: str | None = None
    options: Mapping[str, Any] | None = None
    headers: Mapping[str, str] | None = None
    rounds: int = 0
    searches: list[SearchRecord] = field(default_factory=list)
    sent: list[dict[str, Any]] = field(default_factory=list)
    trimmed: int = 0


class Relay:
    """Relays one assistant's client-side searches to a search provider.

    :param client: the assistant (see :class:`~assistant_bridge.relay.client.AssistantClient`).
    :param provider: runs each search action.
    :param max_rounds: search rounds per turn before :class:`SearchLoopExceeded`.
    :param max_request_bytes: the size limit of each ``search_results`` message (spec: 100 KB).
    :param max_results: results per round after merging.
    :param on_search_error: ``raise`` (default) fails the turn with :class:`RelaySearchFailed`; ``empty``
        sends the results of the searches that worked (possibly none), so the assistant answers "no results".
    :param log_user_text: the turn's log lines also carry the user's text, the queries and the answer.
    """

    def __init__(
        self,
        client: AssistantClient,
        provider: SearchProvider,
        *,
        max_rounds: int = 5,
        max_request_bytes: int = 100_000,
        max_results: int = 50,
        on_search_error: str = "raise",
        stream_supported: bool = True,
        log_user_text: bool = False,
    ) -> None:
        if max_rounds < 1:
            raise ValueError("max_rounds must be at least 1")
        self.client = client
        self.provider = provider
        self.max_rounds = max_rounds
        self.max_request_bytes = max_request_bytes
        self.max_results = max_results
        self.on_search_error = on_search_error
        self.stream_supported = stream_supported
        self.log_user_text = log_user_text

    # -- construction -----------------------------------------------------------------------------
    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        provider: SearchProvider,
        auth: Credentials | None = None,
        version: str = DEFAULT_VERSION,
        timeout: float = 60.0,
        retries: int = 2,
        transport: httpx.BaseTransport | None = None,
        **options: Any,
    ) -> Relay:
        return cls(
            AssistantClient(url, auth=auth, version=version, timeout=timeout, retries=retries, transport=transport),
            provider,
            **options,
        )

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        services: Services | None = None,
        scope: Scope | None = None,
        transport: httpx.BaseTransport | None = None,
        app: Any = None,
    ) -> Relay:
        """The relay of ``settings.extra["relay"]`` (see :mod:`assistant_bridge.relay.config`).

        With no ``relay.url`` the target is this service's own assistant (``client-side`` by default),
        called in-process through its Flask ``app`` (or ``transport``);
        :func:`assistant_bridge.web.app.relay_from_settings` builds that app for you.
        :param scope: whose documents the built-in provider searches (default: a local admin principal,
            as anonymous loopback access has).
        """
        cfg = RelayConfig.from_settings(settings)
        if cfg.search.type == "builtin" or cfg.in_process:
            services = services or Services.from_settings(settings)
        provider = provider_from_config(cfg, services, scope or Scope(principal=LOCAL_PRINCIPAL))
        if cfg.in_process and transport is None:
            if app is None:
                raise ConfigurationError(
                    "relay.url is not set, so the relay calls this service in-process: pass "
                    "its app=, or use assistant_bridge.web.app.relay_from_settings(settings)"
                )
            transport = httpx.WSGITransport(app=app)
        return cls.from_config(cfg, provider, transport, log_user_text=settings.server.log_user_text)

    @classmethod
    def from_config(
        cls,
        cfg: RelayConfig,
        provider: SearchProvider,
        transport: httpx.BaseTransport | None = None,
        *,
        log_user_text: bool = False,
    ) -> Relay:
        """The relay of a checked ``[relay]`` table, with the given search provider."""
        return cls(
            client_from_config(cfg, transport),
            provider,
            max_rounds=cfg.max_rounds,
            max_request_bytes=cfg.max_request_bytes,
            max_results=cfg.max_results,
            on_search_error=cfg.on_search_error,
            stream_supported=cfg.stream,
            log_user_text=log_user_text,
        )

    def with_provider(self, provider: SearchProvider) -> Relay:
        """A relay sharing this one's assistant connection pool, with another provider (one per caller)."""
        other = Relay.__new__(Relay)
        other.__dict__.update(self.__dict__)
        other.provider = provider
        return other

    # -- one turn ---------------------------------------------------------------------------------
    def send(self, text: str, **options: Unpack[TurnOptions]) -> RelayResult:
        """Send ``text`` and answer the assistant's searches until it answers.

        :raises RelayError: (a subclass) when the assistant or the provider fails.
        """
        turn = _Turn(text, **options)
        started = time.perf_counter()
        response = self._post(
            turn, wire.text_message(text, context=turn.context, user_id=turn.user_id, options=turn.options)
        )
        while actions := wire.search_actions(response):
            response = self._post(turn, self._round(turn, response, actions))
        return self._finished("relay.turn", turn, response, ms=round((time.perf_counter() - started) * 1000, 1))

    def stream(self, text: str, **options: Unpack[TurnOptions]) -> Generator[tuple[str, Any], None, None]:
        """Like :meth:`send`, as events (see :mod:`assistant_bridge.relay.events`): the assistant's
        ``partial_item``/``complete_item`` events pass through as they come, ``relay_search`` reports each
        round of searches, then the last ``final_response`` and ``relay_end`` (the summary). An assistant
        ``error`` event raises :class:`MalformedAssistantResponse` unless it is in-band after items.

        When the assistant has no ``message_stream`` (``stream_supported=False``) the answer's items are sent
        as ``complete_item`` events once it is known.
        """
        turn = _Turn(text, **options)
        body = wire.text_message(text, context=turn.context, user_id=turn.user_id, options=turn.options)
        while True:
            final: dict[str, Any] | None = None
            if self.stream_supported:
                for name, payload in self.client.stream(body, session_id=turn.session_id, headers=turn.headers):
                    if name == "final_response":
                        final = payload
                    elif name == "error":
                        raise _stream_error(payload)
                    else:
                        yield name, payload
            else:
                final = self._post(turn, body)
            assert final is not None
            actions = wire.search_actions(final)
            if not actions:
                break
            body = self._round(turn, final, actions)
            yield (
                "relay_search",
                {
                    "round": turn.rounds,
                    "searches": [s.to_json() for s in turn.searches if s.round == turn.rounds],
                    "search_results": turn.sent,
                    "trimmed": turn.trimmed,
                },
            )
        if not self.stream_supported:
            for n, item in enumerate(final.get("output", {}).get("generic") or [], start=1):
                if isinstance(item, dict):
                    yield "complete_item", {**item, "streaming_metadata": {"id": n}}
        result = self._finished("relay.stream", turn, final)
        yield "final_response", final
        yield "relay_end", result.summary()

    def _post(self, turn: _Turn, body: Mapping[str, Any]) -> dict[str, Any]:
        return self.client.post(body, session_id=turn.session_id, headers=turn.headers)

    def _finished(self, event: str, turn: _Turn, response: dict[str, Any], **fields: Any) -> RelayResult:
        """The turn's result, logged as ``event``."""
        result = RelayResult(
            response=response,
            rounds=turn.rounds,
            searches=tuple(turn.searches),
            search_results=tuple(turn.sent),
            trimmed=turn.trimmed,
            session_id=turn.session_id,
        )
        log.info(
            event,
            extra={
                "rounds": turn.rounds,
                "searches": len(turn.searches),
                "trimmed": turn.trimmed,
                "outcome": result.outcome,
                **fields,
                **user_text(self.log_user_text, text=turn.text, answer=result.text),
            },
        )
        return result

    # -- rounds -----------------------------------------------------------------------------------
    def _round(
        self,
        turn: _Turn,
        response: Mapping[str, Any],
        actions: Sequence[Mapping[str, Any]],
    ) -> dict[str, Any]:
        if turn.rounds >= self.max_rounds:
            raise SearchLoopExceeded(
                f"the assistant still asked for a search after {self.max_rounds} rounds", rounds=turn.rounds
            )
        turn.rounds += 1
        lists = [self._search(turn, action) for action in actions]
        merged = wire.merge_results([lst for lst in lists if lst is not None], self.max_results)
        body, trimmed = wire.results_message(
            response, merged, self.max_request_bytes, user_id=turn.user_id, options=turn.options
        )
        turn.trimmed += trimmed
        turn.sent = list(body["input"]["search_results"])
        if trimmed:
            log.info(
                "relay.trimmed",
                extra={"round": turn.rounds, "dropped_or_cut": trimmed, "limit": self.max_request_bytes},
            )
        return body

    def _search(self, turn: _Turn, action: Mapping[str, Any]) -> list[dict[str, Any]] | None:
        t0 = time.perf_counter()
        query, filt = action["query"], action.get("filter")
        try:
            results = checked_results(
                self.provider.search(query, filt, action.get("metadata") or {}), self.provider.name
            )
        except BridgeError as exc:
            failure = (
                exc
                if isinstance(exc, RelaySearchFailed)
                else RelaySearchFailed(f"search provider {self.provider.name} failed: {exc.message}", cause=exc.code)
            )
            ms = (time.perf_counter() - t0) * 1000
            turn.searches.append(SearchRecord(turn.rounds, query, filt, 0, ms, failure.code))
            log.warning(
                "relay.search_failed",
                extra={
                    "provider": self.provider.name,
                    "code": failure.code,
                    "round": turn.rounds,
                    **user_text(self.log_user_text, query=query),
                },
            )
            if self.on_search_error == "raise":
                raise failure from None
            return None
        ms = (time.perf_counter() - t0) * 1000
        turn.searches.append(SearchRecord(turn.rounds, query, filt, len(results), ms))
        log.info(
            "relay.search",
            extra={
                "provider": self.provider.name,
                "round": turn.rounds,
                "results": len(results),
                "ms": round(ms, 1),
                **user_text(self.log_user_text, query=query),
            },
        )
        return results

    def close(self) -> None:
        self.client.close()
        close = getattr(self.provider, "close", None)
        if callable(close):
            close()


def _stream_error(payload: Any) -> MalformedAssistantResponse:
    code = payload.get("code") if isinstance(payload, dict) else None
    message = payload.get("message") if isinstance(payload, dict) else None
    text = (
        f"the assistant's stream reported an error: {str(message)[:200]}"
        if message
        else "the assistant's stream reported an error"
    )
    return MalformedAssistantResponse(text, assistant_code=str(code)[:64] if code else None)


def client_from_config(cfg: RelayConfig, transport: httpx.BaseTransport | None = None) -> AssistantClient:
    url = cfg.url or f"{IN_PROCESS_ORIGIN}/v2/assistants/{cfg.assistant_id}/environments/{cfg.environment_id}/message"
    auth = credentials_from_config(cfg.auth, "relay.auth", transport=None) if cfg.url else None
    return AssistantClient(url, auth=auth, version=cfg.version, transport=transport, **_http_options(cfg))


def _http_options(cfg: RelayConfig | SearchProviderConfig) -> dict[str, Any]:
    """The HTTP client options of a ``[relay]`` or ``[relay.search]`` table, as the clients take them."""
    return {
        "timeout": cfg.timeout_seconds,
        "connect_timeout": cfg.connect_timeout_seconds,
        "retries": cfg.retries,
        "verify_tls": cfg.verify_tls,
    }


def provider_from_config(
    cfg: RelayConfig, services: Services | None, scope: Scope, transport: httpx.BaseTransport | None = None
) -> SearchProvider:
    s = cfg.search
    if s.type == "server":
        auth = credentials_from_config(s.auth, "relay.search.auth")
        return HttpSearchProvider(s.url, auth=auth, metadata=s.metadata, transport=transport, **_http_options(s))
    if services is None:
        raise ValueError("the built-in search provider needs a Services object")
    return ServicesProvider(services, scope, mode=s.mode, limit=s.limit, passage_chars=s.passage_length)


def relay_message(
    url: str,
    text: str,
    *,
    provider: SearchProvider,
    auth: Credentials | None = None,
    session_id: str | None = None,
    context: Mapping[str, Any] | None = None,
    user_id: str | None = None,
    **options: Any,
) -> RelayResult:
    """One relayed turn in one call: ``relay_message(url, "question", provider=...)``.

    :param options: :class:`Relay` options (``max_rounds``, ``max_request_bytes``...) and ``version``,
        ``timeout``, ``retries``, ``transport``.
    """
    relay = Relay.from_url(url, provider=provider, auth=auth, **options)
    try:
        return relay.send(text, session_id=session_id, context=context, user_id=user_id)
    finally:
        relay.client.close()  # the client is this call's; the provider is the caller's, who may use it again
