"""HTTP to an assistant's ``/message`` API (watsonx Assistant v2 shape): stateless and session messages,
their ``message_stream`` variants, and session creation.

The URL given is any of the assistant's message URLs (``.../environments/{env}/message``,
``.../message_stream``, ``.../sessions/{sid}/message``) or its environment base; the others are derived
from it, and its query string (``version``) is kept. Connection errors (refused, connect timeout, a
connection closed before any answer) are retried with a short backoff; an HTTP error answer or a read
timeout is not, since the assistant may already have acted on the message.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import httpx

from assistant_bridge.client.sse import iter_json_events
from assistant_bridge.http import CONNECT_ERRORS, LazyClient, RetryPolicy, read_bounded
from assistant_bridge.relay.auth import Credentials, NoAuth
from assistant_bridge.relay.errors import (
    AssistantHTTPError,
    AssistantUnavailable,
    MalformedAssistantResponse,
    SessionNotFound,
)
from assistant_bridge.relay.wire import body_bytes, check_response

log = logging.getLogger(__name__)
DEFAULT_VERSION = "2024-08-25"
MAX_RESPONSE_BYTES = 10_000_000
STREAM_EVENTS = ("partial_item", "complete_item", "final_response", "error")
_TAIL = re.compile(r"(/sessions/[^/]+)?/(message|message_stream)/?$")


def base_url(url: str) -> httpx.URL:
    """The environment base of a message URL, with its query string."""
    parsed = httpx.URL(url)
    if parsed.scheme not in ("http", "https"):
        raise ValueError("the assistant URL must be http or https")
    path = _TAIL.sub("", parsed.path).rstrip("/")
    return parsed.copy_with(path=path)


class AssistantClient:
    """:param url: one of the assistant's message URLs (see the module docstring).
    :param auth: credentials for every request (an :class:`~assistant_bridge.relay.auth.IAMToken` refreshes
        itself); per-call ``headers`` are added on top.
    :param version: the ``version`` query parameter, unless the URL has one.
    """

    def __init__(
        self,
        url: str,
        *,
        auth: Credentials | None = None,
        version: str = DEFAULT_VERSION,
        timeout: float = 60.0,
        connect_timeout: float = 5.0,
        retries: int = 2,
        backoff: float = 0.2,
        transport: httpx.BaseTransport | None = None,
        verify_tls: bool = True,
        sleep: Callable[[float], None] = time.sleep,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        self.base = base_url(url)
        if "version" not in self.base.params and version:
            self.base = self.base.copy_merge_params({"version": version})
        self.auth = auth or NoAuth()
        self._retries = retries
        self._backoff = backoff
        self._sleep = sleep
        self._max = max_response_bytes
        self._http = LazyClient(
            timeout=timeout, connect_timeout=connect_timeout, transport=transport, verify_tls=verify_tls
        )

    def url(self, *, session_id: str | None = None, stream: bool = False) -> str:
        path = self.base.path + (f"/sessions/{session_id}" if session_id else "")
        path += "/message_stream" if stream else "/message"
        return str(self.base.copy_with(path=path))

    def close(self) -> None:
        self._http.close()

    # -- sending ----------------------------------------------------------------------------------
    def _send(
        self, url: str, content: bytes | None, headers: Mapping[str, str] | None, accept: str, method: str = "POST"
    ) -> httpx.Response:
        """The response with its body not read yet; the caller closes it."""
        merged = {"Accept": accept, **self.auth.headers(), **(headers or {})}
        if content is not None:
            merged["Content-Type"] = "application/json"
        client = self._http.get()
        policy = RetryPolicy(
            max_retries=self._retries, backoff=self._backoff, retry_on=CONNECT_ERRORS, sleep=self._sleep, name="relay"
        )
        attempts = 0

        def attempt() -> httpx.Response:
            nonlocal attempts
            attempts += 1
            return client.send(client.build_request(method, url, content=content, headers=merged), stream=True)

        try:
            response: httpx.Response = policy.call(attempt)
            return response
        except CONNECT_ERRORS as exc:
            raise AssistantUnavailable(
                f"the assistant could not be reached ({type(exc).__name__}) after {attempts} attempts",
                attempts=attempts,
            ) from None
        except httpx.TimeoutException:
            raise AssistantUnavailable("the assistant did not answer in time") from None
        except httpx.HTTPError as exc:
            raise AssistantUnavailable(f"the request to the assistant failed ({type(exc).__name__})") from None

    def _read(self, resp: httpx.Response) -> bytes:
        too_large = f"the assistant's response is over {self._max} bytes"
        try:
            return read_bounded(resp, self._max, lambda: MalformedAssistantResponse(too_large))
        except httpx.TimeoutException:
            raise AssistantUnavailable("the assistant stopped answering midway (read timeout)") from None
        except httpx.HTTPError as exc:
            raise AssistantUnavailable(f"the assistant's answer broke off ({type(exc).__name__})") from None

    @staticmethod
    def _json(data: bytes) -> Any:
        try:
            return json.loads(data)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise MalformedAssistantResponse("the assistant answered with something that is not JSON") from None

    def _raise_for_status(
        self, resp: httpx.Response, expected: tuple[int, ...] = (200,), *, session: bool = False
    ) -> None:
        """:param session: the request was a session message: a 404 that names the session is
        :class:`SessionNotFound` (the caller's stale id), any other error an :class:`AssistantHTTPError`."""
        if resp.status_code in expected:
            return
        body = self._read(resp) if resp.status_code != 204 else b""
        details: dict[str, Any] = {"status": resp.status_code}
        message = f"the assistant answered HTTP {resp.status_code}"
        try:
            err = json.loads(body).get("error")
        except (ValueError, AttributeError):
            err = None
        if isinstance(err, dict):
            if isinstance(err.get("code"), str):
                details["assistant_code"] = err["code"][:64]
            if isinstance(err.get("message"), str):
                message += f": {err['message'][:200]}"
        log.warning(
            "relay.assistant_http_error", extra={"status": resp.status_code, "code": details.get("assistant_code")}
        )
        if session and resp.status_code == 404 and _names_session(err):
            extra = {"assistant_code": details["assistant_code"]} if "assistant_code" in details else {}
            raise SessionNotFound("unknown or expired session; create a new one", resource="session", **extra)
        invalidate = getattr(self.auth, "invalidate", None)
        if resp.status_code == 401 and callable(invalidate):
            invalidate()  # a revoked IAM token: the next turn fetches a new one (this one is not retried)
        raise AssistantHTTPError(message, **details)

    def post(
        self, body: Mapping[str, Any], *, session_id: str | None = None, headers: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """Send one message; returns the checked response body.

        :raises AssistantUnavailable, AssistantHTTPError, MalformedAssistantResponse:
        :raises SessionNotFound: the assistant does not know ``session_id`` (unknown or expired).
        """
        resp = self._send(self.url(session_id=session_id), body_bytes(body), headers, "application/json")
        try:
            self._raise_for_status(resp, session=session_id is not None)
            return check_response(self._json(self._read(resp)))
        finally:
            resp.close()

    def stream(
        self, body: Mapping[str, Any], *, session_id: str | None = None, headers: Mapping[str, str] | None = None
    ) -> Iterator[tuple[str, Any]]:
        """Send one message to ``message_stream``; yields ``(event, payload)`` for ``partial_item``,
        ``complete_item``, ``final_response`` (checked) and ``error``. An assistant that answers plain JSON
        instead of an event stream yields one ``final_response``.

        :raises MalformedAssistantResponse: an event whose data is not JSON, or a stream that ends without
            ``final_response`` or ``error``.
        :raises SessionNotFound: as :meth:`post`, before any event.
        """
        resp = self._send(self.url(session_id=session_id, stream=True), body_bytes(body), headers, "text/event-stream")
        try:
            self._raise_for_status(resp, session=session_id is not None)
            ctype = resp.headers.get("content-type", "")
            if not ctype.startswith("text/event-stream"):
                yield "final_response", check_response(self._json(self._read(resp)))
                return
            ended = False
            try:
                for event, data in iter_json_events(resp.iter_bytes()):
                    name, payload = _event(event, data)
                    if name is None:
                        log.info("relay.stream_event_ignored", extra={"event": event[:40]})
                        continue
                    if name == "final_response":
                        payload = check_response(payload)
                    ended = name in ("final_response", "error")
                    yield name, payload
                    if ended:
                        return
            except httpx.TimeoutException:
                raise AssistantUnavailable("the assistant's event stream stalled (read timeout)") from None
            except httpx.HTTPError as exc:
                raise AssistantUnavailable(f"the assistant's event stream broke off ({type(exc).__name__})") from None
            except ValueError:
                raise MalformedAssistantResponse("the assistant's event stream has a broken split event") from None
            if not ended:
                raise MalformedAssistantResponse("the assistant's event stream ended without a final_response")
        finally:
            resp.close()

    def create_session(self, headers: Mapping[str, str] | None = None) -> str:
        """``POST .../sessions``; returns the new session id."""
        url = str(self.base.copy_with(path=self.base.path + "/sessions"))
        resp = self._send(url, b"{}", headers, "application/json")
        try:
            self._raise_for_status(resp, (200, 201))
            body = self._json(self._read(resp))
        finally:
            resp.close()
        sid = body.get("session_id") if isinstance(body, dict) else None
        if not isinstance(sid, str) or not sid:
            raise MalformedAssistantResponse("the assistant's session answer has no session_id")
        return sid


def _names_session(err: Any) -> bool:
    """Whether the ``error`` of a 404 body is about the session rather than the assistant or environment:
    this service says ``details.resource == "session"``, watsonx Assistant says ``"Invalid Session"``."""
    if isinstance(err, dict):
        details = err.get("details")
        if isinstance(details, dict) and "resource" in details:
            return bool(details["resource"] == "session")
        err = err.get("message")
    return isinstance(err, str) and "session" in err.lower()


def _event(event: str, data: Any) -> tuple[str | None, Any]:
    """Name and payload of one decoded frame. The data object has one key, the event's name (watsonx does
    not document the ``event:`` field, so the key decides)."""
    if isinstance(data, str):
        raise MalformedAssistantResponse("an event of the assistant's stream does not carry JSON data")
    if isinstance(data, dict) and len(data) == 1:
        (key,) = data
        if key in STREAM_EVENTS:
            return key, data[key]
    if event in STREAM_EVENTS and isinstance(data, dict) and event in data:
        return event, data[event]
    if event in STREAM_EVENTS:
        raise MalformedAssistantResponse(f"a {event} event of the assistant's stream has the wrong shape")
    return None, data
