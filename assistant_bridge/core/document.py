"""What a parser returns: the plain text of a document plus a map from character ranges to locations.

Invariant: every :class:`Segment` lies inside ``text`` (``0 <= start_char < end_char <= len(text)``) and
segments are sorted by ``start_char`` and do not overlap. Parts of ``text`` outside every segment have no
known location (plain text, Markdown and HTML have no segments at all).
"""

from __future__ import annotations

from dataclasses import dataclass

from assistant_bridge.domain import BBox


@dataclass(frozen=True)
class Segment:
    """A range of :attr:`ParsedDocument.text` and where it came from.

    A PDF line has a ``page_number`` (1-based) and its box; a transcript cue has ``start_time`` and
    ``end_time`` in seconds.
    """

    start_char: int
    end_char: int
    page_number: int | None = None
    bboxes: tuple[BBox, ...] = ()
    start_time: float | None = None
    end_time: float | None = None


@dataclass(frozen=True)
class ParsedDocument:
    """A parsed document, ready for chunking.

    :ivar title: from the document itself (``<title>``, first heading, PDF metadata) or the filename stem.
    :ivar text: the full plain text; chunk offsets index into it.
    :ivar segments: locations of ranges of ``text``, sorted, non-overlapping.
    :ivar mime_type: canonical type of the source (``text/plain``, ``text/markdown``, ``text/html``,
        ``application/pdf``, ``text/vtt``, ``application/x-subrip``).
    :ivar language: ``en``, ``fr`` or ``ja`` (:func:`assistant_bridge.core.language.detect_language`).
    :ivar modality: ``text`` for documents, ``video_transcript``/``audio_transcript`` for cue files.
    """

    title: str
    text: str
    segments: tuple[Segment, ...] = ()
    mime_type: str = "text/plain"
    language: str = "en"
    modality: str = "text"

    @property
    def is_transcript(self) -> bool:
        return self.modality in ("audio_transcript", "video_transcript")
