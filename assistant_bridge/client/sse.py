"""A small SSE client helper: a raw event-stream parser and the ``_delta_sse`` reassembler (spec §D.7).

Usage with httpx::

    with httpx.stream("POST", url, json=body, headers={"Accept": "text/event-stream"}) as resp:
        for event, data in iter_json_events(resp.iter_bytes()):
            if event == "tool_partial_update":
                print(data["content"], end="")

:func:`iter_json_events` parses frames, decodes their JSON data, and reassembles ``*_delta_sse`` groups
into the original event (recursively, since any event type may be split), so callers only ever see the
original event types. ``final_result`` is reported as ``tool_end`` (the two names mean the same, §D.6).

Reassembly rule: a group (keyed by ``chunk_id``) is complete when it holds ``total_chunks`` distinct
indices; when ``total_chunks`` is missing, when the ``is_last_chunk`` fragment arrives and every index below
it is present. Groups older than ``ttl_seconds`` and groups that would exceed ``max_buffer_bytes`` are
dropped (:attr:`DeltaReassembler.dropped` counts them), so a broken server cannot make a client hoard memory.
"""

from __future__ import annotations

import codecs
import json
import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

DELTA_SUFFIX = "_delta_sse"
ALIASES = {"final_result": "tool_end"}
_EOL = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class SSEEvent:
    """One parsed frame. ``event`` defaults to ``message`` as in the HTML standard."""

    event: str
    data: str
    id: str | None = None
    retry: int | None = None


def parse_sse(chunks: Iterable[bytes | str]) -> Iterator[SSEEvent]:
    """Parse an event stream delivered in arbitrary pieces (bytes are decoded as UTF-8 incrementally).

    Comments and frames without data are skipped; ``\\r\\n``, ``\\r`` and ``\\n`` all end a line.
    """
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    buffer = ""
    event, last_id, retry_ms = "", None, None
    data: list[str] = []
    pending_cr = False

    def lines_of(text: str) -> Iterator[str]:
        nonlocal buffer, pending_cr
        if pending_cr and text.startswith("\n"):
            text = text[1:]
        pending_cr = False
        scan_from = len(buffer)
        buffer += text
        start = 0
        while True:
            match = _EOL.search(buffer, max(start, scan_from))
            if match is None:
                break
            if match.group(0) == "\r" and match.end() == len(buffer):
                pending_cr = True  # a "\r\n" may be split across two chunks
            yield buffer[start : match.start()]
            start = match.end()
        buffer = buffer[start:]

    def handle(line: str) -> SSEEvent | None:
        nonlocal event, data, last_id, retry_ms
        if line == "":
            out = None
            if data:
                out = SSEEvent(event or "message", "\n".join(data), last_id, retry_ms)
            event, data, retry_ms = "", [], None
            return out
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
        elif name == "id" and "\0" not in value:
            last_id = value
        elif name == "retry" and value.isdigit():
            retry_ms = int(value)
        return None

    for chunk in chunks:
        text = decoder.decode(chunk) if isinstance(chunk, bytes) else chunk
        for line in lines_of(text):
            parsed = handle(line)
            if parsed is not None:
                yield parsed
    tail = decoder.decode(b"", final=True)
    for line in lines_of(tail):
        parsed = handle(line)
        if parsed is not None:
            yield parsed
    # a stream that ends without the final blank line: the partial frame is discarded, as browsers do


@dataclass
class _Group:
    original: str
    total: int | None
    started: float
    parts: dict[int, str] = field(default_factory=dict)
    last_index: int | None = None
    size: int = 0


class DeltaReassembler:
    """Buffers ``*_delta_sse`` fragments and returns original events once their group is complete.

    :param ttl_seconds: drop a group that has not completed within this time.
    :param max_buffer_bytes: drop a group (and refuse fragments) beyond this many buffered characters·4.
    :param max_depth: how many times a reassembled event may itself be a delta event.
    """

    def __init__(
        self,
        *,
        ttl_seconds: float = 300.0,
        max_buffer_bytes: int = 64 * 1024 * 1024,
        max_depth: int = 4,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl_seconds = ttl_seconds
        self.max_buffer_bytes = max_buffer_bytes
        self.max_depth = max_depth
        self._clock = clock
        self._groups: dict[str, _Group] = {}
        self.dropped = 0

    @property
    def pending(self) -> int:
        return len(self._groups)

    def _buffered(self) -> int:
        return sum(g.size for g in self._groups.values())

    def _expire(self) -> None:
        now = self._clock()
        for key in [k for k, g in self._groups.items() if now - g.started > self.ttl_seconds]:
            del self._groups[key]
            self.dropped += 1

    def feed(self, event: str, data: Any, _depth: int = 0) -> list[tuple[str, Any]]:
        """Process one decoded event; returns the original events it completes (possibly none).

        Events that are not delta events pass through unchanged (with ``final_result`` renamed).
        :raises ValueError: when a completed group's text is not valid JSON.
        """
        if not event.endswith(DELTA_SUFFIX) or not isinstance(data, dict):
            return [(ALIASES.get(event, event), data)]
        self._expire()
        key = str(data.get("chunk_id", ""))
        index = data.get("chunk_index")
        fragment = data.get("chunk_data")
        if not isinstance(index, int) or isinstance(index, bool) or index < 0 or not isinstance(fragment, str):
            self.dropped += 1
            return []
        original = str(data.get("original_event_type") or event[: -len(DELTA_SUFFIX)])
        total = data.get("total_chunks")
        total = total if isinstance(total, int) and not isinstance(total, bool) and total > 0 else None
        group = self._groups.get(key)
        if group is None:
            group = self._groups[key] = _Group(original=original, total=total, started=self._clock())
        if total is not None:
            group.total = total
        if index not in group.parts:
            cost = len(fragment) * 4
            if self._buffered() + cost > self.max_buffer_bytes:
                del self._groups[key]
                self.dropped += 1
                return []
            group.parts[index] = fragment
            group.size += cost
        if data.get("is_last_chunk") is True:
            group.last_index = index
        if not self._complete(group):
            return []
        del self._groups[key]
        text = "".join(group.parts[i] for i in sorted(group.parts))
        value = json.loads(text)
        if _depth >= self.max_depth:
            return [(ALIASES.get(group.original, group.original), value)]
        return self.feed(group.original, value, _depth + 1)

    @staticmethod
    def _complete(group: _Group) -> bool:
        if group.total is not None:
            return len(group.parts) >= group.total and all(i in group.parts for i in range(group.total))
        if group.last_index is None:
            return False
        return all(i in group.parts for i in range(group.last_index + 1))


def iter_json_events(
    chunks: Iterable[bytes | str], reassembler: DeltaReassembler | None = None
) -> Iterator[tuple[str, Any]]:
    """``(event, data)`` pairs of a stream, JSON-decoded, with delta groups reassembled.

    A frame whose data is not JSON is yielded with the raw string as its data.
    """
    assembler = reassembler or DeltaReassembler()
    for frame in parse_sse(chunks):
        try:
            data: Any = json.loads(frame.data)
        except ValueError:
            data = frame.data
        yield from assembler.feed(frame.event, data)
