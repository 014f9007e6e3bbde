"""The AWS event-stream framing (``application/vnd.amazon.eventstream``), which the AWS SDKs read the event
streams of Bedrock operations in. Pure functions, no I/O.

One message is a 12-byte prelude (total length, headers length, CRC32 of those 8 bytes; big-endian), the
headers, the payload, and the CRC32 of everything before it. A header is its name's length (1 byte), the
name, a type byte (7: string) and the value's length (2 bytes) and bytes. Events carry ``:message-type:
event``, ``:event-type: <member>`` and ``:content-type: application/json``; modelled errors
``:message-type: exception`` and ``:exception-type: <member>``. Limits are the format's: 16 MB a message,
128 KB of headers.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Mapping
from typing import Any

MIMETYPE = "application/vnd.amazon.eventstream"
MAX_MESSAGE_BYTES = 16 * 1024 * 1024
MAX_HEADERS_BYTES = 128 * 1024
_STRING = 7


def _crc(data: bytes, crc: int = 0) -> int:
    return zlib.crc32(data, crc) & 0xFFFFFFFF


def encode_headers(headers: Mapping[str, str]) -> bytes:
    out = bytearray()
    for name, value in headers.items():
        raw_name, raw_value = name.encode("utf-8"), value.encode("utf-8")
        if not 0 < len(raw_name) < 256 or len(raw_value) > 0xFFFF:
            raise ValueError(f"event-stream header {name[:40]!r} is too long")
        out += struct.pack("!B", len(raw_name)) + raw_name + struct.pack("!BH", _STRING, len(raw_value)) + raw_value
    return bytes(out)


def encode_message(headers: Mapping[str, str], payload: bytes) -> bytes:
    """One event-stream message.

    :raises ValueError: over the format's limits.
    """
    raw_headers = encode_headers(headers)
    total = 12 + len(raw_headers) + len(payload) + 4
    if len(raw_headers) > MAX_HEADERS_BYTES or total > MAX_MESSAGE_BYTES:
        raise ValueError("event-stream message over the format's size limits")
    prelude = struct.pack("!II", total, len(raw_headers))
    prelude += struct.pack("!I", _crc(prelude))
    body = prelude + raw_headers + payload
    return body + struct.pack("!I", _crc(body))


def event(member: str, data: Any) -> bytes:
    """An event of the stream's member ``member`` (``traceEvent``, ``result``...) with ``data`` as its JSON."""
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return encode_message(
        {":event-type": member, ":message-type": "event", ":content-type": "application/json"}, payload
    )


def exception(member: str, message: str, **fields: Any) -> bytes:
    """A modelled error of the stream (``validationException``...): the SDKs raise it as that exception."""
    payload = json.dumps({"message": message, **fields}, ensure_ascii=False).encode("utf-8")
    return encode_message(
        {":exception-type": member, ":message-type": "exception", ":content-type": "application/json"}, payload
    )
