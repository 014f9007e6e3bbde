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
the turn must not touch Flask's request globals. Framing and headers come from :mod:`assistant_bridge.web.sse`.
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


class EventPump:
    """Runs ``produce`` (an iterator of ``(name, payload)``) in a thread and yields SSE frames, with heartbeat
    comments while nothing new is ready. When the client goes away the producer is told to stop at its next
    event (a model call already running finishes first).

    :param on_error: builds the ``error`` event payload from an unexpected exception.
    """

    def __init__(self, produce: Callable[[], Iterator[tuple[str, Any]]], heartbeat_seconds: float,
                 on_error: Callable[[BaseException], dict[str, Any]]) -> None:  # fmt: skip
        self._produce = produce
        self._heartbeat = heartbeat_seconds
        self._on_error = on_error
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=256)
        self._stop = threading.Event()

    def _run(self) -> None:
        try:
            for name, payload in self._produce():
                if not self._put(format_event(name, payload)):
                    return
        except Exception as exc:  # the stream is already open: report in-band, never a trace
            log.exception("message_stream.failed type=%s", type(exc).__name__)
            self._put(format_event("error", self._on_error(exc)))
        finally:
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
        thread = threading.Thread(target=self._run, name="message-stream", daemon=True)
        thread.start()
        try:
            for item in pump(self._queue, heartbeat_seconds=self._heartbeat, is_last=lambda i: i is _END):
                if item is HEARTBEAT:
                    yield comment()
                elif item is not _END:
                    yield item
        finally:
            self._stop.set()
