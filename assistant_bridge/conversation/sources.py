"""Where a ``/message`` turn gets its search results: the built-in backend or a remote custom search server.

One protocol, :class:`SearchSource`, with a tiny fake. Every failure a source knows about surfaces as a
:class:`~assistant_bridge.errors.DependencyError`; a remote server's failure is a
:class:`~assistant_bridge.errors.SearchServiceError` whose ``details["errors"]`` lists ajv-style problems
(``{"message": "must have required property 'search_results'", "path": ""}``, spec §A.1) that the turn
copies into the connectivity item. Error messages never contain credentials or the server's answer text.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import httpx

from assistant_bridge.conversation.assistants import SearchConfig, ServerSearch
from assistant_bridge.core.custom_search import result_of_hit
from assistant_bridge.core.loop import OptionWords
from assistant_bridge.core.results import SearchResult
from assistant_bridge.custom_search_client import CustomSearchClient, CustomSearchFailure
from assistant_bridge.domain import Scope, SearchHit
from assistant_bridge.errors import SearchServiceError
from assistant_bridge.services import Services

log = logging.getLogger(__name__)
MAX_RESPONSE_BYTES = 100_000  # spec §A.1: "the entire response object must not exceed 100 KB"


class SearchSource(Protocol):
    """Runs one search for one caller. ``engine`` names it in debug output. ``blend`` is the message as asked
    and its weight when ``query`` is a rewrite of it (:attr:`~.rewrite.Rewrite.blend`): the built-in backend
    adds it to a dense search; a remote server, which takes one query, is sent the rewrite alone. ``topic`` is
    the command a follow-up is about (:attr:`~.rewrite.Rewrite.topic`): the built-in backend reads its manual
    page first when another page leads the results; a remote server's documents are its own and it is not told."""

    engine: str

    def search(
        self, query: str, scope: Scope, blend: tuple[str, float] | None = None, topic: str | None = None
    ) -> list[SearchResult]: ...

    def option_words(self, message: str, results: Sequence[SearchResult]) -> OptionWords | None:
        """How ``message``, when it asks which option of a manual page it names does something, matches that
        page (:meth:`~assistant_bridge.services.Services.option_words`); ``None`` where the source cannot tell (it
        does not hold the documents) or the message asks no such thing."""
        ...


class FakeSource:
    """Returns fixed results, or raises ``error``; records the queries."""

    engine = "fake"

    def __init__(self, results: Sequence[Mapping[str, Any]] = (), error: Exception | None = None) -> None:
        self.results = [SearchResult.from_json(r) for r in results]
        self.error = error
        self.queries: list[str] = []
        self.blends: list[tuple[str, float] | None] = []
        self.topics: list[str | None] = []

    def search(
        self, query: str, scope: Scope, blend: tuple[str, float] | None = None, topic: str | None = None
    ) -> list[SearchResult]:
        self.queries.append(query)
        self.blends.append(blend)
        self.topics.append(topic)
        if self.error is not None:
            raise self.error
        return list(self.results)

    def option_words(self, message: str, results: Sequence[SearchResult]) -> OptionWords | None:
        return None


class BuiltinSource:
    """The configured backend (Milvus Lite, Milvus, Elasticsearch), searched within the caller's scope."""

    engine = "builtin"

    def __init__(self, services: Services, config: SearchConfig) -> None:
        from assistant_bridge.core.filters import parse_filter

        self._services = services
        self._filter = parse_filter(config.filter) if config.filter else None
        meta = config.metadata
        self._mode = meta.get("mode")
        self._limit = meta.get("limit")
        self._passage = int(meta.get("passage_length") or services.settings.search.default_passage_chars)
        self.index = services.settings.backend.collection

    def search(
        self, query: str, scope: Scope, blend: tuple[str, float] | None = None, topic: str | None = None
    ) -> list[SearchResult]:
        return [result_of_hit(hit, query, self._passage) for hit in self.hits(query, scope, blend, topic)]

    def option_words(self, message: str, results: Sequence[SearchResult]) -> OptionWords | None:
        documents = [
            (str(r.result_metadata.get("document_id") or ""), r.title, str(r.result_metadata.get("language") or ""))
            for r in results
        ]
        return self._services.option_words(message, [d for d in documents if d[0]])

    def hits(
        self, query: str, scope: Scope, blend: tuple[str, float] | None = None, topic: str | None = None
    ) -> list[SearchHit]:
        """The hits :meth:`search` returns as results (:meth:`~assistant_bridge.services.Services.answer_hits`)."""
        return self._services.answer_hits(
            query, scope, mode=self._mode, limit=self._limit, filter=self._filter, blend=blend, topic=topic
        )


class RemoteSource:
    """A custom search server (spec §A.1): ``POST url {query, filter, metadata}`` → ``{search_results: [...]}``.

    Authentication: none, HTTP Basic, an API key in a configurable header, or Bearer. The answer is read up
    to 100 KB and validated against ``schemas/search_response.schema.json``.
    """

    engine = "custom_search"

    def __init__(self, config: SearchConfig, transport: httpx.BaseTransport | None = None) -> None:
        assert config.server is not None
        c: ServerSearch = config.server
        self._cfg = c
        self._filter = config.filter
        self._metadata = dict(config.metadata)
        self._client = CustomSearchClient(
            c.url,
            headers=self._headers,
            timeout=c.timeout_seconds,
            connect_timeout=c.connect_timeout_seconds,
            verify_tls=c.verify_tls,
            transport=transport,
            max_response_bytes=MAX_RESPONSE_BYTES,
            too_large_message="the search server's response is over the 100 KB limit",
            timeout_message=f"the search server did not answer within {c.timeout_seconds:g} s",
        )
        self.index = ""

    @property
    def url(self) -> str:
        return self._cfg.url

    def _headers(self) -> dict[str, str]:
        c = self._cfg
        headers = {k: v.get() for k, v in c.headers.items()}
        if c.auth_type == "basic" and c.password is not None:
            pair = f"{c.username}:{c.password.get()}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        elif c.auth_type == "apikey" and c.apikey is not None:
            headers[c.apikey_header] = c.apikey.get()
        elif c.auth_type == "bearer" and c.token is not None:
            headers["Authorization"] = f"Bearer {c.token.get()}"
        return headers

    def search(
        self, query: str, scope: Scope, blend: tuple[str, float] | None = None, topic: str | None = None
    ) -> list[SearchResult]:
        try:
            results = self._client.search(query, self._filter, self._metadata)
        except CustomSearchFailure as exc:
            details = {"status": exc.status} if exc.status is not None else {}
            raise SearchServiceError(exc.message, errors=exc.errors, **details) from None
        return [SearchResult.from_json(r) for r in results]

    def option_words(self, message: str, results: Sequence[SearchResult]) -> OptionWords | None:
        return None  # the documents are the server's: a page's other options are not known here

    def close(self) -> None:
        self._client.close()
