"""An OpenAI-compatible ``POST {base_url}/chat/completions`` generator (vLLM, llama.cpp server, Ollama,
TGI, hosted APIs), blocking or streamed over server-sent events.

``base_url`` is the API root that ``/chat/completions`` is appended to, for example
``http://127.0.0.1:8000/v1``.

The HTTP side is :class:`assistant_bridge.chat_completions.ChatCompletions`: connection errors, timeouts,
HTTP 408/425/429 and 5xx are retried ``max_retries`` times with exponential backoff and jitter
(``Retry-After`` honoured up to ``max_backoff``), a streamed answer only before its first event: once it has
started, a failure raises :class:`~assistant_bridge.errors.GeneratorError` and nothing is sent twice. Every
failure, including a body that is not the expected JSON, becomes ``GeneratorError``; the API key never
appears in an error or a log.

Token counting is approximate (:func:`~assistant_bridge.generators.base.approx_tokens`), since the chat API
has no tokenizer endpoint; ``context_tokens`` is the model's window minus the largest completion budget
(``reserve_tokens``), so the loop's truncation leaves room for the answer. When the server reports
``usage``, the exact counts are returned in the :class:`~assistant_bridge.generators.base.Generation`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Unpack

from assistant_bridge.chat_completions import ChatCompletions, Endpoint, delta_content, message_content
from assistant_bridge.core.citations import MarkerStripper, citations_from_markers
from assistant_bridge.core.snippets import Snippet
from assistant_bridge.generators.base import (
    Generation,
    GenerationStream,
    ResponseLength,
    is_declined,
    validate_response_length,
)
from assistant_bridge.generators.prompt import LENGTHS, build_messages, count_prompt_tokens
from assistant_bridge.http import RetryPolicy


class OpenAIChatGenerator:
    """The endpoint's options (``base_url``, ``model``, ``api_key``, ``timeout`` (60 s), ``connect_timeout``,
    ``headers``, ``transport``) are those of :class:`~assistant_bridge.chat_completions.ChatCompletions`.

    :param max_retries: retries before the first token (0 = a single attempt).
    :param backoff: first retry delay in seconds, doubled each time, capped at ``max_backoff``.
    :param context_window: the model's context size in tokens.
    :param reserve_tokens: tokens kept free for the answer (the ``verbose`` ``max_tokens``).
    :param temperature: sampling temperature (0 = deterministic answers).
    :param sleep: the sleep function used between retries, for tests.
    """

    name = "openai"

    def __init__(
        self,
        *,
        max_retries: int = 2,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
        context_window: int = 8192,
        reserve_tokens: int | None = None,
        temperature: float = 0.0,
        sleep: Callable[[float], None] = time.sleep,
        **endpoint: Unpack[Endpoint],
    ) -> None:
        retry = RetryPolicy(
            max_retries=max(0, int(max_retries)),
            backoff=backoff,
            max_backoff=max_backoff,
            sleep=sleep,
            name="generator",
        )
        self.chat = ChatCompletions(**({"timeout": 60.0} | endpoint), retry=retry)
        self.base_url = self.chat.base_url
        self.model = self.chat.model
        self.max_retries = retry.max_retries
        reserve = LENGTHS["verbose"].max_tokens if reserve_tokens is None else reserve_tokens
        self.context_tokens = max(0, context_window - reserve)
        self.temperature = temperature

    # --- lifecycle ---------------------------------------------------------------------------------------
    def warm_up(self) -> None:
        """Create the connection pool (after the worker forks); no request is made."""
        self.chat.warm_up()

    def close(self) -> None:
        self.chat.close()

    # --- protocol ----------------------------------------------------------------------------------------
    def prompt_tokens(self, query: str, snippets: Sequence[Snippet]) -> int:
        return count_prompt_tokens(build_messages(query, snippets, "moderate"))

    def _body(
        self, query: str, snippets: Sequence[Snippet], response_length: ResponseLength, stream: bool
    ) -> dict[str, Any]:
        validate_response_length(response_length)
        return {
            "model": self.model,
            "messages": build_messages(query, snippets, response_length),
            "max_tokens": LENGTHS[response_length].max_tokens,
            "temperature": self.temperature,
            "stream": stream,
        }

    def generate(
        self, query: str, snippets: Sequence[Snippet], response_length: ResponseLength = "moderate"
    ) -> Generation:
        data = self.chat.create(self._body(query, snippets, response_length, stream=False))
        content = message_content(data, self.chat.label)
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        return self._finish(content, snippets, usage or {})

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
        stripper = MarkerStripper()
        for event in self.chat.stream(body):
            if isinstance(event.get("usage"), dict):
                usage.update(event["usage"])
            delta = delta_content(event)
            if delta:
                raw.append(delta)
                out = stripper.feed(delta)
                if out:
                    yield out
        tail = stripper.flush()
        if tail:
            yield tail
