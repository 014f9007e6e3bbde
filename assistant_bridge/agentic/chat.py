"""The chat-completion client the LLM planner talks to: a one-method protocol, an OpenAI-compatible
implementation over httpx, and a fake for tests.

The planner asks for a JSON object (``response_format: {"type": "json_object"}``, which vLLM, llama.cpp
server, Ollama and hosted APIs accept; a server that ignores it still gets a prompt asking for JSON only).
Every failure (connection, timeout, HTTP status, a body without a message) becomes
:class:`~assistant_bridge.errors.GeneratorError`; the API key never appears in an error or a log.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Mapping, Protocol, Sequence

import httpx

from assistant_bridge.errors import GeneratorError
from assistant_bridge.settings import Secret

_RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})


class ChatClient(Protocol):
    model: str

    def complete(self, messages: Sequence[Mapping[str, str]], *, json_mode: bool = True,
                 max_tokens: int = 512) -> str:  # fmt: skip
        """The assistant message text of one completion.

        :raises GeneratorError: when the endpoint fails or answers garbage.
        """


class OpenAIChatClient:
    """``POST {base_url}/chat/completions``; ``base_url`` is the API root, e.g. ``http://127.0.0.1:8000/v1``.

    :param max_retries: retries on connection errors, timeouts, 429 and 5xx (exponential backoff).
    """

    def __init__(self, *, base_url: str, model: str, api_key: Secret | str | None = None, timeout: float = 30.0,
                 connect_timeout: float = 5.0, max_retries: int = 1, backoff: float = 0.5, temperature: float = 0.0,
                 transport: httpx.BaseTransport | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:  # fmt: skip
        self.base_url = base_url.rstrip("/")
        self.model = model
        self._key = api_key if isinstance(api_key, Secret) or api_key is None else Secret(api_key)
        self._timeout = httpx.Timeout(timeout, connect=connect_timeout)
        self.max_retries = max(0, int(max_retries))
        self.backoff = backoff
        self.temperature = temperature
        self._transport = transport
        self._sleep = sleep
        self._client: httpx.Client | None = None

    def warm_up(self) -> None:
        if self._client is None:
            headers = {"Accept": "application/json"}
            if self._key:
                headers["Authorization"] = f"Bearer {self._key.get()}"
            self._client = httpx.Client(timeout=self._timeout, headers=headers, transport=self._transport)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def complete(self, messages: Sequence[Mapping[str, str]], *, json_mode: bool = True,
                 max_tokens: int = 512) -> str:  # fmt: skip
        self.warm_up()
        assert self._client is not None
        body: dict[str, Any] = {"model": self.model, "messages": [dict(m) for m in messages],
                                "temperature": self.temperature, "max_tokens": max_tokens}  # fmt: skip
        if json_mode:
            body["response_format"] = {"type": "json_object"}
        reason = "no attempt"
        for attempt in range(self.max_retries + 1):
            if attempt:
                self._sleep(min(8.0, self.backoff * 2 ** (attempt - 1)))
            try:
                resp = self._client.post(f"{self.base_url}/chat/completions", json=body)
            except httpx.TimeoutException:
                reason = "timed out"
                continue
            except httpx.HTTPError as exc:
                reason = f"connection failed ({type(exc).__name__})"
                continue
            if resp.status_code in _RETRY_STATUS:
                reason = f"HTTP {resp.status_code}"
                continue
            if resp.status_code >= 400:
                raise GeneratorError(f"planner model endpoint answered HTTP {resp.status_code}")
            try:
                content = resp.json()["choices"][0]["message"]["content"]
            except (ValueError, KeyError, IndexError, TypeError):
                raise GeneratorError("planner model endpoint returned an unexpected body") from None
            if not isinstance(content, str):
                raise GeneratorError("planner model endpoint returned no text")
            return content
        raise GeneratorError(f"planner model endpoint failed: {reason}")


class FakeChatClient:
    """Answers with ``replies`` in turn (the last one repeats); an ``Exception`` instance is raised instead.
    Records the messages of every call."""

    model = "fake"

    def __init__(self, *replies: str | Exception) -> None:
        self.replies = list(replies) or ['{"sufficient": true, "reason": "fake", "sub_queries": []}']
        self.calls: list[list[dict[str, str]]] = []

    def complete(self, messages: Sequence[Mapping[str, str]], *, json_mode: bool = True,
                 max_tokens: int = 512) -> str:  # fmt: skip
        self.calls.append([dict(m) for m in messages])
        reply = self.replies[min(len(self.calls), len(self.replies)) - 1]
        if isinstance(reply, Exception):
            raise reply
        return reply
