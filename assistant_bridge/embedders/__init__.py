"""Text embedders behind one small protocol, chosen by settings through :func:`make_embedder`."""

from assistant_bridge.embedders.base import Embedder, HashingEmbedder
from assistant_bridge.embedders.factory import make_embedder

__all__ = ["Embedder", "HashingEmbedder", "make_embedder"]
