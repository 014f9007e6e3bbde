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

import json
import logging
import threading
from typing import Any, Callable, Mapping, Protocol, Sequence

import httpx

from assistant_bridge.core.custom_search import hit_to_result
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
        raise InvalidSearchResults(f"search provider {provider} returned {type(results).__name__}, not a list of results",
                                   path="$")  # fmt: skip
    check = validator("search_result")
    for i, item in enumerate(results):
        errors = list(check.iter_errors(item))
        if errors:
            err = errors[0]
            path = f"$[{i}]" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
            raise InvalidSearchResults(f"search provider {provider} returned a result of the wrong shape at {path}: "
                                       f"{err.message[:120]}", path=path)  # fmt: skip
    return [dict(r) for r in results]


class FakeProvider:
    """:param results: fixed results, or ``query -> results``. :param error: raised instead."""

    name = "fake"

    def __init__(self, results: Sequence[Mapping[str, Any]] | Callable[[str], Any] = (),
                 error: Exception | None = None) -> None:  # fmt: skip
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

    def __init__(self, services: Services, scope: Scope, *, mode: str | None = None, limit: int | None = None,
                 passage_chars: int | None = None) -> None:  # fmt: skip
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

    def __init__(self, url: str, *, auth: Credentials | None = None, timeout: float = 10.0,
                 connect_timeout: float = 3.0, retries: int = 1, metadata: Mapping[str, Any] | None = None,
                 transport: httpx.BaseTransport | None = None, verify_tls: bool = True,
                 max_response_bytes: int = MAX_PROVIDER_RESPONSE_BYTES) -> None:  # fmt: skip
        self.url = url
        self._auth = auth or NoAuth()
        self._timeout = httpx.Timeout(timeout, connect=connect_timeout)
        self._retries = retries
        self._metadata = dict(metadata or {})
        self._transport = transport
        self._verify = verify_tls
        self._max = max_response_bytes
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    def _http(self) -> httpx.Client:
        with self._lock:  # built on first use: one pool per gunicorn worker, after the fork
            if self._client is None:
                self._client = httpx.Client(timeout=self._timeout, transport=self._transport, verify=self._verify,
                                            follow_redirects=False)  # fmt: skip
            return self._client

    def _fetch(self, payload: bytes) -> bytes:
        headers = {"Content-Type": "application/json", "Accept": "application/json", **self._auth.headers()}
        for attempt in range(self._retries + 1):
            try:
                with self._http().stream("POST", self.url, content=payload, headers=headers) as resp:
                    if resp.status_code != 200:
                        raise RelaySearchFailed(f"the search server answered HTTP {resp.status_code}",
                                                cause="http_status", status=resp.status_code)  # fmt: skip
                    data = b""
                    for part in resp.iter_bytes():
                        data += part
                        if len(data) > self._max:
                            raise InvalidSearchResults(f"the search server's response is over {self._max} bytes")
                    return data
            except (httpx.ConnectError, httpx.ConnectTimeout, httpx.RemoteProtocolError) as exc:
                if attempt >= self._retries:
                    raise RelaySearchFailed(f"the search server could not be reached ({type(exc).__name__})",
                                            cause="unreachable") from None  # fmt: skip
            except httpx.TimeoutException:
                raise RelaySearchFailed("the search server did not answer in time", cause="timeout") from None
            except httpx.HTTPError as exc:
                raise RelaySearchFailed(f"the search server failed ({type(exc).__name__})", cause="http") from None
        raise AssertionError("unreachable")

    def search(self, query: str, filter: str | None, metadata: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
        body: dict[str, Any] = {"query": query, "metadata": {**self._metadata, **metadata}}
        if filter:
            body["filter"] = filter
        raw = self._fetch(json.dumps(body, ensure_ascii=False).encode())
        try:
            data = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise InvalidSearchResults("the search server answered with invalid JSON") from None
        if not isinstance(data, dict) or "search_results" not in data:
            raise InvalidSearchResults("the search server's answer has no search_results", path="$.search_results")
        results: Sequence[Mapping[str, Any]] = data["search_results"]
        return results

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
