"""The one producer pump of every event stream: work runs in a thread, the response iterates what it puts.

A stream's work (a turn, an agentic run, a tool execution, a relayed turn) runs in a daemon thread and hands
its items to :meth:`ThreadPump.put`; the response body iterates the pump. While no item comes for
``heartbeat_seconds`` the iteration yields :data:`HEARTBEAT` (the body sends a comment, which also tells it
that a client went away: the write fails). At ``max_seconds`` it yields :data:`TIMED_OUT` and ends. When the
body stops iterating (the client went away, the server closed the response), :meth:`ThreadPump.stop` is
called: from then on ``put`` returns ``False`` at once, the producer's signal to stop at its next item.

The queue is bounded, so a producer faster than the client waits instead of buffering without limit.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from assistant_bridge.streaming.framing import comment, frame, json_payload

log = logging.getLogger(__name__)
T = TypeVar("T")
DEFAULT_HEARTBEAT_SECONDS = 15.0


@dataclass(frozen=True)
class Heartbeat:
    """What the pump yields when nothing happened for ``heartbeat_seconds``."""


@dataclass(frozen=True)
class TimedOut:
    """What the pump yields, last, when the stream reached ``max_seconds``."""


HEARTBEAT = Heartbeat()
TIMED_OUT = TimedOut()
_END = object()
_PUT_POLL_SECONDS = 0.5


class ThreadPump(Generic[T]):
    """Runs ``produce(put)`` in a daemon thread and yields what it puts (see the module docstring).

    :param produce: the work; it calls ``put(item)`` for each item and stops when ``put`` returns ``False``.
        An exception it lets escape is logged and ends the stream (a producer that must report failures
        in-band catches them and puts its own error item).
    :param max_seconds: the stream's time limit (``None``: none).
    """

    def __init__(
        self,
        produce: Callable[[Callable[[T], bool]], None],
        *,
        thread_name: str,
        heartbeat_seconds: float = DEFAULT_HEARTBEAT_SECONDS,
        max_seconds: float | None = None,
        maxsize: int = 256,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._produce = produce
        self._thread = threading.Thread(target=self._run, name=thread_name, daemon=True)
        self._heartbeat = heartbeat_seconds
        self._max_seconds = max_seconds
        self._clock = clock
        self._queue: queue.Queue[object] = queue.Queue(maxsize=maxsize)
        self._stopped = threading.Event()
        self._pending: list[object] = []

    def put(self, item: T) -> bool:
        """Hand ``item`` to the stream; ``False`` (at once) when the stream has stopped."""
        return self._put(item)

    def _put(self, item: object) -> bool:
        while not self._stopped.is_set():
            try:
                self._queue.put(item, timeout=_PUT_POLL_SECONDS)
                return True
            except queue.Full:
                continue
        return False

    def _run(self) -> None:
        try:
            self._produce(self.put)
        except Exception:  # noqa: BLE001 - the stream ends; the trace goes to the log, never to the client
            log.exception("stream.producer_failed", extra={"stream": self._thread.name})
        finally:
            if not self._put(_END):
                try:
                    self._queue.put_nowait(_END)
                except queue.Full:
                    pass

    def start(self) -> None:
        """Start the producer (iterating starts it too); idempotent."""
        if not self._thread.is_alive() and self._thread.ident is None:
            self._thread.start()

    def wait_first(self, timeout: float) -> T | Heartbeat | None:
        """The first item, waiting at most ``timeout`` seconds (:data:`HEARTBEAT` when none came, ``None``
        when the producer ended without one). Iterating afterwards yields it (or that heartbeat) first."""
        self.start()
        try:
            item = self._queue.get(timeout=timeout)
        except queue.Empty:
            item = HEARTBEAT
        self._pending.append(item)
        return None if item is _END else item  # type: ignore[return-value]

    def stop(self) -> None:
        self._stopped.set()

    def __iter__(self) -> Iterator[T | Heartbeat | TimedOut]:
        self.start()
        deadline = None if self._max_seconds is None else self._clock() + self._max_seconds
        try:
            while True:
                if self._pending:
                    item = self._pending.pop()
                else:
                    wait = self._heartbeat
                    if deadline is not None:
                        wait = min(wait, max(0.0, deadline - self._clock()))
                    try:
                        item = self._queue.get(timeout=wait)
                    except queue.Empty:
                        if deadline is not None and self._clock() >= deadline:
                            yield TIMED_OUT
                            return
                        yield HEARTBEAT
                        continue
                if item is _END:
                    return
                yield item  # type: ignore[misc]
        finally:
            self.stop()


def _internal_error(exc: BaseException) -> dict[str, Any]:
    return {"code": "internal_error", "message": "internal error; see the server log"}


class EventPump:
    """SSE frames of ``produce()`` (an iterator of events), produced in a :class:`ThreadPump`, with heartbeat
    comments while nothing new is ready. When the client goes away the producer is told to stop at its next
    event (a model call already running finishes first); its iterator is closed when the pump ends.

    Here an event is a ``(name, payload)`` pair, framed as ``event: <name>`` with the data ``{name: payload}``
    (the ``/message_stream`` and relay events), and an unexpected exception ends the stream with an
    ``error`` event. A stream with other event shapes (the agentic stream) subclasses this class and
    overrides :meth:`encode`, :meth:`error_frame`, :meth:`heartbeat` and ``thread_name``. The producer must
    not touch Flask's request globals: it runs in a thread of its own.

    :param on_error: builds the ``error`` event payload from an unexpected exception.
    """

    thread_name = "message-stream"

    def __init__(
        self,
        produce: Callable[[], Iterator[Any]],
        heartbeat_seconds: float,
        on_error: Callable[[BaseException], dict[str, Any]] = _internal_error,
    ) -> None:
        self._produce = produce
        self._heartbeat = heartbeat_seconds
        self._on_error = on_error

    def heartbeat(self) -> bytes:
        """What goes out while nothing else does: an SSE comment (nothing, for a framing without comments)."""
        return comment()

    def encode(self, event: Any) -> bytes:
        """The SSE frame of one produced event."""
        name, payload = event
        return frame(name, json_payload({name: payload}))

    def error_frame(self, exc: Exception) -> bytes:
        """The last frame of a stream whose producer failed; called while ``exc`` is handled, so it can log
        the traceback (which never goes to the client)."""
        log.exception("stream.failed", extra={"stream": self.thread_name, "error_type": type(exc).__name__})
        return self.encode(("error", self._on_error(exc)))

    def _run(self, put: Callable[[bytes], bool]) -> None:
        events: Iterator[Any] = iter(())
        try:
            events = self._produce()
            for event in events:
                if not put(self.encode(event)):
                    return
        except Exception as exc:  # the stream is already open: report in-band, never a trace
            put(self.error_frame(exc))
        finally:
            close = getattr(events, "close", None)
            if close is not None:
                close()

    def __iter__(self) -> Iterator[bytes]:
        pump: ThreadPump[bytes] = ThreadPump(self._run, thread_name=self.thread_name, heartbeat_seconds=self._heartbeat)
        for item in pump:
            if isinstance(item, bytes):
                yield item
            else:
                beat = self.heartbeat()
                if beat:
                    yield beat
