"""WebVTT and SubRip (SRT) cue files.

Both formats are blocks separated by blank lines, each with a timing line ``start --> end``; VTT adds a
``WEBVTT`` header and ``NOTE``/``STYLE``/``REGION`` blocks, SRT adds a numeric index line. One parser
reads both. Each cue becomes one line of text and one :class:`Segment` with its start and end in seconds.
Voice tags (``<v Alice>``) become an ``Alice:`` prefix; other tags and SRT ``{\\an8}`` overrides are dropped.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from assistant_bridge.core.document import Segment
from assistant_bridge.errors import DocumentParseError
from assistant_bridge.ingest.text import collapse_inline_space

_TIMESTAMP = r"(?:\d+:)?\d{1,2}:\d{2}(?:[.,]\d{1,3})?"
_TIMING = re.compile(rf"^\s*({_TIMESTAMP})\s*-->\s*({_TIMESTAMP})(?:\s.*)?$")
_VOICE = re.compile(r"^\s*<v(?:\.[\w.-]+)?\s+([^>]+)>")
_TAG = re.compile(r"<[^>]*>")
_SRT_OVERRIDE = re.compile(r"\{\\[^}]*\}")
_HEADER = re.compile(r"^\ufeff?WEBVTT(?:[ \t]+-?[ \t]*(.*))?$")
_SKIPPED_BLOCKS = ("NOTE", "STYLE", "REGION")


@dataclass(frozen=True)
class Transcript:
    text: str
    segments: tuple[Segment, ...]
    title: str | None


def parse_timestamp(value: str) -> float:
    """``"01:02:03.500"``, ``"02:03,5"`` or ``"02:03"`` to seconds."""
    clock, _, fraction = value.replace(",", ".").partition(".")
    fields = [int(part) for part in clock.split(":")]
    seconds = 0
    for field in fields:
        seconds = seconds * 60 + field
    return round(seconds + (float("0." + fraction) if fraction else 0.0), 3)


def _cue_text(lines: list[str]) -> str:
    pieces = []
    for line in lines:
        voice = _VOICE.match(line)
        speaker = voice.group(1).strip() if voice else None
        line = html.unescape(_TAG.sub("", _SRT_OVERRIDE.sub("", line))).strip()
        if not line:
            continue
        pieces.append(f"{speaker}: {line}" if speaker else line)
    return collapse_inline_space(" ".join(pieces)).strip()


def parse_cues(source: str, *, kind: str) -> Transcript:
    """Parse VTT (``kind="vtt"``) or SRT (``kind="srt"``) text.

    :raises DocumentParseError: no cue with text, or a malformed timing line.
    """
    source = source.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    blocks = [block for block in re.split(r"\n[ \t]*\n", source) if block.strip()]
    title = None
    if blocks:
        header = _HEADER.match(blocks[0].split("\n", 1)[0].strip())
        if header:
            title = (header.group(1) or "").strip() or None
            blocks = blocks[1:] if "-->" not in blocks[0] else [blocks[0].split("\n", 1)[1]]
        elif kind == "vtt":
            raise DocumentParseError("The WebVTT file does not start with a WEBVTT line.")
    texts: list[str] = []
    segments: list[Segment] = []
    offset = 0
    for block in blocks:
        lines = [line for line in block.split("\n")]
        if lines[0].strip().startswith(_SKIPPED_BLOCKS):
            continue
        timing_index = next((i for i, line in enumerate(lines[:3]) if "-->" in line), None)
        if timing_index is None:
            continue  # an index or identifier without timing, e.g. a stray number
        timing = _TIMING.match(lines[timing_index])
        if timing is None:
            raise DocumentParseError(
                "A cue timing line is malformed; expected 'HH:MM:SS.mmm --> HH:MM:SS.mmm'.",
                cue=len(segments) + 1,
            )
        start = parse_timestamp(timing.group(1))
        end = max(start, parse_timestamp(timing.group(2)))
        text = _cue_text(lines[timing_index + 1 :])
        if not text:
            continue
        if texts:
            offset += 1  # the "\n" between cues
        segments.append(Segment(offset, offset + len(text), start_time=start, end_time=end))
        texts.append(text)
        offset += len(text)
    if not texts:
        raise DocumentParseError(f"The {kind.upper()} file contains no cue with text.")
    return Transcript(text="\n".join(texts), segments=tuple(segments), title=title)
