"""Server-Sent Events: frame formatting, heartbeats, response headers. Reusable by every streaming route.

Framing (WHATWG HTML §9.2): ``event: <name>\\n`` + ``id: <id>\\n`` (optional) + one ``data: <line>\\n`` per
line of the payload + a blank line. Comments (``: keep-alive``) keep idle connections open through proxies
and let the server notice a client that went away (a write to a closed socket fails). Every SSE response
carries ``Cache-Control: no-cache`` and ``X-Accel-Buffering: no`` so that nginx-style proxies do not buffer.

An event whose JSON data exceeds the configured size is split into ``<event>_delta_sse`` events
(:mod:`assistant_bridge.tools.delta_sse`); :func:`encode_event` does that transparently. Only the last frame
of a split event carries the ``id`` so that a client resuming with ``Last-Event-ID`` never resumes in the
middle of a group.
"""

from __future__ import annotations

import queue
import re
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from flask import Response, current_app, g

from assistant_bridge.errors import ServiceBusy

from assistant_bridge.tools.delta_sse import dumps, escape_surrogates, split_event

MIMETYPE = "text/event-stream"
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
DEFAULT_HEARTBEAT_SECONDS = 15.0
_NAME = re.compile(r"^[A-Za-z0-9_.:\-]{1,128}$")
_LINES = re.compile(r"\r\n|\r|\n")


def frame(event: str, payload: str, *, id: str | None = None) -> bytes:
    """One SSE frame. ``payload`` is the data text (JSON text for every event of this service).

    :raises ValueError: for an event name or id that could break the framing.
    """
    if not _NAME.match(event):
        raise ValueError(f"invalid SSE event name {event[:40]!r}")
    parts = [f"event: {event}\n"]
    if id is not None:
        if _LINES.search(id) or "\0" in id:
            raise ValueError("an SSE id may not contain line breaks or NUL")
        parts.append(f"id: {id}\n")
    for line in _LINES.split(escape_surrogates(payload)):
        parts.append(f"data: {line}\n")
    parts.append("\n")
    return "".join(parts).encode("utf-8")


def comment(text: str = "keep-alive") -> bytes:
    """An SSE comment line (ignored by clients); used as the heartbeat.

    One line, with no blank line after it: a blank line dispatches an event, and a parser that keeps the
    last event id (as the spec says, and httpx-sse does) would then emit an empty ``message`` event at every
    heartbeat of a stream that carries ``id:`` lines. The next event's own lines follow it as usual.
    """
    return f": {_LINES.sub(' ', text)}\n".encode("utf-8")


def retry(milliseconds: int) -> bytes:
    """Tell ``EventSource`` clients how long to wait before reconnecting."""
    return f"retry: {int(milliseconds)}\n\n".encode("ascii")


def encode_event(event: str, data: Any, *, max_bytes: int, id: str | None = None) -> bytes:
    """All the frames of one logical event, split into ``_delta_sse`` frames when its data is too large.

    :param data: a JSON-serialisable object (or its JSON text).
    :param max_bytes: the largest JSON data one frame may carry.
    """
    pieces = split_event(event, data, max_bytes)
    last = len(pieces) - 1
    return b"".join(frame(p.event, p.payload, id=id if i == last else None) for i, p in enumerate(pieces))


@dataclass(frozen=True)
class Heartbeat:
    """Marker a source yields (or :func:`pump` produces) when nothing happened for a while."""


HEARTBEAT = Heartbeat()


def pump(
    source: "queue.Queue[Any]",
    *,
    heartbeat_seconds: float = DEFAULT_HEARTBEAT_SECONDS,
    is_last: Callable[[Any], bool],
    deadline: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[Any]:
    """Items of ``source`` as they arrive, with :data:`HEARTBEAT` whenever none came for ``heartbeat_seconds``.

    Stops after the item for which ``is_last`` is true, or at ``deadline`` (a ``clock()`` value; the caller
    then sends its own timeout event).
    """
    while True:
        wait = heartbeat_seconds
        if deadline is not None:
            wait = min(wait, max(0.0, deadline - clock()))
        try:
            item = source.get(timeout=wait)
        except queue.Empty:
            if deadline is not None and clock() >= deadline:
                return
            yield HEARTBEAT
            continue
        yield item
        if is_last(item):
            return


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
            raise ServiceBusy(f"this worker already serves {self.size} event streams; try again shortly",
                              retry_after=self.RETRY_AFTER_SECONDS)  # fmt: skip
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

    def __iter__(self) -> "_Guarded":
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


def json_payload(data: Any) -> str:
    """The JSON text this module writes for ``data`` (compact, UTF-8, lone surrogates escaped)."""
    return dumps(data)
