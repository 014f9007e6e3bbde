"""Credentials the relay sends to an assistant or to a search server.

One protocol, :class:`Credentials` (``headers()``), with the usual kinds: none, a static bearer token, an
API key in a configurable header, HTTP Basic, and :class:`IAMToken`, an API key exchanged for a bearer
token at an IAM token URL (IBM Cloud's ``grant_type=urn:ibm:params:oauth:grant-type:apikey`` exchange),
cached until shortly before it expires. Secrets are kept in :class:`~assistant_bridge.settings.Secret`
and never appear in a repr, a log line or an error message.
"""

from __future__ import annotations

import base64
import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import httpx

from assistant_bridge.errors import ConfigurationError
from assistant_bridge.http import CONNECT_ERRORS, RetryPolicy
from assistant_bridge.relay.errors import AssistantUnavailable, TokenExchangeFailed
from assistant_bridge.settings import Secret

log = logging.getLogger(__name__)
IAM_TOKEN_URL = "https://iam.cloud.ibm.com/identity/token"
IAM_GRANT_TYPE = "urn:ibm:params:oauth:grant-type:apikey"
REFRESH_MARGIN_SECONDS = 60.0  # a token this close to its expiry is renewed before use
DEFAULT_TOKEN_LIFETIME_SECONDS = 3600.0  # when the token service omits expires_in/expiration


def _secret(value: str | Secret) -> Secret:
    return value if isinstance(value, Secret) else Secret(value)


class Credentials(Protocol):
    """The headers that authenticate one request."""

    def headers(self) -> Mapping[str, str]: ...


class NoAuth:
    def headers(self) -> Mapping[str, str]:
        return {}

    def __repr__(self) -> str:
        return "NoAuth()"


class BearerToken:
    """``Authorization: Bearer <token>`` with a token that does not change."""

    def __init__(self, token: str | Secret) -> None:
        self._token = _secret(token)

    def headers(self) -> Mapping[str, str]:
        return {"Authorization": f"Bearer {self._token.get()}"}

    def __repr__(self) -> str:
        return "BearerToken(***)"


class ApiKeyHeader:
    """The key in a header of its own (``X-API-Key`` unless told otherwise)."""

    def __init__(self, key: str | Secret, header: str = "X-API-Key") -> None:
        self._key = _secret(key)
        self.header = header

    def headers(self) -> Mapping[str, str]:
        return {self.header: self._key.get()}

    def __repr__(self) -> str:
        return f"ApiKeyHeader(header={self.header!r})"


class BasicAuth:
    def __init__(self, username: str, password: str | Secret) -> None:
        self.username = username
        self._password = _secret(password)

    def headers(self) -> Mapping[str, str]:
        pair = f"{self.username}:{self._password.get()}".encode()
        return {"Authorization": "Basic " + base64.b64encode(pair).decode("ascii")}

    def __repr__(self) -> str:
        return f"BasicAuth(username={self.username!r})"


class StaticHeaders:
    """Fixed headers, e.g. the caller's own credentials forwarded to an in-process assistant."""

    def __init__(self, headers: Mapping[str, str]) -> None:
        self._headers = dict(headers)

    def headers(self) -> Mapping[str, str]:
        return dict(self._headers)

    def __repr__(self) -> str:
        return f"StaticHeaders(names={sorted(self._headers)!r})"


class IAMToken:
    """An API key exchanged for a bearer token, cached until ``REFRESH_MARGIN_SECONDS`` before expiry.

    Thread-safe: concurrent callers wait for one exchange. Connection errors are retried ``retries`` times;
    an HTTP error answer is not.

    :param token_url: the IAM token endpoint (IBM Cloud's by default).
    :param clock: wall-clock seconds (``expiration`` in the IAM answer is a Unix time).
    :raises TokenExchangeFailed: from :meth:`headers`, when the service refuses the key or answers garbage.
    :raises AssistantUnavailable: from :meth:`headers`, when the token service cannot be reached.
    """

    def __init__(
        self,
        apikey: str | Secret,
        token_url: str = IAM_TOKEN_URL,
        *,
        timeout: float = 10.0,
        retries: int = 2,
        refresh_margin: float = REFRESH_MARGIN_SECONDS,
        transport: httpx.BaseTransport | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        verify_tls: bool = True,
    ) -> None:
        self._apikey = _secret(apikey)
        self.token_url = token_url
        self._timeout = timeout
        self._retries = retries
        self._margin = refresh_margin
        self._transport = transport
        self._clock = clock
        self._sleep = sleep
        self._verify = verify_tls
        self._lock = threading.Lock()
        self._token: Secret | None = None
        self._expires_at = 0.0
        self.exchanges = 0  # how many times a token was fetched (for tests and metrics)

    def __repr__(self) -> str:
        return f"IAMToken(token_url={self.token_url!r})"

    def headers(self) -> Mapping[str, str]:
        return {"Authorization": f"Bearer {self.token().get()}"}

    def token(self) -> Secret:
        with self._lock:
            if self._token is None or self._clock() >= self._expires_at - self._margin:
                self._token, self._expires_at = self._exchange()
                self.exchanges += 1
            return self._token

    def invalidate(self) -> None:
        with self._lock:
            self._token = None

    def _exchange(self) -> tuple[Secret, float]:
        data = {"grant_type": IAM_GRANT_TYPE, "apikey": self._apikey.get()}
        headers = {"Accept": "application/json", "Content-Type": "application/x-www-form-urlencoded"}
        policy = RetryPolicy(
            max_retries=self._retries,
            backoff=0.2,
            max_backoff=2.0,
            retry_on=CONNECT_ERRORS,
            sleep=self._sleep,
            name="relay.iam",
        )
        with httpx.Client(timeout=self._timeout, transport=self._transport, verify=self._verify) as client:
            try:
                resp = policy.call(lambda: client.post(self.token_url, data=data, headers=headers))
            except CONNECT_ERRORS as exc:
                raise AssistantUnavailable(
                    f"the IAM token service could not be reached ({type(exc).__name__})", cause="iam_unreachable"
                ) from None
            except httpx.TimeoutException:
                raise AssistantUnavailable(
                    f"the IAM token service did not answer within {self._timeout:g} s", cause="iam_timeout"
                ) from None
        if resp.status_code != 200:
            log.warning("relay.iam_refused", extra={"status": resp.status_code})
            raise TokenExchangeFailed(
                f"the IAM token service answered HTTP {resp.status_code}", status=resp.status_code
            )
        try:
            body: Any = resp.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise TokenExchangeFailed("the IAM token service answered with invalid JSON") from None
        token = body.get("access_token") if isinstance(body, dict) else None
        if not isinstance(token, str) or not token:
            raise TokenExchangeFailed("the IAM token service's answer has no access_token")
        now = self._clock()
        expiration = body.get("expiration")
        expires_in = body.get("expires_in")
        if isinstance(expiration, (int, float)) and not isinstance(expiration, bool) and expiration > now:
            expires_at = float(expiration)
        elif isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool) and expires_in > 0:
            expires_at = now + float(expires_in)
        else:
            expires_at = now + DEFAULT_TOKEN_LIFETIME_SECONDS
        log.info("relay.iam_token_fetched", extra={"expires_in_s": round(expires_at - now)})
        return Secret(token), expires_at


def credentials_from_config(
    raw: Mapping[str, Any] | None, where: str, *, transport: httpx.BaseTransport | None = None
) -> Credentials:
    """Credentials from a settings table ``{type, token, apikey, header, username, password, token_url}``.

    ``type``: ``none`` (default), ``bearer`` (``token``), ``apikey`` (``apikey``, ``header``), ``basic``
    (``username``, ``password``) or ``iam`` (``apikey``, ``token_url``).

    :raises ConfigurationError: naming the missing or unknown key.
    """
    raw = dict(raw or {})
    kind = str(raw.get("type") or raw.get("auth_type") or "none")
    allowed = {"type", "auth_type", "token", "apikey", "header", "apikey_header", "username", "password", "token_url"}
    unknown = set(raw) - allowed
    if unknown:
        raise ConfigurationError(f"unknown setting {where}.{sorted(unknown)[0]}")

    def need(key: str) -> str:
        value = raw.get(key)
        if not value:
            raise ConfigurationError(f"{where}.{key} is required when {where}.type is {kind}")
        return value.get() if isinstance(value, Secret) else str(value)

    if kind == "none":
        return NoAuth()
    if kind == "bearer":
        return BearerToken(need("token"))
    if kind == "apikey":
        return ApiKeyHeader(need("apikey"), str(raw.get("header") or raw.get("apikey_header") or "X-API-Key"))
    if kind == "basic":
        return BasicAuth(need("username"), need("password"))
    if kind == "iam":
        return IAMToken(need("apikey"), str(raw.get("token_url") or IAM_TOKEN_URL), transport=transport)
    raise ConfigurationError(f"{where}.type must be none, bearer, apikey, basic or iam, not {kind!r}")
