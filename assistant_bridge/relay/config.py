"""The ``[relay]`` settings table, checked once at start-up.

::

    [relay]
    url = ""                     # the assistant's /message URL; "" = this service's own assistant, in-process
    assistant_id = "client-side" # used when url is ""
    environment_id = "default"
    version = "2024-08-25"
    stream = true                # the assistant has message_stream
    max_rounds = 5               # search rounds per turn before SearchLoopExceeded
    max_request_bytes = 100000   # spec §A.2: a larger search_results message is refused
    max_results = 50             # results sent back per round, after merging
    request_debug = true         # ask for output.debug to tell "I don't know" from other text
    on_search_error = "raise"    # or "empty": answer with the results that did come back (maybe none)
    timeout_seconds = 60
    connect_timeout_seconds = 5
    retries = 2                  # connection errors only
    verify_tls = true

    [relay.auth]                 # to the assistant: type = none | bearer | apikey | basic | iam
    type = "iam"
    apikey = "..."
    token_url = "https://iam.cloud.ibm.com/identity/token"

    [relay.search]               # the search provider
    type = "builtin"             # or "server"
    mode = "hybrid"              # builtin: default mode, limit, passage_length
    limit = 10
    # type = "server": url, timeout_seconds, metadata, [relay.search.auth] (none | basic | apikey | bearer)

Values from environment variables arrive as strings (``ASSISTANT_BRIDGE_RELAY__MAX_ROUNDS=3``) and are
converted here as every setting is (:func:`~assistant_bridge.settings.coerce`); a table may be given as JSON.
Every problem is a :class:`~assistant_bridge.errors.ConfigurationError` naming the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from assistant_bridge.errors import ConfigurationError
from assistant_bridge.relay.auth import credentials_from_config
from assistant_bridge.relay.client import DEFAULT_VERSION
from assistant_bridge.settings import Secret, Settings, coerce, table

_TOP = {
    "url",
    "assistant_id",
    "environment_id",
    "version",
    "stream",
    "max_rounds",
    "max_request_bytes",
    "max_results",
    "request_debug",
    "on_search_error",
    "timeout_seconds",
    "connect_timeout_seconds",
    "retries",
    "verify_tls",
    "auth",
    "search",
}
_SEARCH = {
    "type",
    "url",
    "auth",
    "timeout_seconds",
    "connect_timeout_seconds",
    "retries",
    "metadata",
    "mode",
    "limit",
    "passage_length",
    "verify_tls",
}


def _num(
    raw: Mapping[str, Any], key: str, default: float, where: str, lo: float, hi: float, integer: bool = False
) -> Any:
    num: float = coerce(float, raw.get(key, default), f"{where}.{key}")
    if integer and not num.is_integer():
        raise ConfigurationError(f"{where}.{key} must be an integer")
    if not lo <= num <= hi:
        raise ConfigurationError(f"{where}.{key} must be from {lo:g} to {hi:g}")
    return int(num) if integer else num


def _bool(raw: Mapping[str, Any], key: str, default: bool, where: str) -> bool:
    value: bool = coerce(bool, raw.get(key, default), f"{where}.{key}")
    return value


@dataclass(frozen=True)
class SearchProviderConfig:
    type: str = "builtin"  # builtin | server
    url: str = ""
    auth: Mapping[str, Any] = field(default_factory=dict)
    timeout_seconds: float = 10.0
    connect_timeout_seconds: float = 3.0
    retries: int = 1
    metadata: Mapping[str, Any] = field(default_factory=dict)
    mode: str | None = None
    limit: int | None = None
    passage_length: int | None = None
    verify_tls: bool = True


@dataclass(frozen=True)
class RelayConfig:
    url: str = ""
    assistant_id: str = "client-side"
    environment_id: str = "default"
    version: str = DEFAULT_VERSION
    stream: bool = True
    max_rounds: int = 5
    max_request_bytes: int = 100_000
    max_results: int = 50
    request_debug: bool = True
    on_search_error: str = "raise"
    timeout_seconds: float = 60.0
    connect_timeout_seconds: float = 5.0
    retries: int = 2
    verify_tls: bool = True
    auth: Mapping[str, Any] = field(default_factory=dict)
    search: SearchProviderConfig = field(default_factory=SearchProviderConfig)

    @property
    def in_process(self) -> bool:
        """The target is this service's own assistant, called without leaving the process."""
        return not self.url

    @classmethod
    def from_settings(cls, settings: Settings) -> RelayConfig:
        return cls.from_mapping(settings.extra.get("relay"))

    @classmethod
    def from_mapping(cls, value: Any) -> RelayConfig:
        """:raises ConfigurationError: naming the key that is wrong."""
        raw = table(value, "relay")
        unknown = set(raw) - _TOP
        if unknown:
            raise ConfigurationError(f"unknown setting relay.{sorted(unknown)[0]}")
        url = coerce(str, raw.get("url") or "", "relay.url")
        if url and not url.startswith(("http://", "https://")):
            raise ConfigurationError("relay.url must be an http or https URL (or empty for this service's assistant)")
        on_error = coerce(str, raw.get("on_search_error", "raise"), "relay.on_search_error")
        if on_error not in ("raise", "empty"):
            raise ConfigurationError("relay.on_search_error must be raise or empty")
        auth = table(raw.get("auth"), "relay.auth")
        if url:
            credentials_from_config(auth, "relay.auth")  # checks the table now
        elif auth:
            raise ConfigurationError(
                "relay.auth needs relay.url: the in-process assistant gets the caller's credentials"
            )
        return cls(
            url=url,
            assistant_id=coerce(str, raw.get("assistant_id", "client-side"), "relay.assistant_id"),
            environment_id=coerce(str, raw.get("environment_id", "default"), "relay.environment_id"),
            version=coerce(str, raw.get("version", DEFAULT_VERSION), "relay.version"),
            stream=_bool(raw, "stream", True, "relay"),
            max_rounds=_num(raw, "max_rounds", 5, "relay", 1, 20, integer=True),
            max_request_bytes=_num(raw, "max_request_bytes", 100_000, "relay", 2_000, 10_000_000, integer=True),
            max_results=_num(raw, "max_results", 50, "relay", 1, 200, integer=True),
            request_debug=_bool(raw, "request_debug", True, "relay"),
            on_search_error=on_error,
            timeout_seconds=_num(raw, "timeout_seconds", 60.0, "relay", 0.1, 3600),
            connect_timeout_seconds=_num(raw, "connect_timeout_seconds", 5.0, "relay", 0.1, 600),
            retries=_num(raw, "retries", 2, "relay", 0, 10, integer=True),
            verify_tls=_bool(raw, "verify_tls", True, "relay"),
            auth=MappingProxyType(
                {k: Secret(str(v)) if k in ("token", "apikey", "password") else v for k, v in auth.items()}
            ),
            search=_search(table(raw.get("search"), "relay.search")),
        )


def _search(raw: dict[str, Any]) -> SearchProviderConfig:
    where = "relay.search"
    unknown = set(raw) - _SEARCH
    if unknown:
        raise ConfigurationError(f"unknown setting {where}.{sorted(unknown)[0]}")
    kind = coerce(str, raw.get("type", "builtin"), f"{where}.type")
    if kind not in ("builtin", "server"):
        raise ConfigurationError(f"{where}.type must be builtin or server")
    url = coerce(str, raw.get("url") or "", f"{where}.url")
    auth = table(raw.get("auth"), f"{where}.auth")
    if kind == "server":
        if not url.startswith(("http://", "https://")):
            raise ConfigurationError(f"{where}.url must be an http or https URL when {where}.type is server")
        if str(auth.get("type") or auth.get("auth_type") or "none") == "iam":
            raise ConfigurationError(f"{where}.auth.type must be none, basic, apikey or bearer")
        credentials_from_config(auth, f"{where}.auth")
    elif url or auth:
        raise ConfigurationError(f"{where}.url and {where}.auth are only for type = server")
    mode = raw.get("mode")
    if mode is not None and mode not in ("lexical", "dense", "hybrid"):
        raise ConfigurationError(f"{where}.mode must be lexical, dense or hybrid")
    return SearchProviderConfig(
        type=kind,
        url=url,
        auth=MappingProxyType(
            {k: Secret(str(v)) if k in ("token", "apikey", "password") else v for k, v in auth.items()}
        ),
        timeout_seconds=_num(raw, "timeout_seconds", 10.0, where, 0.1, 600),
        connect_timeout_seconds=_num(raw, "connect_timeout_seconds", 3.0, where, 0.1, 600),
        retries=_num(raw, "retries", 1, where, 0, 10, integer=True),
        metadata=MappingProxyType(table(raw.get("metadata"), f"{where}.metadata")),
        mode=mode,
        limit=_num(raw, "limit", 10, where, 1, 200, integer=True) if "limit" in raw else None,
        passage_length=_num(raw, "passage_length", 0, where, 0, 100_000, integer=True)
        if "passage_length" in raw
        else None,
        verify_tls=_bool(raw, "verify_tls", True, where),
    )
