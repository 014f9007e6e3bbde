"""The relay's branch of the error tree (:mod:`assistant_bridge.errors`).

Every failure of a relayed turn but one is a :class:`RelayError`, itself a
:class:`~assistant_bridge.errors.DependencyError`: something outside the caller's request failed (the
assistant, the IAM token service or the search provider). Messages never carry credentials, the user's
text or an answer body; ``details`` carries machine-readable facts (``status``, ``round``, ``cause``).

One failure is the caller's, not the assistant's: a session id that the assistant does not know (never
created, deleted or expired) is :class:`SessionNotFound`, a :class:`~assistant_bridge.errors.NotFound`, so
that the caller learns to create a new session instead of retrying a 502.

::

    DependencyError
    └── RelayError                    502 relay_error
        ├── AssistantUnavailable      503 the assistant could not be reached (connection, timeout)
        ├── AssistantHTTPError        502 the assistant answered with an HTTP error status
        ├── TokenExchangeFailed       502 the IAM token service refused the API key or failed
        ├── MalformedAssistantResponse 502 not JSON, wrong shape, or a broken event stream
        │   └── SearchActionInvalid   502 a search action without a usable query
        ├── SearchLoopExceeded        502 still asking for searches after ``max_rounds``
        ├── RelaySearchFailed         503 the search provider failed (``details["cause"]`` names why)
        │   └── InvalidSearchResults  502 the provider answered results of the wrong shape
        └── RelayRequestTooLarge      502 the echoed context alone is over the request limit

    NotFound
    └── SessionNotFound               404 session_not_found: the assistant does not know the session id
"""

from __future__ import annotations

from assistant_bridge.errors import DependencyError, NotFound


class RelayError(DependencyError, status=502, code="relay_error"):
    """Root of the relay's errors."""


class AssistantUnavailable(RelayError, status=503, code="assistant_unavailable"):
    """The assistant could not be reached (connection, timeout)."""


class AssistantHTTPError(RelayError, code="assistant_http_error"):
    """The assistant answered with an HTTP error. ``details``: ``status`` (the assistant's HTTP status) and,
    when its body was a JSON error, ``assistant_code``."""


class TokenExchangeFailed(RelayError, code="token_exchange_failed"):
    """The IAM token service refused the API key or failed."""


class MalformedAssistantResponse(RelayError, code="malformed_assistant_response"):
    """Not JSON, the wrong shape, or a broken event stream."""


class SearchActionInvalid(MalformedAssistantResponse, code="invalid_search_action"):
    """A search action without a usable query."""


class SearchLoopExceeded(RelayError, code="search_loop_exceeded"):
    """The assistant still asks for searches after ``max_rounds``."""


class RelaySearchFailed(RelayError, status=503, code="relay_search_failed"):
    """The search provider failed (``details["cause"]`` names why)."""


class InvalidSearchResults(RelaySearchFailed, status=502, code="invalid_search_results"):
    """The provider answered results of the wrong shape."""


class RelayRequestTooLarge(RelayError, code="relay_request_too_large"):
    """The echoed context alone is over the request limit."""


class SessionNotFound(NotFound, code="session_not_found"):
    """The assistant answered 404 for the session of a session message: unknown or expired. ``details``:
    ``resource`` ("session") and, when its body was a JSON error, ``assistant_code``."""
