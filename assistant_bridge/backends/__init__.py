"""Search backends behind one protocol, chosen by :func:`make_backend` from the settings."""

from assistant_bridge.backends.base import SearchBackend
from assistant_bridge.backends.factory import make_backend

__all__ = ["SearchBackend", "make_backend"]
