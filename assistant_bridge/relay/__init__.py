"""Client-side search relay (spec §A.2): talk to an assistant's ``/message`` API, run the searches it hands
to its client with a search provider, send the results back, and return the answer.

Common case, one line::

    from assistant_bridge.relay import relay_message, HttpSearchProvider
    answer = relay_message(url, "How do I reset my password?", provider=HttpSearchProvider(search_url))

or, from the ``[relay]`` settings table (this service's own ``client-side`` assistant by default)::

    relay_from_settings(load_settings()).send("How do I reset my password?").text  # assistant_bridge.web.app

Module map: :mod:`.relay` (the loop), :mod:`.wire` (pure JSON logic: actions, merge, trimming, outcome),
:mod:`.client` (HTTP to the assistant), :mod:`.providers` (search providers), :mod:`.auth` (credentials,
IAM token exchange), :mod:`.config` (settings), :mod:`.events` (stream events), :mod:`.errors`.
"""

from assistant_bridge.relay.auth import (
    ApiKeyHeader,
    BasicAuth,
    BearerToken,
    Credentials,
    IAMToken,
    NoAuth,
    StaticHeaders,
    credentials_from_config,
)
from assistant_bridge.relay.client import AssistantClient
from assistant_bridge.relay.config import RelayConfig, SearchProviderConfig
from assistant_bridge.relay.errors import (
    AssistantHTTPError,
    AssistantUnavailable,
    InvalidSearchResults,
    MalformedAssistantResponse,
    RelayError,
    RelayRequestTooLarge,
    RelaySearchFailed,
    SearchActionInvalid,
    SearchLoopExceeded,
    SessionNotFound,
    TokenExchangeFailed,
)
from assistant_bridge.relay.providers import FakeProvider, HttpSearchProvider, SearchProvider, ServicesProvider
from assistant_bridge.relay.relay import Relay, RelayResult, SearchRecord, relay_message

__all__ = [
    "ApiKeyHeader",
    "AssistantClient",
    "AssistantHTTPError",
    "AssistantUnavailable",
    "BasicAuth",
    "BearerToken",
    "Credentials",
    "FakeProvider",
    "HttpSearchProvider",
    "IAMToken",
    "InvalidSearchResults",
    "MalformedAssistantResponse",
    "NoAuth",
    "Relay",
    "RelayConfig",
    "RelayError",
    "RelayRequestTooLarge",
    "RelayResult",
    "RelaySearchFailed",
    "SearchActionInvalid",
    "SearchLoopExceeded",
    "SearchProvider",
    "SearchProviderConfig",
    "SearchRecord",
    "ServicesProvider",
    "SessionNotFound",
    "StaticHeaders",
    "TokenExchangeFailed",
    "credentials_from_config",
    "relay_message",
]
