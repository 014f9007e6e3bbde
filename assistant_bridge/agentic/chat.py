"""The chat-completion client the LLM planner talks to: a one-method protocol, an OpenAI-compatible
implementation over httpx, and a fake for tests.

The planner asks for a JSON object (``response_format: {"type": "json_object"}``, which vLLM, llama.cpp
server, Ollama and hosted APIs accept; a server that ignores it still gets a prompt asking for JSON only).
Every failure (connection, timeout, HTTP status, a body without a message) becomes
:class:`~assistant_bridge.errors.GeneratorError`; the API key never appears in an error or a log.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, Unpack

from assistant_bridge.chat_completions import ChatCompletions, Endpoint
from assistant_bridge.http import RetryPolicy


class ChatClient(Protocol):
    model: str

    def complete(self, messages: Sequence[Mapping[str, str]], *, json_mode: bool = True, max_tokens: int = 512) -> str:
        """The assistant message text of one completion.

        :raises GeneratorError: when the endpoint fails or answers garbage.
        """


class OpenAIChatClient:
    """``POST {base_url}/chat/completions`` through the shared
    :class:`~assistant_bridge.chat_completions.ChatCompletions`, whose options it takes (``timeout`` 30 s);
    ``base_url`` is the API root, e.g. ``http://127.0.0.1:8000/v1``.

    :param max_retries: retries on connection errors, timeouts, 429 and 5xx (exponential backoff, jitter).
    """

    def __init__(
        self,
        *,
        max_retries: int = 1,
        backoff: float = 0.5,
        temperature: float = 0.0,
        sleep: Callable[[float], None] = time.sleep,
        **endpoint: Unpack[Endpoint],
    ) -> None:
        retry = RetryPolicy(max_retries=max(0, int(max_retries)), backoff=backoff, sleep=sleep, name="planner")
        self.chat = ChatCompletions(**({"timeout": 30.0} | endpoint), retry=retry, label="planner model endpoint")
        self.base_url = self.chat.base_url
        self.model = self.chat.model
        self.max_retries = retry.max_retries
        self.temperature = temperature

    def warm_up(self) -> None:
        self.chat.warm_up()

    def close(self) -> None:
        self.chat.close()

    def complete(self, messages: Sequence[Mapping[str, str]], *, json_mode: bool = True, max_tokens: int = 512) -> str:
        return self.chat.content(messages, max_tokens=max_tokens, temperature=self.temperature, json_mode=json_mode)


class FakeChatClient:
    """Answers with ``replies`` in turn (the last one repeats); an ``Exception`` instance is raised instead.
    Records the messages of every call."""

    model = "fake"

    def __init__(self, *replies: str | Exception) -> None:
        self.replies = list(replies) or ['{"sufficient": true, "reason": "fake", "sub_queries": []}']
        self.calls: list[list[dict[str, str]]] = []

    def complete(self, messages: Sequence[Mapping[str, str]], *, json_mode: bool = True, max_tokens: int = 512) -> str:
        self.calls.append([dict(m) for m in messages])
        reply = self.replies[min(len(self.calls), len(self.replies)) - 1]
        if isinstance(reply, Exception):
            raise reply
        return reply
