"""The one client of the custom search protocol (spec §A.1): ``POST url {query, filter?, metadata}`` →
``{search_results: [...]}``, read up to a size limit and validated against
``schemas/search_response.schema.json``. Used by ``/message`` turns with a remote search server
(:class:`assistant_bridge.conversation.sources.RemoteSource`) and by the relay
(:class:`assistant_bridge.relay.providers.HttpSearchProvider`), each mapping :class:`CustomSearchFailure` to
its own error. Error messages never contain credentials or the server's answer text.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import httpx
from jsonschema.exceptions import ValidationError

from assistant_bridge.http import CONNECT_ERRORS, LazyClient, RetryPolicy, read_bounded
from assistant_bridge.validation import validator

MAX_ERRORS = 10


class CustomSearchFailure(Exception):
    """:ivar cause: ``http_status``, ``too_large``, ``invalid_json``, ``invalid_response``, ``unreachable``,
        ``timeout`` or ``http``.
    :ivar errors: ajv-style problems of an invalid answer (``[{"message", "path"}]``, JSON-pointer paths).
    """

    def __init__(
        self, message: str, cause: str, *, status: int | None = None, errors: list[dict[str, str]] | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.cause = cause
        self.status = status
        self.errors = errors or [{"message": message, "path": ""}]


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


class CustomSearchClient:
    """:param headers: the request headers (credentials included), asked for at each request.
    :param retries: retries of a connection that failed before any answer (an HTTP error answer is final).
    :param describe_timeout: the message of a timeout."""

    def __init__(
        self,
        url: str,
        *,
        headers: Callable[[], Mapping[str, str]],
        timeout: float,
        connect_timeout: float,
        retries: int = 0,
        verify_tls: bool = True,
        transport: httpx.BaseTransport | None = None,
        max_response_bytes: int = 100_000,
        too_large_message: str | None = None,
        timeout_message: str | None = None,
    ) -> None:
        self.url = url
        self._headers = headers
        self._http = LazyClient(
            timeout=timeout, connect_timeout=connect_timeout, transport=transport, verify_tls=verify_tls
        )
        self._retry = RetryPolicy(
            max_retries=retries, backoff=0.1, max_backoff=1.0, retry_on=CONNECT_ERRORS, name="custom_search"
        )
        self._max = max_response_bytes
        self._too_large = too_large_message or f"the search server's response is over {max_response_bytes} bytes"
        self._timeout_message = timeout_message or "the search server did not answer in time"

    def _post(self, payload: bytes) -> bytes:
        headers = {"Content-Type": "application/json", "Accept": "application/json", **self._headers()}
        with self._http.get().stream("POST", self.url, content=payload, headers=headers) as resp:
            if resp.status_code != 200:
                raise CustomSearchFailure(
                    f"the search server answered HTTP {resp.status_code}", "http_status", status=resp.status_code
                )
            return read_bounded(resp, self._max, lambda: CustomSearchFailure(self._too_large, "too_large"))

    def fetch(self, query: str, filter: str | None, metadata: Mapping[str, Any]) -> bytes:
        body: dict[str, Any] = {"query": query, "metadata": dict(metadata)}
        if filter:
            body["filter"] = filter
        payload = json.dumps(body, ensure_ascii=False).encode()
        try:
            data: bytes = self._retry.call(lambda: self._post(payload))
            return data
        except CONNECT_ERRORS as exc:
            raise CustomSearchFailure(
                f"the search server could not be reached ({type(exc).__name__})", "unreachable"
            ) from None
        except httpx.TimeoutException:
            raise CustomSearchFailure(self._timeout_message, "timeout") from None
        except httpx.HTTPError as exc:
            raise CustomSearchFailure(f"the search server failed ({type(exc).__name__})", "http") from None

    def search(self, query: str, filter: str | None, metadata: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The ``search_results`` of a valid answer.

        :raises CustomSearchFailure: for any failure (see its ``cause``).
        """
        raw = self.fetch(query, filter, metadata)
        try:
            data = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise CustomSearchFailure("the search server answered with invalid JSON", "invalid_json") from None
        problems = list(validator("search_response").iter_errors(data))
        if problems:
            raise CustomSearchFailure(
                "the search server's response does not match the search protocol",
                "invalid_response",
                errors=ajv_errors(problems),
            )
        results: list[dict[str, Any]] = data["search_results"]
        return results

    def close(self) -> None:
        self._http.close()
