"""An OpenAI-compatible ``POST {base_url}/chat/completions`` generator (vLLM, llama.cpp server, Ollama,
TGI, hosted APIs), blocking or streamed over server-sent events.

``base_url`` is the API root that ``/chat/completions`` is appended to, for example
``http://127.0.0.1:8000/v1``.

Retries: connection errors, timeouts, HTTP 429 and 5xx are retried ``max_retries`` times with exponential
backoff (``Retry-After`` honoured up to ``max_backoff``), but **only before the first token**: once a
streamed answer has started, a failure raises :class:`~assistant_bridge.errors.GeneratorError` and nothing is
sent twice. Every failure, including a body that is not the expected JSON, becomes ``GeneratorError``; the
API key never appears in an error or a log.

Token counting is approximate (:func:`~assistant_bridge.generators.base.approx_tokens`), since the chat API
has no tokenizer endpoint; ``context_tokens`` is the model's window minus the largest completion budget
(``reserve_tokens``), so the loop's truncation leaves room for the answer. When the server reports
``usage``, the exact counts are returned in the :class:`~assistant_bridge.generators.base.Generation`.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any, Callable, Iterator, Sequence

import httpx

from assistant_bridge.core.citations import MarkerStripper, citations_from_markers
from assistant_bridge.core.snippets import Snippet
from assistant_bridge.errors import GeneratorError
from assistant_bridge.generators.base import (
    Generation,
    GenerationStream,
    ResponseLength,
    is_declined,
    validate_response_length,
)
from assistant_bridge.generators.prompt import LENGTHS, build_messages, count_prompt_tokens
from assistant_bridge.settings import Secret

log = logging.getLogger(__name__)
_RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class _Retry(Exception):
    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


class OpenAIChatGenerator:
    """:param base_url: API root, ``/chat/completions`` is appended.
    :param model: model name sent in every request.
    :param api_key: sent as ``Authorization: Bearer``; optional for local servers.
    :param timeout: read timeout in seconds (time to the first byte, then between streamed chunks).
    :param connect_timeout: TCP/TLS connect timeout in seconds.
    :param max_retries: retries before the first token (0 = a single attempt).
    :param backoff: first retry delay in seconds, doubled each time, capped at ``max_backoff``.
    :param context_window: the model's context size in tokens.
    :param reserve_tokens: tokens kept free for the answer (the ``verbose`` ``max_tokens``).
    :param temperature: sampling temperature (0 = deterministic answers).
    :param transport: an ``httpx`` transport, for tests.
    :param sleep: the sleep function used between retries, for tests.
    """

    name = "openai"

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: Secret | str | None = None,
        timeout: float = 60.0,
        connect_timeout: float = 5.0,
        max_retries: int = 2,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
        context_window: int = 8192,
        reserve_tokens: int | None = None,
        temperature: float = 0.0,
        headers: dict[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self._key = api_key if isinstance(api_key, Secret) or api_key is None else Secret(api_key)
        self._timeout = httpx.Timeout(timeout, connect=connect_timeout)
        self.max_retries = max(0, int(max_retries))
        self.backoff = backoff
        self.max_backoff = max_backoff
        reserve = LENGTHS["verbose"].max_tokens if reserve_tokens is None else reserve_tokens
        self.context_tokens = max(0, context_window - reserve)
        self.temperature = temperature
        self._headers = dict(headers or {})
        self._transport = transport
        self._sleep = sleep
        self._client: httpx.Client | None = None

    # --- lifecycle ---------------------------------------------------------------------------------------
    def warm_up(self) -> None:
        """Create the connection pool (after the worker forks); no request is made."""
        if self._client is None:
            headers = {"Accept": "application/json", **self._headers}
            if self._key:
                headers["Authorization"] = f"Bearer {self._key.get()}"
            self._client = httpx.Client(timeout=self._timeout, headers=headers, transport=self._transport)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    # --- protocol ----------------------------------------------------------------------------------------
    def prompt_tokens(self, query: str, snippets: Sequence[Snippet]) -> int:
        return count_prompt_tokens(build_messages(query, snippets, "moderate"))

    def _body(self, query: str, snippets: Sequence[Snippet], response_length: ResponseLength, stream: bool) -> dict[str, Any]:
        validate_response_length(response_length)
        return {
            "model": self.model,
            "messages": build_messages(query, snippets, response_length),
            "max_tokens": LENGTHS[response_length].max_tokens,
            "temperature": self.temperature,
            "stream": stream,
        }

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(0.0, retry_after), self.max_backoff)
        return float(min(self.backoff * 2.0**attempt, self.max_backoff))

    def _attempts(self) -> Iterator[int]:
        yield from range(self.max_retries + 1)

    def _check(self, response: httpx.Response) -> None:
        if response.status_code in _RETRY_STATUS:
            raise _Retry(f"HTTP {response.status_code}", _retry_after(response))
        if response.status_code >= 400:
            raise GeneratorError("the LLM endpoint refused the request", status=response.status_code)

    def generate(
        self, query: str, snippets: Sequence[Snippet], response_length: ResponseLength = "moderate"
    ) -> Generation:
        self.warm_up()
        assert self._client is not None
        body = self._body(query, snippets, response_length, stream=False)
        url = f"{self.base_url}/chat/completions"
        last = "no attempt"
        for attempt in self._attempts():
            try:
                try:
                    response = self._client.post(url, json=body)
                except httpx.TransportError as exc:
                    raise _Retry(type(exc).__name__) from exc
                self._check(response)
                return self._parse(response, snippets)
            except _Retry as retry:
                last = retry.reason
                log.warning("generator.retry", extra={"attempt": attempt + 1, "reason": retry.reason})
                if attempt < self.max_retries:
                    self._sleep(self._delay(attempt, retry.retry_after))
        raise GeneratorError("the LLM endpoint failed", reason=last, attempts=self.max_retries + 1)

    def _parse(self, response: httpx.Response, snippets: Sequence[Snippet]) -> Generation:
        try:
            data = response.json()
            choice = data["choices"][0]
            content = choice["message"].get("content") or ""
            if not isinstance(content, str):
                raise TypeError("content")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise GeneratorError("the LLM endpoint returned an unexpected body") from exc
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        return self._finish(content, snippets, usage)

    def _finish(self, raw: str, snippets: Sequence[Snippet], usage: dict[str, Any]) -> Generation:
        text, citations = citations_from_markers(raw, snippets)
        declined = is_declined(text)
        return Generation(
            text=text,
            citations=() if declined else citations,
            declined=declined,
            model=self.model,
            prompt_tokens=usage.get("prompt_tokens") if isinstance(usage.get("prompt_tokens"), int) else None,
            completion_tokens=usage.get("completion_tokens")
            if isinstance(usage.get("completion_tokens"), int)
            else None,
        )

    def stream(
        self, query: str, snippets: Sequence[Snippet], response_length: ResponseLength = "moderate"
    ) -> GenerationStream:
        self.warm_up()
        body = self._body(query, snippets, response_length, stream=True)
        raw: list[str] = []
        usage: dict[str, Any] = {}
        deltas = self._stream_deltas(body, raw, usage)
        return GenerationStream(deltas, lambda _text: self._finish("".join(raw), snippets, usage))

    def _stream_deltas(self, body: dict[str, Any], raw: list[str], usage: dict[str, Any]) -> Iterator[str]:
        assert self._client is not None
        url = f"{self.base_url}/chat/completions"
        stripper = MarkerStripper()
        started = False
        last = "no attempt"
        for attempt in self._attempts():
            try:
                with self._client.stream("POST", url, json=body, headers={"Accept": "text/event-stream"}) as resp:
                    if resp.status_code >= 400:
                        resp.read()
                        self._check(resp)
                    finished = False
                    for payload in _sse_data(resp.iter_lines()):
                        if payload == "[DONE]":
                            finished = True
                            break
                        delta, done = _event(payload, usage)
                        finished = finished or done
                        if delta:
                            started = True
                            raw.append(delta)
                            out = stripper.feed(delta)
                            if out:
                                yield out
                    if not finished:
                        # the connection closed cleanly but the answer never said it was complete
                        raise httpx.RemoteProtocolError("stream ended before [DONE]")
                tail = stripper.flush()
                if tail:
                    yield tail
                return
            except httpx.TransportError as exc:
                if started:
                    raise GeneratorError("the LLM stream broke off", reason=type(exc).__name__) from exc
                last = type(exc).__name__
                retry_after = None
            except _Retry as retry:
                last, retry_after = retry.reason, retry.retry_after
            log.warning("generator.retry", extra={"attempt": attempt + 1, "reason": last})
            if attempt < self.max_retries:
                self._sleep(self._delay(attempt, retry_after))
        raise GeneratorError("the LLM endpoint failed", reason=last, attempts=self.max_retries + 1)


def _sse_data(lines: Iterator[str]) -> Iterator[str]:
    """The ``data:`` payloads of an SSE stream (comments, ``event:`` and ``id:`` lines are skipped)."""
    for line in lines:
        if line.startswith("data:"):
            yield line[5:].strip()


def _event(payload: str, usage: dict[str, Any]) -> tuple[str, bool]:
    """One ``chat.completion.chunk``: its content delta and whether it carries a ``finish_reason``."""
    try:
        event = json.loads(payload)
    except ValueError as exc:
        raise GeneratorError("the LLM stream sent a malformed event") from exc
    if not isinstance(event, dict):
        raise GeneratorError("the LLM stream sent a malformed event")
    if "error" in event:
        raise GeneratorError("the LLM endpoint reported an error in the stream")
    if isinstance(event.get("usage"), dict):
        usage.update(event["usage"])
    try:
        choices = event.get("choices") or []
        if not choices:
            return "", False
        choice = choices[0]
        content = (choice.get("delta") or {}).get("content")
        done = bool(choice.get("finish_reason"))
    except (AttributeError, TypeError) as exc:
        raise GeneratorError("the LLM stream sent a malformed event") from exc
    return (content if isinstance(content, str) else ""), done
