"""Event-stream responses in Flask: the worker's stream budget and the streamed response that holds a slot.
Framing, heartbeats and the producer pump are in :mod:`assistant_bridge.streaming`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

from flask import Response, current_app, g

from assistant_bridge.errors import ServiceBusy
from assistant_bridge.streaming.framing import MIMETYPE, SSE_HEADERS


class StreamBudget:
    """How many event streams one worker serves at once (``server.max_streams``): each holds a gunicorn
    thread for its whole length, and without a budget a few long streams left no thread for ``/healthz`` or
    a search. A stream takes a slot before it starts (:func:`stream_slot`) and gives it back when the
    server closes the response, however it ends."""

    RETRY_AFTER_SECONDS = 5

    def __init__(self, size: int) -> None:
        self.size = max(1, size)
        self._slots = threading.BoundedSemaphore(self.size)

    def take(self) -> Callable[[], None]:
        """:raises ServiceBusy: when every slot is taken. Returns the release function (idempotent)."""
        if not self._slots.acquire(blocking=False):
            raise ServiceBusy(
                f"this worker already serves {self.size} event streams; try again shortly",
                retry_after=self.RETRY_AFTER_SECONDS,
            )
        released = threading.Event()

        def release() -> None:
            if not released.is_set():
                released.set()
                self._slots.release()

        return release


def stream_slot() -> Callable[[], None]:
    """Take this request's stream slot (once per request; a route may reserve it before it creates anything
    for the stream, and the response then uses that one)."""
    release: Callable[[], None] | None = g.get("stream_release")
    if release is None:
        budget: StreamBudget = current_app.extensions["stream_budget"]
        release = g.stream_release = budget.take()
    return release


class _Guarded:
    """A response body that gives its stream slot back when it ends or when the server closes it (PEP 3333
    calls ``close`` on every response iterable, even one that never started, which a generator's
    ``finally`` would miss)."""

    def __init__(self, body: Iterator[bytes], release: Callable[[], None]) -> None:
        self._body = iter(body)
        self._release = release

    def __iter__(self) -> _Guarded:
        return self

    def __next__(self) -> bytes:
        try:
            return next(self._body)
        except BaseException:  # the end of the stream (StopIteration) or its failure: the slot is free again
            self._release()
            raise

    def close(self) -> None:
        try:
            close = getattr(self._body, "close", None)
            if close is not None:
                close()
        finally:
            self._release()

    def __del__(self) -> None:  # a body dropped without close (a test client, a broken server): no lost slot
        self._release()


def streaming_response(body: Iterator[bytes], mimetype: str, *, status: int = 200) -> Response:
    """A streamed response that holds one of the worker's stream slots while it lasts, with the
    anti-buffering headers."""
    resp = Response(_Guarded(body, stream_slot()), status=status, mimetype=mimetype, direct_passthrough=True)
    resp.headers.update(SSE_HEADERS)
    return resp


def sse_response(body: Iterator[bytes], *, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """A streaming ``text/event-stream`` response with the anti-buffering headers, in a stream slot.

    ``body`` should be a generator: when the client goes away the server closes it, which raises
    ``GeneratorExit`` at its current ``yield`` (the place to stop any work done for the client).

    :raises ServiceBusy: when the worker serves ``server.max_streams`` streams already.
    """
    resp = streaming_response(body, MIMETYPE, status=status)
    resp.headers["Content-Type"] = f"{MIMETYPE}; charset=utf-8"
    if headers:
        resp.headers.update(headers)
    return resp
