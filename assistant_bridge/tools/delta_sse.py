"""Splitting one large SSE event into ``<event>_delta_sse`` events (spec §D.7). Pure; no I/O.

An event whose JSON data is larger than ``max_bytes`` (UTF-8) is sent as a group of events named
``<original_event_type>_delta_sse`` with the data::

    {"chunk_id": "<uuid of the group>", "chunk_index": 0, "total_chunks": 3,
     "original_event_type": "tool_end", "chunk_data": "<fragment of the JSON text>", "is_last_chunk": false}

Invariants, checked by property tests:

* joining the ``chunk_data`` of a group in ``chunk_index`` order gives back the original JSON text exactly;
* the JSON data of every event returned is at most ``max_bytes`` bytes (for any ``max_bytes`` at least
  :data:`MIN_EVENT_BYTES`);
* a fragment never ends between the two halves of a UTF-16 surrogate pair, so clients whose strings are
  UTF-16 (JavaScript) never see half a character.

``chunk_data`` is a fragment of the *text*, not of bytes and not base64: clients concatenate the strings and
parse the result as JSON.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from typing import Any

DELTA_SUFFIX = "_delta_sse"
MIN_EVENT_BYTES = 512  # room for the envelope plus a useful fragment
_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPE_2 = {'"', "\\", "\n", "\r", "\t", "\b", "\f"}


def dumps(data: Any) -> str:
    """Compact JSON text of ``data`` as sent on the wire: non-ASCII kept as is, lone surrogates escaped.

    ``json.dumps(..., ensure_ascii=False)`` would leave a lone surrogate raw, which cannot be encoded as
    UTF-8; it is written as a ``\\udXXX`` escape instead, which every JSON parser accepts.
    """
    return escape_surrogates(json.dumps(data, ensure_ascii=False, separators=(",", ":")))


def escape_surrogates(text: str) -> str:
    """Replace lone surrogate code points in JSON text by ``\\udXXX`` escapes (valid JSON, valid UTF-8)."""
    if _SURROGATE.search(text):
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)
    return text


def wire_size(text: str) -> int:
    """UTF-8 size of ``text`` once it is written inside a JSON string by :func:`dumps` (without quotes)."""
    size = 0
    for ch in text:
        code = ord(ch)
        if ch in _ESCAPE_2:
            size += 2
        elif code < 0x20 or 0xD800 <= code <= 0xDFFF:
            size += 6
        elif code < 0x80:
            size += 1
        elif code < 0x800:
            size += 2
        elif code < 0x10000:
            size += 3
        else:
            size += 4
    return size


@dataclass(frozen=True)
class WireEvent:
    """One event as it goes on the wire: its name and its data as JSON text (valid UTF-8)."""

    event: str
    payload: str


def _envelope(chunk_id: str, index: int, total: int, original: str, fragment: str) -> dict[str, Any]:
    return {
        "chunk_id": chunk_id,
        "chunk_index": index,
        "total_chunks": total,
        "original_event_type": original,
        "chunk_data": fragment,
        "is_last_chunk": index == total - 1,
    }


def _fragments(text: str, budget: int) -> list[str]:
    """Cut ``text`` into pieces whose escaped size is at most ``budget``, never inside a surrogate pair."""
    pieces: list[str] = []
    start = 0
    size = 0
    i = 0
    n = len(text)
    while i < n:
        step = 2 if ("\ud800" <= text[i] <= "\udbff" and i + 1 < n and "\udc00" <= text[i + 1] <= "\udfff") else 1
        cost = wire_size(text[i : i + step])
        if size + cost > budget and i > start:
            pieces.append(text[start:i])
            start, size = i, 0
        size += cost
        i += step
    if start < n or not pieces:
        pieces.append(text[start:])
    return pieces


def split_event(event: str, data: Any, max_bytes: int, *, chunk_id: str | None = None) -> list[WireEvent]:
    """The events to send for ``event`` with ``data``: the event itself when it fits, else a delta group.

    :param data: a JSON-serialisable object.
    :param max_bytes: the largest JSON data (UTF-8 bytes) one event may carry.
    :param chunk_id: the group id (a random UUID by default; tests pass a fixed one).
    :raises ValueError: when ``max_bytes`` is below :data:`MIN_EVENT_BYTES`.
    """
    return split_payload(event, dumps(data), max_bytes, chunk_id=chunk_id)


def split_payload(event: str, text: str, max_bytes: int, *, chunk_id: str | None = None) -> list[WireEvent]:
    """:func:`split_event` for data that is already JSON text."""
    if max_bytes < MIN_EVENT_BYTES:
        raise ValueError(f"max_bytes must be at least {MIN_EVENT_BYTES}")
    text = escape_surrogates(text)
    if len(text.encode("utf-8")) <= max_bytes:
        return [WireEvent(event, text)]
    group = chunk_id or str(uuid.uuid4())
    # envelope overhead, with index and total as wide as they can get (one fragment holds >= 1 character)
    width = len(str(len(text)))
    overhead = len(dumps(_envelope(group, 10**width - 1, 10**width - 1, event, "")).encode())
    budget = max_bytes - overhead
    if budget < 12:  # a fragment must hold the widest character escape
        raise ValueError("max_bytes is too small for the event type name")
    pieces = _fragments(text, budget)
    total = len(pieces)
    return [WireEvent(event + DELTA_SUFFIX, dumps(_envelope(group, i, total, event, p))) for i, p in enumerate(pieces)]
