"""The ``[tools]`` settings table (``settings.extra["tools"]``), checked once when the app starts. Values are
read like every setting (:func:`~assistant_bridge.settings.build`): strings from environment variables become
numbers, and ``[tools.rag_search]`` may be given as JSON.

Every key, its default and its meaning::

    [tools]
    sse_max_event_bytes = 16384      # larger event data is split into <event>_delta_sse events
    sse_max_split_bytes = 8000000    # larger still: an `error` event (code event_too_large) instead
    heartbeat_seconds = 15           # keep-alive comment on an idle stream
    poll_seconds = 0.2               # how often a stream polls the store for another worker's events
    stream_max_seconds = 900         # a stream ends with an `error` event (code stream_timeout) after this
    async_threads = 2                # threads per gunicorn worker running asynchronous executions
    max_queued = 32                  # more waiting asynchronous executions: 429
    max_execution_seconds = 600      # a running execution older than this is reported failed (timeout)
    execution_ttl_seconds = 86400    # executions older than this are deleted

    [tools.rag_search]
    assistant = ""                   # the /message assistant whose generator, thresholds and messages
                                     # rag_search uses; "" = "default", else the first built-in one
    retrieve_limit = 15              # chunks retrieved before the loop keeps at most five
    mode = ""                        # lexical | dense | hybrid; "" = backend.default_mode
    preview_chars = 300              # length of contexts[].text_preview
    partial_chars = 48               # about how many characters each tool_partial_update carries
    threshold_level = ""             # override of the assistant's level ("" = the assistant's)
    response_length = ""             # override of the assistant's response length
    contextual_mode = ""             # single_turn | entire_conversation ("" = the assistant's): rewrite the
                                     # query with the chat session's earlier turns
    memory_ttl_seconds = 3600        # a chat session's memory is forgotten after this long without a call
"""

from __future__ import annotations

from dataclasses import dataclass

from assistant_bridge.errors import ConfigurationError
from assistant_bridge.settings import Settings, build, table
from assistant_bridge.streaming.delta import MIN_EVENT_BYTES


@dataclass(frozen=True)
class RagSearchSettings:
    assistant: str = ""
    retrieve_limit: int = 15
    mode: str = ""
    preview_chars: int = 300
    partial_chars: int = 48
    threshold_level: str = ""
    response_length: str = ""
    contextual_mode: str = ""
    memory_ttl_seconds: float = 3600.0


@dataclass(frozen=True)
class ToolSettings:
    sse_max_event_bytes: int = 16384
    sse_max_split_bytes: int = 8_000_000
    heartbeat_seconds: float = 15.0
    poll_seconds: float = 0.2
    stream_max_seconds: float = 900.0
    async_threads: int = 2
    max_queued: int = 32
    max_execution_seconds: float = 600.0
    execution_ttl_seconds: float = 86400.0
    rag_search: RagSearchSettings = RagSearchSettings()

    @classmethod
    def from_settings(cls, settings: Settings) -> ToolSettings:
        """:raises ConfigurationError: for an unknown key or a value out of range."""
        out: ToolSettings = build(cls, table(settings.extra.get("tools"), "tools"), "tools")
        out._check()
        return out

    def _check(self) -> None:
        if self.sse_max_event_bytes < MIN_EVENT_BYTES:
            raise ConfigurationError(f"tools.sse_max_event_bytes must be at least {MIN_EVENT_BYTES}")
        if self.sse_max_split_bytes < self.sse_max_event_bytes:
            raise ConfigurationError("tools.sse_max_split_bytes must be at least tools.sse_max_event_bytes")
        for name in (
            "heartbeat_seconds",
            "poll_seconds",
            "stream_max_seconds",
            "max_execution_seconds",
            "execution_ttl_seconds",
        ):
            if getattr(self, name) <= 0:
                raise ConfigurationError(f"tools.{name} must be greater than 0")
        if not 1 <= self.async_threads <= 64 or not 0 <= self.max_queued <= 10_000:
            raise ConfigurationError("tools.async_threads must be 1-64 and tools.max_queued 0-10000")
        r = self.rag_search
        if not 1 <= r.retrieve_limit <= 100:
            raise ConfigurationError("tools.rag_search.retrieve_limit must be 1-100")
        if r.mode not in ("", "lexical", "dense", "hybrid"):
            raise ConfigurationError("tools.rag_search.mode must be lexical, dense, hybrid or empty")
        if not 16 <= r.preview_chars <= 10_000 or not 1 <= r.partial_chars <= 10_000:
            raise ConfigurationError("tools.rag_search.preview_chars must be 16-10000, partial_chars 1-10000")
        if r.response_length not in ("", "concise", "moderate", "verbose"):
            raise ConfigurationError("tools.rag_search.response_length must be concise, moderate or verbose")
        if r.contextual_mode not in ("", "single_turn", "entire_conversation"):
            raise ConfigurationError("tools.rag_search.contextual_mode must be single_turn or entire_conversation")
        if not 10 <= r.memory_ttl_seconds <= 2_592_000:
            raise ConfigurationError("tools.rag_search.memory_ttl_seconds must be 10-2592000")
        if r.threshold_level not in ("", "rarely", "less_often", "more_often", "most_often"):
            raise ConfigurationError(
                "tools.rag_search.threshold_level must be rarely, less_often, more_often or most_often"
            )
