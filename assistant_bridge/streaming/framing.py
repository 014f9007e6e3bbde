"""Server-Sent Events framing: frames, comments (heartbeats), the response headers. No I/O, no Flask.

Framing (WHATWG HTML §9.2): ``event: <name>\\n`` + ``id: <id>\\n`` (optional) + one ``data: <line>\\n`` per
line of the payload + a blank line. Comments (``: keep-alive``) keep idle connections open through proxies
and let the server notice a client that went away (a write to a closed socket fails). Every SSE response
carries ``Cache-Control: no-cache`` and ``X-Accel-Buffering: no`` so that nginx-style proxies do not buffer.

An event whose JSON data exceeds the configured size is split into ``<event>_delta_sse`` events
(:mod:`assistant_bridge.streaming.delta`); :func:`encode_event` does that transparently. Only the last frame
of a split event carries the ``id`` so that a client resuming with ``Last-Event-ID`` never resumes in the
middle of a group.
"""

from __future__ import annotations

import re
from typing import Any

from assistant_bridge.streaming.delta import dumps, escape_surrogates, split_payload

MIMETYPE = "text/event-stream"
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
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
    return f": {_LINES.sub(' ', text)}\n".encode()


def retry(milliseconds: int) -> bytes:
    """Tell ``EventSource`` clients how long to wait before reconnecting."""
    return f"retry: {int(milliseconds)}\n\n".encode("ascii")


def encode_event(event: str, data: Any, *, max_bytes: int, id: str | None = None) -> bytes:
    """All the frames of one logical event, split into ``_delta_sse`` frames when its data is too large.

    :param data: a JSON-serialisable object.
    :param max_bytes: the largest JSON data one frame may carry.
    """
    return encode_payload(event, dumps(data), max_bytes=max_bytes, id=id)


def encode_payload(event: str, payload: str, *, max_bytes: int, id: str | None = None) -> bytes:
    """:func:`encode_event` for data that is already JSON text. Only the last frame of a split event carries
    the ``id``."""
    pieces = split_payload(event, payload, max_bytes)
    last = len(pieces) - 1
    return b"".join(frame(p.event, p.payload, id=id if i == last else None) for i, p in enumerate(pieces))


def json_payload(data: Any) -> str:
    """The JSON text this module writes for ``data`` (compact, UTF-8, lone surrogates escaped)."""
    return dumps(data)
