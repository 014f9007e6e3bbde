"""Splitting one large SSE event into ``<event>_delta_sse`` events (spec §D.7). Pure; no I/O.

An event whose JSON data is larger than ``max_bytes`` (UTF-8) is sent as a group of events named
``<original_event_type>_delta_sse`` with the data::

    {"chunk_id": "<uuid of the group>", "chunk_index": 0, "total_chunks": 3,
     "original_event_type": "tool_end", "chunk_data": "<fragment of the JSON text>", "is_last_chunk": false}

Invariants, checked by property tests:

* joining the ``chunk_data`` of a group in ``chunk_index`` order gives back the original JSON text exactly;
* the JSON data of every event returned is at most ``max_bytes`` bytes (for any ``max_bytes`` at least
  :data:`MIN_EVENT_BYTES`);
* a fragment never splits a character, nor the two halves of a UTF-16 surrogate pair, so clients whose
  strings are UTF-16 (JavaScript) never see half a character.

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
    try:
        text.encode("utf-8")  # C-speed check: only lone surrogates fail
    except UnicodeEncodeError:
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


def _escape_start(escaped: bytes, cut: int) -> int:
    """``cut`` moved back to the start of the JSON escape sequence it falls inside, if any."""
    for back in range(1, 6):
        p = cut - back
        if p < 0:
            break
        if escaped[p] != 0x5C:  # backslash
            continue
        run = 0
        while p - run >= 0 and escaped[p - run] == 0x5C:
            run += 1
        if run % 2 == 0:
            return cut  # the nearest backslash ends a "\\" escape before the cut
        length = 6 if escaped[p + 1 : p + 2] == b"u" else 2
        return p if p + length > cut else cut
    return cut


def _fragments(text: str, budget: int) -> list[str]:
    """Cut ``text`` into pieces whose escaped size (inside a JSON string) is at most ``budget`` bytes.

    The text is escaped once; each cut is moved back to a UTF-8 character boundary and out of any escape
    sequence, and the escaped piece is decoded back. A cut therefore never splits a code point, and since
    the text holds no raw surrogates (:func:`escape_surrogates`), never a UTF-16 surrogate pair either.
    Linear time, C-speed encoding.
    """
    escaped = dumps(text)[1:-1].encode("utf-8")
    pieces: list[str] = []
    start, n = 0, len(escaped)
    while start < n:
        cut = min(n, start + budget)
        if cut < n:
            while cut > start and (escaped[cut] & 0xC0) == 0x80:  # a UTF-8 continuation byte
                cut -= 1
            cut = _escape_start(escaped, cut)
            if cut <= start:  # unreachable with budget >= 12 (an escape or a character is at most 6 bytes)
                raise ValueError("fragment budget too small")
        pieces.append(json.loads(b'"' + escaped[start:cut] + b'"'))
        start = cut
    return pieces or [text]


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
