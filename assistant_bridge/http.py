"""The one HTTP layer for every outside system this service calls: LLM and embedding endpoints, custom search
servers, assistants.

- :class:`LazyClient`: one ``httpx.Client`` made on first use and again after a fork, so each gunicorn worker
  has its own connection pool (a pool inherited across ``fork`` shares sockets with the parent);
- :class:`RetryPolicy`: the one retry rule (tenacity): transport errors and the statuses of
  :data:`RETRY_STATUS` are retried ``max_retries`` times with exponential backoff and jitter; a
  ``Retry-After`` answer is honoured up to ``max_backoff``;
- :func:`failure_reason`: the short reason code every error reports (``timeout``, ``connect_error``,
  ``http_503``, ...), never the request or a credential;
- :func:`read_bounded`: a response body read up to a size limit;
- :func:`bearer`: the ``Authorization`` header of an optional secret.
"""

from __future__ import annotations

import email.utils
import logging
import os
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import httpx
import tenacity
from httpx_sse import EventSource

from assistant_bridge.settings import Secret

log = logging.getLogger(__name__)
RETRY_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})


class RetryableStatus(Exception):
    """An answer whose status is worth another attempt (:data:`RETRY_STATUS`)."""

    def __init__(self, status: int, retry_after: float | None = None) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.retry_after = retry_after


def retry_after_seconds(response: httpx.Response) -> float | None:
    """``Retry-After`` in seconds (delta-seconds or an HTTP date), or ``None``."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def raise_for_retry(response: httpx.Response) -> httpx.Response:
    """:raises RetryableStatus: for a status of :data:`RETRY_STATUS` (the body is read first)."""
    if response.status_code in RETRY_STATUS:
        response.read()
        raise RetryableStatus(response.status_code, retry_after_seconds(response))
    return response


def failure_reason(exc: BaseException) -> str:
    """The reason code of a failed call: ``timeout``, ``connect_error``, ``http_<status>``, ``protocol_error``
    or ``http_error``."""
    if isinstance(exc, RetryableStatus):
        return f"http_{exc.status}"
    if isinstance(exc, httpx.HTTPStatusError):
        return f"http_{exc.response.status_code}"
    if isinstance(exc, httpx.TimeoutException):
        return "timeout"
    if isinstance(exc, (httpx.ConnectError, httpx.NetworkError)):
        return "connect_error"
    if isinstance(exc, httpx.RemoteProtocolError):
        return "protocol_error"
    return "http_error"


RETRYABLE_ERRORS: tuple[type[BaseException], ...] = (httpx.TransportError, RetryableStatus)
# a connection that failed before any answer: safe to retry even for a request that is not idempotent
CONNECT_ERRORS: tuple[type[BaseException], ...] = (httpx.ConnectError, httpx.ConnectTimeout, httpx.RemoteProtocolError)


@dataclass(frozen=True)
class RetryPolicy:
    """How many times and how long to wait (see the module docstring).

    :param max_retries: retries after the first attempt (0: one attempt).
    :param backoff: the first delay in seconds, doubled each time, at most ``max_backoff``.
    :param jitter: the random part added to each delay, at most this many seconds.
    :param retry_on: the exceptions worth another attempt.
    :param sleep: the sleep function (tests pass a recorder).
    """

    max_retries: int = 2
    backoff: float = 0.5
    max_backoff: float = 8.0
    jitter: float = 0.25
    retry_on: tuple[type[BaseException], ...] = RETRYABLE_ERRORS
    sleep: Callable[[float], None] = time.sleep
    name: str = "http"

    def delay(self, retry_state: tenacity.RetryCallState) -> float:
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None else None
        hinted = getattr(exc, "retry_after", None)
        if isinstance(hinted, (int, float)):
            return float(min(max(0.0, hinted), self.max_backoff))
        # exponential backoff plus jitter (tenacity's wait_exponential_jitter renamed its parameters between
        # releases; the rule is two lines)
        exponential = self.backoff * 2.0 ** (retry_state.attempt_number - 1)
        return float(min(exponential + random.uniform(0.0, self.jitter), self.max_backoff))

    def _log(self, retry_state: tenacity.RetryCallState) -> None:
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None else None
        reason = failure_reason(exc) if exc is not None else "unknown"
        log.warning(f"{self.name}.retry", extra={"attempt": retry_state.attempt_number, "reason": reason})

    def attempts(self) -> tenacity.Retrying:
        """Iterate it, and run each attempt inside ``with attempt:``; after the last attempt its exception is
        raised as it was."""
        return tenacity.Retrying(
            stop=tenacity.stop_after_attempt(max(0, self.max_retries) + 1),
            wait=self.delay,
            retry=tenacity.retry_if_exception_type(self.retry_on),
            sleep=self.sleep,
            before_sleep=self._log,
            reraise=True,
        )

    def call(self, fn: Callable[[], Any]) -> Any:
        """``fn()`` under this policy."""
        return self.attempts()(fn)


class LazyClient:
    """One ``httpx.Client`` for one outside system, made on first use, after a fork again; thread-safe.

    :param timeout: the read timeout in seconds; ``connect_timeout`` the connect timeout.
    :param headers: sent with every request (``Accept``, ``Authorization``, ...).
    :param transport: an ``httpx`` transport, for tests or an in-process app.
    """

    def __init__(
        self,
        *,
        timeout: float,
        connect_timeout: float | None = None,
        headers: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
        verify_tls: bool = True,
        follow_redirects: bool = False,
    ) -> None:
        self.timeout = httpx.Timeout(timeout, connect=connect_timeout if connect_timeout is not None else timeout)
        self._headers = dict(headers or {})
        self._transport = transport
        self._verify = verify_tls
        self._follow = follow_redirects
        self._client: httpx.Client | None = None
        self._pid = 0
        self._lock = threading.Lock()

    def get(self) -> httpx.Client:
        with self._lock:
            if self._client is None or self._pid != os.getpid():
                self._client = httpx.Client(
                    timeout=self.timeout,
                    headers=self._headers,
                    transport=self._transport,
                    verify=self._verify,
                    follow_redirects=self._follow,
                )
                self._pid = os.getpid()
            return self._client

    def close(self) -> None:
        with self._lock:
            if self._client is not None and self._pid == os.getpid():
                self._client.close()
            self._client = None


def bearer(secret: Secret | None) -> dict[str, str]:
    """``{"Authorization": "Bearer …"}`` for a secret, ``{}`` without one."""
    return {"Authorization": f"Bearer {secret.get()}"} if secret else {}


def as_secret(value: Secret | str | None) -> Secret | None:
    return value if isinstance(value, Secret) or value is None else Secret(value)


def read_bounded(response: httpx.Response, max_bytes: int, too_large: Callable[[], Exception]) -> bytes:
    """The body of a streamed response, at most ``max_bytes``.

    :raises: ``too_large()`` past the limit (the rest is not read); transport errors as httpx raises them.
    """
    parts: list[bytes] = []
    size = 0
    for part in response.iter_bytes():
        size += len(part)
        if size > max_bytes:
            raise too_large()
        parts.append(part)
    return b"".join(parts)


def iter_sse_data(response: httpx.Response) -> Iterator[str]:
    """The ``data`` of each event of a ``text/event-stream`` response (httpx-sse parses the framing)."""
    for event in EventSource(response).iter_sse():
        yield event.data
