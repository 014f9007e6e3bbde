"""The HTTP layer: Flask app factory, authentication, validation at the edge, and the routes."""

from assistant_bridge.web.app import create_app

__all__ = ["create_app"]
