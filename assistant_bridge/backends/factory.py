"""The search backend named by ``backend.kind``: the one place that knows every implementation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assistant_bridge.backends.base import SearchBackend
from assistant_bridge.errors import ConfigurationError

if TYPE_CHECKING:
    from assistant_bridge.settings import Settings


def make_backend(settings: Settings, dim: int) -> SearchBackend:
    kind = settings.backend.kind
    if kind in ("milvus-lite", "milvus"):
        from assistant_bridge.backends.milvus import MilvusBackend

        milvus = MilvusBackend.from_settings(settings, dim)
        exact = settings.backend.exact_mode()
        if exact == "off":
            return milvus
        from assistant_bridge.backends.exact import ExactDenseBackend

        return ExactDenseBackend(milvus, settings.data_path, dim, reads=exact == "on")
    if kind == "elasticsearch":
        try:
            from assistant_bridge.backends.elasticsearch import ElasticsearchBackend
        except ImportError as exc:  # pragma: no cover - the module ships with the package
            raise ConfigurationError(f"Elasticsearch backend unavailable: {exc}") from exc
        return ElasticsearchBackend.from_settings(settings, dim)
    if kind == "memory":
        from assistant_bridge.backends.memory import MemoryBackend

        return MemoryBackend(dim)
    raise ConfigurationError(f"unknown backend.kind {kind!r}")
