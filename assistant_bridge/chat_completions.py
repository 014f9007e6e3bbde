"""The one OpenAI-compatible chat-completions client (``POST {base_url}/chat/completions``: vLLM, llama.cpp
server, Ollama, TGI, hosted APIs), shared by the answer generator, the agentic planner and the query
rewriter.

``base_url`` is the API root that ``/chat/completions`` is appended to, e.g. ``http://127.0.0.1:8000/v1``.
Retries follow :class:`assistant_bridge.http.RetryPolicy`; a streamed answer is retried only before its
first event, so nothing is sent twice. Every failure is a :class:`~assistant_bridge.errors.GeneratorError`
whose ``details["reason"]`` is a short code (``timeout``, ``connect_error``, ``http_<status>``,
``bad_response``, ``stream_broken``); the API key never appears in an error or a log.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NotRequired, TypedDict

import httpx
from httpx_sse import SSEError

from assistant_bridge.errors import GeneratorError
from assistant_bridge.http import (
    RETRYABLE_ERRORS,
    LazyClient,
    RetryableStatus,
    RetryPolicy,
    as_secret,
    bearer,
    failure_reason,
    iter_sse_data,
    raise_for_retry,
)
from assistant_bridge.settings import Secret


class Endpoint(TypedDict):
    """Where a chat-completions endpoint is and how to reach it: the options the generator, the planner and the
    rewriter take as keywords and hand to :class:`ChatCompletions` unchanged (each with its own defaults)."""

    base_url: str
    model: str
    api_key: NotRequired[Secret | str | None]
    timeout: NotRequired[float]
    connect_timeout: NotRequired[float]
    headers: NotRequired[Mapping[str, str] | None]
    transport: NotRequired[httpx.BaseTransport | None]


class ChatCompletions:
    """:param base_url: the API root, ``/chat/completions`` is appended.
    :param model: the model name sent in every request.
    :param api_key: sent as ``Authorization: Bearer``; optional for local servers.
    :param timeout: read timeout in seconds (time to the first byte, then between streamed chunks).
    :param connect_timeout: TCP/TLS connect timeout in seconds.
    :param headers: extra request headers.
    :param transport: an ``httpx`` transport, for tests.
    :param label: how errors name the endpoint (``"the LLM endpoint"``, ``"planner model endpoint"``)."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: Secret | str | None = None,
        timeout: float = 60.0,
        connect_timeout: float = 5.0,
        retry: RetryPolicy | None = None,
        headers: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
        label: str = "the LLM endpoint",
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.retry = retry or RetryPolicy(name="llm")
        self.label = label
        all_headers = {"Accept": "application/json", **(headers or {}), **bearer(as_secret(api_key))}
        self._http = LazyClient(
            timeout=timeout, connect_timeout=connect_timeout, headers=all_headers, transport=transport
        )

    @property
    def timeout(self) -> httpx.Timeout:
        return self._http.timeout

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def warm_up(self) -> None:
        """Create the connection pool (after the worker forks); no request is made."""
        self._http.get()

    def close(self) -> None:
        self._http.close()

    def _failed(self, exc: BaseException) -> GeneratorError:
        reason = failure_reason(exc)
        said = f"HTTP {exc.status}" if isinstance(exc, RetryableStatus) else reason.replace("_", " ")
        return GeneratorError(f"{self.label} failed: {said}", reason=reason, attempts=self.retry.max_retries + 1)

    def _check(self, response: httpx.Response) -> None:
        raise_for_retry(response)
        if response.status_code >= 400:
            raise GeneratorError(
                f"{self.label} refused the request (HTTP {response.status_code})",
                status=response.status_code,
                reason=f"http_{response.status_code}",
            )

    def create(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """The JSON body of one completion (``stream`` false)."""
        client = self._http.get()

        def attempt() -> httpx.Response:
            response = client.post(self.url, json=dict(body))
            self._check(response)
            return response

        try:
            response: httpx.Response = self.retry.call(attempt)
        except RETRYABLE_ERRORS as exc:
            raise self._failed(exc) from None
        try:
            data = response.json()
        except ValueError:
            raise GeneratorError(f"{self.label} returned an unexpected body", reason="bad_response") from None
        if not isinstance(data, dict):
            raise GeneratorError(f"{self.label} returned an unexpected body", reason="bad_response")
        return data

    def content(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        max_tokens: int,
        temperature: float = 0.0,
        json_mode: bool = False,
    ) -> str:
        """The assistant message text of one completion."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "temperature": temperature,
            "max_tokens": max_tokens,
            "stream": False,
        }
        if json_mode:
            body["response_format"] = {"type": "json_object"}
        return message_content(self.create(body), self.label, required=True)

    def stream(self, body: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        """The ``chat.completion.chunk`` events of a streamed completion, up to ``[DONE]``.

        :raises GeneratorError: ``stream_broken`` when the stream breaks after its first event or ends without
            ``[DONE]`` or a ``finish_reason``; ``bad_response`` for an event that is not a JSON object or that
            reports an error.
        """
        client = self._http.get()
        started = False
        try:
            for attempt in self.retry.attempts():
                with attempt:
                    try:
                        for event in self._stream_once(client, body):
                            started = True
                            yield event
                    except RETRYABLE_ERRORS:
                        if started:  # something was sent on: never again
                            raise GeneratorError(f"{self.label} stream broke off", reason="stream_broken") from None
                        raise
                    return
        except RETRYABLE_ERRORS as exc:
            raise self._failed(exc) from None

    def _stream_once(self, client: httpx.Client, body: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        with client.stream(
            "POST", self.url, json={**body, "stream": True}, headers={"Accept": "text/event-stream"}
        ) as resp:
            self._check(resp)
            finished = False
            try:
                for payload in iter_sse_data(resp):
                    if payload.strip() == "[DONE]":
                        finished = True
                        break
                    event = _event(payload, self.label)
                    finished = finished or _finished(event)
                    yield event
            except SSEError:
                raise GeneratorError(
                    f"{self.label} did not answer with an event stream", reason="bad_response"
                ) from None
            if not finished:
                raise httpx.RemoteProtocolError("stream ended before [DONE]")


def message_content(data: Mapping[str, Any], label: str, *, required: bool = False) -> str:
    """``choices[0].message.content`` of a completion body (``null`` is ``""`` unless ``required``)."""
    try:
        content = data["choices"][0]["message"].get("content")
        if content is None and not required:
            content = ""
    except (KeyError, IndexError, TypeError, AttributeError):
        raise GeneratorError(f"{label} returned an unexpected body", reason="bad_response") from None
    if not isinstance(content, str):
        raise GeneratorError(f"{label} returned no text", reason="bad_response")
    return content


def delta_content(event: Mapping[str, Any]) -> str:
    """The content delta of one chunk event ('' when it has none)."""
    try:
        choices = event.get("choices") or []
        content = (choices[0].get("delta") or {}).get("content") if choices else None
    except (AttributeError, TypeError, IndexError):
        raise GeneratorError("the LLM stream sent a malformed event", reason="bad_response") from None
    return content if isinstance(content, str) else ""


def _finished(event: Mapping[str, Any]) -> bool:
    choices = event.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return False
    return bool(choices[0].get("finish_reason"))


def _event(payload: str, label: str) -> dict[str, Any]:
    try:
        event = json.loads(payload)
    except ValueError:
        raise GeneratorError(f"{label} stream sent a malformed event", reason="bad_response") from None
    if not isinstance(event, dict):
        raise GeneratorError(f"{label} stream sent a malformed event", reason="bad_response")
    if "error" in event:
        raise GeneratorError(f"{label} reported an error in the stream", reason="bad_response")
    return event
