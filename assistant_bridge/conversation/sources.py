"""Where a ``/message`` turn gets its search results: the built-in backend or a remote custom search server.

One protocol, :class:`SearchSource`, with a tiny fake. Every failure a source knows about surfaces as a
:class:`~assistant_bridge.errors.DependencyError`; a remote server's failure is a
:class:`~assistant_bridge.errors.SearchServiceError` whose ``details["errors"]`` lists ajv-style problems
(``{"message": "must have required property 'search_results'", "path": ""}``, spec §A.1) that the turn
copies into the connectivity item. Error messages never contain credentials or the server's answer text.
"""

from __future__ import annotations

import base64
import json
import logging
import threading
from typing import Any, Iterable, Mapping, Protocol, Sequence

import httpx
from jsonschema.exceptions import ValidationError

from assistant_bridge.conversation.assistants import SearchConfig, ServerSearch
from assistant_bridge.core.custom_search import hit_to_result
from assistant_bridge.core.results import SearchResult
from assistant_bridge.domain import Scope
from assistant_bridge.errors import SearchServiceError
from assistant_bridge.services import Services

log = logging.getLogger(__name__)
MAX_RESPONSE_BYTES = 100_000  # spec §A.1: "the entire response object must not exceed 100 KB"
MAX_ERRORS = 10


class SearchSource(Protocol):
    """Runs one search for one caller. ``engine`` names it in debug output."""

    engine: str

    def search(self, query: str, scope: Scope) -> list[SearchResult]: ...


class FakeSource:
    """Returns fixed results, or raises ``error``; records the queries."""

    engine = "fake"

    def __init__(self, results: Sequence[Mapping[str, Any]] = (), error: Exception | None = None) -> None:
        self.results = [SearchResult.from_json(r) for r in results]
        self.error = error
        self.queries: list[str] = []

    def search(self, query: str, scope: Scope) -> list[SearchResult]:
        self.queries.append(query)
        if self.error is not None:
            raise self.error
        return list(self.results)


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

    def search(self, query: str, scope: Scope) -> list[SearchResult]:
        hits = self._services.search(query, scope, mode=self._mode, limit=self._limit, filter=self._filter)
        out = []
        for hit in hits:
            data = hit_to_result(hit, query, self._passage)
            data["id"] = hit.chunk.id
            out.append(SearchResult.from_json(data))
        return out


def _pointer(path: Iterable[Any]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def ajv_errors(errors: Iterable[ValidationError]) -> list[dict[str, str]]:
    """JSON Schema errors in the wording of ajv (what watsonx Assistant reports), with JSON-pointer paths."""
    out: list[dict[str, str]] = []
    for err in errors:
        kind, value = err.validator, err.validator_value
        if kind == "required":
            have = err.instance if isinstance(err.instance, dict) else {}
            missing = [p for p in value if p not in have]
            messages = [f"must have required property '{p}'" for p in missing] or [err.message]
        elif kind == "type":
            messages = [f"must be {','.join(value) if isinstance(value, list) else value}"]
        elif kind == "enum":
            messages = ["must be equal to one of the allowed values"]
        elif kind in ("minItems", "maxItems", "minLength", "maxLength"):
            unit = "items" if kind.endswith("Items") else "characters"
            messages = [f"must NOT have {'fewer' if kind.startswith('min') else 'more'} than {value} {unit}"]
        elif kind == "additionalProperties":
            messages = ["must NOT have additional properties"]
        else:
            messages = [err.message[:200]]
        for m in messages:
            entry = {"message": m, "path": _pointer(err.absolute_path)}
            if entry not in out:  # jsonschema reports each missing property once per missing property
                out.append(entry)
    return out[:MAX_ERRORS]


def _fail(message: str, errors: list[dict[str, str]] | None = None, **details: Any) -> SearchServiceError:
    return SearchServiceError(message, errors=errors or [{"message": message, "path": ""}], **details)


class RemoteSource:
    """A custom search server (spec §A.1): ``POST url {query, filter, metadata}`` → ``{search_results: [...]}``.

    Authentication: none, HTTP Basic, an API key in a configurable header, or Bearer. The answer is read up
    to 100 KB and validated against ``schemas/search_response.schema.json``.
    """

    engine = "custom_search"

    def __init__(self, config: SearchConfig, transport: httpx.BaseTransport | None = None) -> None:
        assert config.server is not None
        self._cfg: ServerSearch = config.server
        self._filter = config.filter
        self._metadata = dict(config.metadata)
        self._transport = transport
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()
        self.index = ""

    @property
    def url(self) -> str:
        return self._cfg.url

    def _http(self) -> httpx.Client:
        # built on first use, so each gunicorn worker gets its own connection pool after the fork
        with self._lock:
            if self._client is None:
                c = self._cfg
                self._client = httpx.Client(
                    timeout=httpx.Timeout(c.timeout_seconds, connect=c.connect_timeout_seconds),
                    verify=c.verify_tls, follow_redirects=False, transport=self._transport,
                )  # fmt: skip
            return self._client

    def _headers(self) -> dict[str, str]:
        c = self._cfg
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        headers.update({k: v.get() for k, v in c.headers.items()})
        if c.auth_type == "basic" and c.password is not None:
            pair = f"{c.username}:{c.password.get()}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        elif c.auth_type == "apikey" and c.apikey is not None:
            headers[c.apikey_header] = c.apikey.get()
        elif c.auth_type == "bearer" and c.token is not None:
            headers["Authorization"] = f"Bearer {c.token.get()}"
        return headers

    def _fetch(self, body: dict[str, Any]) -> bytes:
        c = self._cfg
        try:
            with self._http().stream("POST", c.url, content=json.dumps(body), headers=self._headers()) as resp:
                if resp.status_code != 200:
                    raise _fail(f"the search server answered HTTP {resp.status_code}", status=resp.status_code)
                data = b""
                for part in resp.iter_bytes():
                    data += part
                    if len(data) > MAX_RESPONSE_BYTES:
                        raise _fail("the search server's response is over the 100 KB limit")
                return data
        except httpx.TimeoutException:
            raise _fail(f"the search server did not answer within {c.timeout_seconds:g} s") from None
        except httpx.HTTPError as exc:
            raise _fail(f"the search server could not be reached ({type(exc).__name__})") from None

    def search(self, query: str, scope: Scope) -> list[SearchResult]:
        body: dict[str, Any] = {"query": query, "metadata": self._metadata}
        if self._filter:
            body["filter"] = self._filter
        raw = self._fetch(body)
        try:
            data = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise _fail("the search server answered with invalid JSON") from None
        from assistant_bridge.validation import validator

        problems = list(validator("search_response").iter_errors(data))
        if problems:
            raise _fail("the search server's response does not match the search protocol", ajv_errors(problems))
        return [SearchResult.from_json(r) for r in data["search_results"]]

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
