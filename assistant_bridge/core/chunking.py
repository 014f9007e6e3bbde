"""Sentence-aware chunking of a parsed document.

Invariants of :func:`chunk_document` (tested with random text):

* ``chunk.text == doc.text[chunk.start_char:chunk.end_char]``, with no surrounding whitespace;
* every non-whitespace character of ``doc.text`` lies in at least one chunk;
* positions are ``0 .. n-1`` in text order and start offsets strictly increase;
* ``count_tokens(chunk.text) <= max_tokens`` unless one character alone is over the limit.

Chunks are built from *units*: sentences for documents, cues for transcripts. Units are packed whole up to
``max_tokens``; a unit longer than that is cut between words, and a word longer than that between
characters. Consecutive chunks share whole trailing units up to ``overlap_tokens``.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from assistant_bridge.core.document import ParsedDocument, Segment
from assistant_bridge.domain import BBox
from assistant_bridge.text import ITERATION_MARKS, JAPANESE_CHARS, sentence_spans

TokenCounter = Callable[[str], int]

_CJK = ITERATION_MARKS + JAPANESE_CHARS
# One atom per CJK character, one per run of other non-space characters.
_ATOM = re.compile(rf"[{_CJK}]|[^\s{_CJK}]+")


@dataclass(frozen=True, kw_only=True)
class ChunkDraft(Segment):
    """A chunk before it gets an id and its document's scope fields (see :class:`~assistant_bridge.domain.Chunk`):
    its range of the document's text with the location of that range, its text and its position."""

    position: int
    text: str


def approximate_tokens(text: str) -> int:
    """Count words in Latin text and one token per CJK character (a cheap stand-in for a tokenizer)."""
    return len(_ATOM.findall(text))


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _split_chars(text: str, start: int, end: int, count: TokenCounter, max_tokens: int) -> list[tuple[int, int]]:
    pieces = []
    piece_start = start
    for pos in range(start + 1, end + 1):
        if pos - piece_start > 1 and count(text[piece_start:pos]) > max_tokens:
            pieces.append((piece_start, pos - 1))
            piece_start = pos - 1
    pieces.append((piece_start, end))
    return pieces


def _split_long(text: str, start: int, end: int, count: TokenCounter, max_tokens: int) -> list[tuple[int, int]]:
    """Cut an over-long unit between atoms (words, CJK characters), and an over-long atom between characters."""
    pieces: list[tuple[int, int]] = []
    piece: tuple[int, int] | None = None
    for match in _ATOM.finditer(text, start, end):
        atom = match.span()
        if piece is not None and count(text[piece[0] : atom[1]]) <= max_tokens:
            piece = (piece[0], atom[1])
            continue
        if piece is not None:
            pieces.append(piece)
        if count(text[atom[0] : atom[1]]) > max_tokens:
            chars = _split_chars(text, atom[0], atom[1], count, max_tokens)
            pieces.extend(chars[:-1])
            piece = chars[-1]
        else:
            piece = atom
    if piece is not None:
        pieces.append(piece)
    return pieces


def _units(doc: ParsedDocument, count: TokenCounter, max_tokens: int) -> list[tuple[int, int]]:
    text = doc.text
    if doc.is_transcript and doc.segments:
        raw = []
        for segment in doc.segments:
            cue = _trim(text, segment.start_char, segment.end_char)
            if cue[0] < cue[1]:
                raw.append(cue)
        # Text outside every cue (should not happen, but the coverage invariant must hold).
        covered = 0
        gaps = []
        for left, right in raw:
            gaps.extend(sentence_spans(text, covered, left, max_chars=None))
            covered = right
        gaps.extend(sentence_spans(text, covered, len(text), max_chars=None))
        raw = sorted(raw + gaps)
        nested = [
            sentence_spans(text, left, right, max_chars=None)
            if count(text[left:right]) > max_tokens
            else [(left, right)]
            for left, right in raw
        ]
        candidates = [span for spans in nested for span in spans]
    else:
        candidates = sentence_spans(text, max_chars=None)
    units = []
    for left, right in candidates:
        if count(text[left:right]) > max_tokens:
            units.extend(_split_long(text, left, right, count, max_tokens))
        else:
            units.append((left, right))
    return units


def _pack(
    text: str, units: Sequence[tuple[int, int]], count: TokenCounter, max_tokens: int, overlap_tokens: int
) -> list[tuple[int, int]]:
    spans = []
    first = 0
    while first < len(units):
        last = first
        while last + 1 < len(units) and count(text[units[first][0] : units[last + 1][1]]) <= max_tokens:
            last += 1
        spans.append((units[first][0], units[last][1]))
        if last + 1 >= len(units):
            break
        following = units[last + 1][1]
        nxt = last + 1
        # Step back over whole trailing units while they fit in the overlap and leave room for the next unit;
        # never back to ``first`` itself, so every chunk makes progress.
        while (
            nxt - 1 > first
            and count(text[units[nxt - 1][0] : units[last][1]]) <= overlap_tokens
            and count(text[units[nxt - 1][0] : following]) <= max_tokens
        ):
            nxt -= 1
        first = nxt
    return spans


def _locate(segments: Sequence[Segment], ends: Sequence[int], start: int, end: int) -> Segment:
    """Where ``text[start:end]`` comes from: the first page and start time, the last end time, and one box per
    page around the boxes of every segment it overlaps."""
    page_number = None
    start_time = None
    end_time = None
    per_page: dict[int, list[BBox]] = {}
    index = bisect.bisect_right(ends, start)
    while index < len(segments) and segments[index].start_char < end:
        segment = segments[index]
        index += 1
        if page_number is None and segment.page_number is not None:
            page_number = segment.page_number
        for box in segment.bboxes:
            per_page.setdefault(box.page_number, []).append(box)
        if segment.start_time is not None and start_time is None:
            start_time = segment.start_time
        if segment.end_time is not None:
            end_time = segment.end_time
    boxes = tuple(BBox.union(per_page[page]) for page in sorted(per_page))
    return Segment(start, end, page_number, boxes, start_time, end_time)


def chunk_document(
    doc: ParsedDocument,
    *,
    max_tokens: int = 200,
    overlap_tokens: int = 40,
    count_tokens: TokenCounter | None = None,
) -> list[ChunkDraft]:
    """Cut ``doc`` into overlapping, sentence-aligned chunks with their locations.

    :param max_tokens: upper bound on ``count_tokens(chunk.text)``.
    :param overlap_tokens: at most this many tokens of whole trailing units are repeated at the start of
        the next chunk; 0 disables overlap.
    :param count_tokens: the embedder's token counter; defaults to :func:`approximate_tokens`.
    :returns: chunks in text order; empty when the text is blank.
    :raises ValueError: when ``max_tokens < 1`` or ``overlap_tokens`` is not in ``[0, max_tokens)``.
    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
    if not 0 <= overlap_tokens < max_tokens:
        raise ValueError(f"overlap_tokens must be in [0, max_tokens), got {overlap_tokens}")
    count = count_tokens or approximate_tokens
    units = _units(doc, count, max_tokens)
    spans = _pack(doc.text, units, count, max_tokens, overlap_tokens)
    segments = doc.segments
    ends = [segment.end_char for segment in segments]
    drafts = []
    for position, (start, end) in enumerate(spans):
        location = _locate(segments, ends, start, end)
        drafts.append(ChunkDraft(position=position, text=doc.text[start:end], **vars(location)))
    return drafts
