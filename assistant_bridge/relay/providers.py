"""Search providers: where the relay runs the searches an assistant hands to its client.

One protocol, :class:`SearchProvider`, returning ``search_results`` items in the Custom-service wire shape
(spec §A.1), with a tiny fake:

* :class:`ServicesProvider`: this project's backends in-process, within one caller's :class:`Scope`;
* :class:`HttpSearchProvider`: any custom search server (``POST {query, filter?, metadata?}`` →
  ``{search_results: [...]}``, e.g. this service's ``/v1/search``) with none/basic/apikey/bearer credentials;
* :class:`FakeProvider`: fixed results, a function of the query, or an error.

:func:`checked_results` validates what any provider returned against ``search_result.schema.json``, so a
provider answering the wrong shape fails with :class:`InvalidSearchResults` naming the JSON path, never
later inside the assistant.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import httpx

from assistant_bridge.core.custom_search import hit_to_result
from assistant_bridge.custom_search_client import CustomSearchClient, CustomSearchFailure
from assistant_bridge.domain import Scope
from assistant_bridge.errors import BridgeError
from assistant_bridge.relay.auth import Credentials, NoAuth
from assistant_bridge.relay.errors import InvalidSearchResults, RelaySearchFailed
from assistant_bridge.services import Services

log = logging.getLogger(__name__)
MAX_PROVIDER_RESPONSE_BYTES = 2_000_000  # read limit; the relay trims to its request limit afterwards
_MODES = ("lexical", "dense", "hybrid")


class SearchProvider(Protocol):
    """Runs one search action. ``name`` labels logs and the relay's summary."""

    name: str

    def search(self, query: str, filter: str | None, metadata: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]: ...


def checked_results(results: Any, provider: str) -> list[dict[str, Any]]:
    """``results`` if it is a list of search results, else :class:`InvalidSearchResults`."""
    from assistant_bridge.validation import validator

    if not isinstance(results, (list, tuple)):
        raise InvalidSearchResults(
            f"search provider {provider} returned {type(results).__name__}, not a list of results", path="$"
        )
    check = validator("search_result")
    for i, item in enumerate(results):
        errors = list(check.iter_errors(item))
        if errors:
            err = errors[0]
            path = f"$[{i}]" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
            raise InvalidSearchResults(
                f"search provider {provider} returned a result of the wrong shape at {path}: {err.message[:120]}",
                path=path,
            )
    return [dict(r) for r in results]


class FakeProvider:
    """:param results: fixed results, or ``query -> results``. :param error: raised instead."""

    name = "fake"

    def __init__(
        self, results: Sequence[Mapping[str, Any]] | Callable[[str], Any] = (), error: Exception | None = None
    ) -> None:
        self.results = results
        self.error = error
        self.calls: list[tuple[str, str | None, dict[str, Any]]] = []

    def search(self, query: str, filter: str | None, metadata: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
        self.calls.append((query, filter, dict(metadata)))
        if self.error is not None:
            raise self.error
        out = self.results(query) if callable(self.results) else self.results
        return out


def _int_option(meta: Mapping[str, Any], names: tuple[str, ...], default: int, lo: int, hi: int) -> int:
    for name in names:
        value = meta.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi:
            return value
    return default


class ServicesProvider:
    """This project's backend, in-process, within ``scope`` (a user never sees another tenant's documents).

    Action ``metadata`` may carry ``mode`` (lexical | dense | hybrid), ``limit`` (alias ``top_k``, ``size``)
    and ``passage_length`` (alias ``passage_chars``); values out of range fall back to the defaults given
    here. The action's ``filter`` is this service's filter language.
    """

    name = "builtin"

    def __init__(
        self,
        services: Services,
        scope: Scope,
        *,
        mode: str | None = None,
        limit: int | None = None,
        passage_chars: int | None = None,
    ) -> None:
        self.services = services
        self.scope = scope
        s = services.settings
        self.mode = mode or s.backend.default_mode
        self.limit = limit or s.search.default_limit
        self.passage_chars = s.search.default_passage_chars if passage_chars is None else passage_chars

    def search(self, query: str, filter: str | None, metadata: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
        from assistant_bridge.core.filters import parse_filter

        s = self.services.settings
        mode = metadata.get("mode") if metadata.get("mode") in _MODES else self.mode
        limit = _int_option(metadata, ("limit", "top_k", "size"), self.limit, 1, s.search.max_limit)
        passage = _int_option(metadata, ("passage_length", "passage_chars"), self.passage_chars, 0, 100_000)
        try:
            expr = parse_filter(filter) if filter else None
            self.services.warm_up()
            hits = self.services.search(query, self.scope, mode=mode, limit=limit, filter=expr)
        except BridgeError as exc:
            raise RelaySearchFailed(f"the built-in search failed: {exc.message}", cause=exc.code) from None
        return [hit_to_result(h, query, passage) for h in hits]


class HttpSearchProvider:
    """A custom search server. Connection errors are retried ``retries`` times; HTTP error answers are not.

    :param metadata: defaults merged under each action's own ``metadata``.
    """

    name = "http"

    def __init__(
        self,
        url: str,
        *,
        auth: Credentials | None = None,
        timeout: float = 10.0,
        connect_timeout: float = 3.0,
        retries: int = 1,
        metadata: Mapping[str, Any] | None = None,
        transport: httpx.BaseTransport | None = None,
        verify_tls: bool = True,
        max_response_bytes: int = MAX_PROVIDER_RESPONSE_BYTES,
    ) -> None:
        self.url = url
        self._auth = auth or NoAuth()
        self._metadata = dict(metadata or {})
        self._client = CustomSearchClient(
            url,
            headers=self._auth.headers,
            timeout=timeout,
            connect_timeout=connect_timeout,
            retries=retries,
            verify_tls=verify_tls,
            transport=transport,
            max_response_bytes=max_response_bytes,
        )

    def search(self, query: str, filter: str | None, metadata: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
        try:
            return self._client.search(query, filter, {**self._metadata, **metadata})
        except CustomSearchFailure as exc:
            raise _relay_error(exc) from None

    def close(self) -> None:
        self._client.close()


def _relay_error(exc: CustomSearchFailure) -> RelaySearchFailed:
    """The relay's error for a failed custom search; an invalid answer names the JSON path of its first
    problem within the results list (``$[0].title``) or ``$.search_results``."""
    if exc.cause == "http_status":
        return RelaySearchFailed(exc.message, cause="http_status", status=exc.status)
    if exc.cause in ("unreachable", "timeout", "http"):
        return RelaySearchFailed(exc.message, cause=exc.cause)
    if exc.cause != "invalid_response":
        return InvalidSearchResults(exc.message)
    first = exc.errors[0]
    pointer = [p.replace("~1", "/").replace("~0", "~") for p in first["path"].split("/")[1:]]
    if pointer[:1] != ["search_results"]:
        return InvalidSearchResults("the search server's answer has no search_results", path="$.search_results")
    path = "$" + "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in pointer[1:])
    return InvalidSearchResults(f"the search server's answer is invalid at {path}: {first['message']}", path=path)
