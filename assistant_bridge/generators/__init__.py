"""Answer generators behind one protocol, chosen by configuration through :func:`make_generator`.

* ``extractive`` (default, embedded, no LLM): selects and orders snippet sentences, exact citations.
* ``openai``: any OpenAI-compatible ``/chat/completions`` endpoint (vLLM, llama.cpp server, Ollama, TGI…).
* ``fake``: deterministic, for tests.

The ``generator`` tables of the settings are read with declared types by :func:`generator_table`.
"""

from __future__ import annotations

from typing import Any

from assistant_bridge.errors import ConfigurationError
from assistant_bridge.generators.base import (
    IDK_TEXT,
    Generation,
    GenerationStream,
    Generator,
    ResponseLength,
    approx_tokens,
    is_declined,
)
from assistant_bridge.generators.fake import FakeGenerator
from assistant_bridge.generators.options import ALIASES, generator_table

__all__ = [
    "IDK_TEXT",
    "FakeGenerator",
    "Generation",
    "GenerationStream",
    "Generator",
    "ResponseLength",
    "approx_tokens",
    "generator_table",
    "is_declined",
    "make_generator",
]


def _embedder(value: Any) -> Any:
    if value is None or value in ("", "none"):
        return None
    if value == "use":
        from assistant_bridge.generators.sentence_embedder import UseSentenceEmbedder

        return UseSentenceEmbedder()
    if isinstance(value, str):
        from assistant_bridge.embedders import make_embedder

        return make_embedder(value)
    if hasattr(value, "embed_queries"):
        return value
    if hasattr(value, "encode"):
        from assistant_bridge.generators.sentence_embedder import EncoderEmbedder

        return EncoderEmbedder(value, name=type(value).__name__)
    raise ConfigurationError(f"generator.embedder must be 'use', 'none', an embedder kind or an object, not {value!r}")


def make_generator(kind: str = "extractive", **options: Any) -> Generator:
    """Build the generator named by configuration.

    :param kind: ``extractive`` (options: ``embedder`` = ``"use"`` (default), ``"none"``, an embedder kind
        or object, plus :class:`~assistant_bridge.generators.extractive.ExtractiveGenerator` weights),
        ``openai`` (``base_url``, ``model``, ``api_key``, ``timeout``, ``connect_timeout``, ``max_retries``,
        ``context_tokens``, ``temperature``) or ``fake``.
    :raises ConfigurationError: for an unknown kind or missing options.
    """
    canonical = ALIASES.get(kind, kind)  # the same aliases the settings tables accept
    if canonical == "extractive":
        from assistant_bridge.generators.extractive import ExtractiveGenerator

        opts = dict(options)
        embedder = _embedder(opts.pop("embedder", "use"))
        try:
            return ExtractiveGenerator(embedder, **opts)
        except TypeError as exc:
            raise ConfigurationError(f"generator (extractive): {exc}") from None
    if canonical == "openai":
        from assistant_bridge.generators.openai_chat import OpenAIChatGenerator

        if not options.get("base_url") or not options.get("model"):
            raise ConfigurationError("generator.kind = 'openai' needs generator.base_url and generator.model")
        try:
            return OpenAIChatGenerator(**options)
        except TypeError as exc:
            raise ConfigurationError(f"generator (openai): {exc}") from None
    if canonical == "fake":
        return FakeGenerator(**options)
    raise ConfigurationError(f"unknown generator kind {kind!r}; use extractive, openai or fake")
