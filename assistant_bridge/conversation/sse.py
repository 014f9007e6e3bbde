"""Server-sent events of ``.../message_stream`` (spec §A.4 "Streaming").

Each event is ``event: <name>`` then ``data: <json>`` then a blank line; the data object has exactly one key,
the event's name:

* ``partial_item``: ``{"partial_item": {"response_type", "text": <delta>, "streaming_metadata": {"id": n}}}``
* ``complete_item``: ``{"complete_item": {<the full generic item>, "streaming_metadata": {"id": n}}}``
* ``final_response``: ``{"final_response": <the body /message would have returned>}``
* ``error`` (only after an unexpected failure, the stream then ends):
  ``{"error": {"code": "internal_error", "message": ...}}``

While a turn is still working, a comment line (``: keep-alive``) goes out every ``heartbeat_seconds`` so
proxies keep the connection open. :class:`EventPump` runs the turn in a thread of its own for that reason;
the turn must not touch Flask's request globals. The agentic retrieval stream reuses :class:`EventPump` with
its own event shapes. Framing and headers come from :mod:`assistant_bridge.web.sse`.
"""

from __future__ import annotations

import logging
import queue
import threading
from typing import Any, Callable, Iterator

from assistant_bridge.web.sse import HEARTBEAT, comment, frame, json_payload, pump

log = logging.getLogger(__name__)
EVENT_NAMES = ("partial_item", "complete_item", "final_response", "error")
_END = object()


def format_event(name: str, payload: Any) -> bytes:
    """One SSE event whose data is ``{name: payload}``."""
    return frame(name, json_payload({name: payload}))


def _internal_error(exc: BaseException) -> dict[str, Any]:
    return {"code": "internal_error", "message": "internal error; see the server log"}


class EventPump:
    """Runs ``produce`` (an iterator of events) in a thread and yields SSE frames, with heartbeat comments
    while nothing new is ready. When the client goes away the producer is told to stop at its next event (a
    model call already running finishes first); its iterator is closed when the pump ends.

    Here an event is a ``(name, payload)`` pair framed by :func:`format_event`, and an unexpected exception
    ends the stream with an ``error`` event. A stream with other event shapes subclasses this class and
    overrides :meth:`encode` and :meth:`error_frame` (and ``thread_name``).

    :param on_error: builds the ``error`` event payload from an unexpected exception.
    """

    thread_name = "message-stream"

    def __init__(self, produce: Callable[[], Iterator[Any]], heartbeat_seconds: float,
                 on_error: Callable[[BaseException], dict[str, Any]] = _internal_error) -> None:  # fmt: skip
        self._produce = produce
        self._heartbeat = heartbeat_seconds
        self._on_error = on_error
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=256)
        self._stop = threading.Event()

    def heartbeat(self) -> bytes:
        """What goes out while nothing else does: an SSE comment (nothing, for a framing without comments)."""
        return comment()

    def encode(self, event: Any) -> bytes:
        """The SSE frame of one produced event."""
        name, payload = event
        return format_event(name, payload)

    def error_frame(self, exc: Exception) -> bytes:
        """The last frame of a stream whose producer failed; called while ``exc`` is handled, so it can log
        the traceback (which never goes to the client)."""
        log.exception("message_stream.failed type=%s", type(exc).__name__)
        return format_event("error", self._on_error(exc))

    def _run(self) -> None:
        events: Iterator[Any] = iter(())
        try:
            events = self._produce()
            for event in events:
                if not self._put(self.encode(event)):
                    return
        except Exception as exc:  # the stream is already open: report in-band, never a trace
            self._put(self.error_frame(exc))
        finally:
            close = getattr(events, "close", None)
            if close is not None:
                close()
            self._put(_END)

    def _put(self, item: Any) -> bool:
        """Queue ``item`` unless the client went away; ``False`` when it did."""
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.5)
                return True
            except queue.Full:
                continue
        return False

    def __iter__(self) -> Iterator[bytes]:
        thread = threading.Thread(target=self._run, name=self.thread_name, daemon=True)
        thread.start()
        try:
            for item in pump(self._queue, heartbeat_seconds=self._heartbeat, is_last=lambda i: i is _END):
                if item is HEARTBEAT:
                    beat = self.heartbeat()
                    if beat:
                        yield beat
                elif item is not _END:
                    yield item
        finally:
            self._stop.set()
