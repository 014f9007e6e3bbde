"""The ``generator`` tables of the settings (``agentic.generator``, ``assistants.<id>.generator``), read with
declared types.

Each generator kind declares the type of every key an operator may set. A value is read with
:func:`~assistant_bridge.settings.coerce`, like every other setting: a number set from an environment
variable (``ASSISTANT_BRIDGE_AGENTIC__GENERATOR__TIMEOUT=5``) arrives as the string ``"5"`` and becomes
``5.0``, ``api_key`` becomes a :class:`~assistant_bridge.settings.Secret`. An unknown kind, an unknown key or a
value of the wrong type is a :class:`~assistant_bridge.errors.ConfigurationError` naming the key. Only the
keys present are returned: the defaults stay those of the generator's constructor.
"""

from __future__ import annotations

from typing import Any

from assistant_bridge.errors import ConfigurationError
from assistant_bridge.settings import Secret, coerce, table

KINDS = ("extractive", "openai", "fake")
ALIASES = {"default": "extractive", "openai-compatible": "openai"}

# the connection options of an OpenAI-compatible chat endpoint (chat_completions.ChatCompletions), shared by
# the generator's table and the agentic planner's
CHAT_ENDPOINT_TYPES: dict[str, Any] = {
    "base_url": str,
    "model": str,
    "api_key": Secret,
    "timeout": float,
    "connect_timeout": float,
    "max_retries": int,
    "backoff": float,
}

OPTION_TYPES: dict[str, dict[str, Any]] = {
    # ExtractiveGenerator; ``embedder`` is "use", "none" or an embedder kind
    "extractive": {
        "embedder": str,
        "w_embed": float,
        "w_position": float,
        "w_rank": float,
        "fragment_penalty": float,
        "min_chars": int,
        "min_relevance": float | None,
        "max_embedded": int,
        "min_ratio": float,
        "min_ratio_same": float,
        "min_query_relevance": float,
        "same_snippet_bonus": float,
        "w_heading": float,
        "w_entry": float,
        "w_number": float,
        "w_phrase": float,
        "w_similarity_gap": float,
        "whether_gap_share": float,
        "w_define": float,
        "w_code_name": float,
        "w_option": float,
        "w_name": float,
        "w_off_page": float,
        "frame_term_weight": float,
        "context_tokens": int,
    },
    # OpenAIChatGenerator
    "openai": {
        **CHAT_ENDPOINT_TYPES,
        "max_backoff": float,
        "context_window": int,
        "reserve_tokens": int | None,
        "temperature": float,
        "headers": dict[str, str],
    },
    # FakeGenerator
    "fake": {"text": str | None, "declined": bool, "error": str | None, "context_tokens": int, "chunk_chars": int},
}


def generator_table(raw: Any, where: str) -> dict[str, Any]:
    """A ``generator`` table with each value read as its declared type; ``kind`` defaults to ``extractive``
    and keeps the spelling given (``openai-compatible`` stays so).

    :param where: the table's dotted name (``agentic.generator``), for error messages.
    :raises ConfigurationError: naming ``where.<key>`` for an unknown kind or key or a value of the wrong type.
    """
    data = table(raw, where)
    kind = coerce(str, data.pop("kind", "extractive"), f"{where}.kind")
    types = OPTION_TYPES.get(ALIASES.get(kind, kind))
    if types is None:
        raise ConfigurationError(f"{where}: unknown generator kind {kind!r}; use {', '.join(KINDS)}")
    out: dict[str, Any] = {"kind": kind}
    for key, value in data.items():
        if key not in types:
            raise ConfigurationError(f"unknown setting {where}.{key} (generator kind {kind!r})")
        out[key] = coerce(types[key], value, f"{where}.{key}")
    return out
