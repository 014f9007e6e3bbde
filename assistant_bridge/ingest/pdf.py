"""PDF text with line-level boxes, using pypdf's text visitor.

``page.extract_text(visitor_text=...)`` reports each run of text with the current transformation matrix,
the text matrix, the font dictionary and the font size. The page text is rebuilt from those runs (so
offsets are exact), and each line gets one box: the union of its runs' boxes.

Boxes are ``[x1, y1, x2, y2]`` in PDF points with the origin at the *top left* of the media box, and carry
``layout_width``/``layout_height`` = the media box size. A run's box spans its advance width (from the
font's glyph widths when pypdf knows them, else 0.5 em per Latin and 1 em per CJK character) and from
0.2 em below to 0.8 em above the baseline.

Limits: page ``/Rotate`` is ignored (boxes are in unrotated page space); text drawn as images (scans) is
not read, and a PDF without any text is rejected, since OCR is out of scope.
"""

from __future__ import annotations

import functools
import importlib
import io
import re
import struct
import unicodedata
import zlib
from dataclasses import dataclass
from typing import Any

from assistant_bridge.core.document import Segment
from assistant_bridge.domain import BBox
from assistant_bridge.errors import DocumentParseError, NoContent


@functools.cache
def _font_class() -> Any:
    """pypdf's font model knows the standard 14 metrics and ``/Widths``; it is private, so it is optional."""
    try:
        module = importlib.import_module("pypdf.generic._font")
    except ImportError:  # pragma: no cover - older or newer pypdf layouts
        return None
    return getattr(module, "Font", None)


_ASCENT = 0.8
_DESCENT = 0.2
_CJK_CHAR = re.compile(r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")
_DROP = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u200b\ufeff]")
_OFFICE_TITLE_PREFIX = re.compile(r"^(Microsoft (Word|PowerPoint|Excel) - |untitled$)", re.IGNORECASE)


@dataclass(frozen=True)
class PdfText:
    """What :func:`parse_pdf` found: the text, line segments, a title candidate and the page count."""

    text: str
    segments: tuple[Segment, ...]
    title: str | None
    page_count: int


@dataclass(frozen=True)
class _Page:
    number: int
    left: float
    bottom: float
    width: float
    height: float


def _mult(m: list[float], n: list[float]) -> list[float]:
    return [
        m[0] * n[0] + m[1] * n[2],
        m[0] * n[1] + m[1] * n[3],
        m[2] * n[0] + m[3] * n[2],
        m[2] * n[1] + m[3] * n[3],
        m[4] * n[0] + m[5] * n[2] + n[4],
        m[4] * n[1] + m[5] * n[3] + n[5],
    ]


def _estimate_units(text: str) -> float:
    return sum(1000.0 if _CJK_CHAR.match(char) else 500.0 for char in text)


class _Widths:
    """Advance widths in 1/1000 em, per font dictionary, falling back to an estimate."""

    def __init__(self) -> None:
        self._fonts: dict[int, Any] = {}

    def units(self, text: str, font_dict: Any) -> float:
        estimate = _estimate_units(text)
        font_class = _font_class()
        if font_dict is None or font_class is None:
            return estimate
        from pypdf.errors import PyPdfError

        failures: tuple[type[BaseException], ...] = (PyPdfError, *_PDF_FAILURES)
        key = id(font_dict)
        if key not in self._fonts:
            try:
                self._fonts[key] = font_class.from_font_resource(font_dict)
            except failures as exc:  # a broken font must not reject the whole file
                self._fonts[key] = exc
        font = self._fonts[key]
        if isinstance(font, BaseException):
            return estimate
        try:
            measured = float(font.get_text_width(text))
        except failures:
            return estimate
        # Fonts whose widths are keyed by character codes rather than text give nonsense; keep the estimate.
        if not estimate / 4 <= measured <= estimate * 4:
            return estimate
        return measured


def _box(text: str, cm: list[float], tm: list[float], font_size: float, units: float, page: _Page) -> BBox | None:
    m = _mult(tm, cm)
    width = units / 1000.0 * font_size
    corners = [(0.0, -_DESCENT * font_size), (width, -_DESCENT * font_size), (0.0, _ASCENT * font_size)]
    corners.append((width, _ASCENT * font_size))
    xs = [m[0] * x + m[2] * y + m[4] for x, y in corners]
    ys = [m[1] * x + m[3] * y + m[5] for x, y in corners]
    top = page.bottom + page.height
    x1 = min(max(min(xs) - page.left, 0.0), page.width)
    x2 = min(max(max(xs) - page.left, 0.0), page.width)
    y1 = min(max(top - max(ys), 0.0), page.height)
    y2 = min(max(top - min(ys), 0.0), page.height)
    if x2 <= x1 or y2 <= y1:
        return None  # off the page
    return BBox(
        page_number=page.number,
        x1=round(x1, 2),
        y1=round(y1, 2),
        x2=round(x2, 2),
        y2=round(y2, 2),
        layout_width=page.width,
        layout_height=page.height,
    )


def _union(boxes: list[BBox]) -> BBox:
    return BBox(
        page_number=boxes[0].page_number,
        x1=min(b.x1 for b in boxes),
        y1=min(b.y1 for b in boxes),
        x2=max(b.x2 for b in boxes),
        y2=max(b.y2 for b in boxes),
        layout_width=boxes[0].layout_width,
        layout_height=boxes[0].layout_height,
    )


def _clean_run(text: str) -> str:
    return _DROP.sub("", unicodedata.normalize("NFC", text.replace("\r\n", "\n").replace("\r", "\n"))).replace(
        "\t", " "
    )


def _page_text(page_obj: Any, page: _Page, widths: _Widths) -> tuple[str, list[Segment], list[tuple[float, str]]]:
    """Return the page text, its line segments (offsets within the page) and ``(font size, line)`` pairs."""
    runs: list[tuple[str, list[float], list[float], Any, float]] = []

    def visit(text: Any, cm: Any, tm: Any, font_dict: Any, font_size: Any) -> None:
        if isinstance(text, str) and text:
            runs.append((text, list(cm), list(tm), font_dict, float(font_size or 0.0)))

    page_obj.extract_text(visitor_text=visit)
    parts: list[str] = []
    segments: list[Segment] = []
    sized_lines: list[tuple[float, str]] = []
    pos = 0
    line_start = 0
    line_boxes: list[BBox] = []
    line_size = 0.0

    def close_line() -> None:
        raw = "".join(parts)[line_start:pos]
        start = line_start + len(raw) - len(raw.lstrip())
        end = line_start + len(raw.rstrip())
        if start < end:
            boxes = (_union(line_boxes),) if line_boxes else ()
            segments.append(Segment(start, end, page_number=page.number, bboxes=boxes))
            sized_lines.append((line_size, raw.strip()))

    for raw_text, cm, tm, font_dict, font_size in runs:
        text = _clean_run(raw_text)
        visible = text.replace("\n", "")
        box = None
        matrix = _mult(tm, cm)
        run_size = font_size * max(abs(matrix[3]), abs(matrix[2]))
        if visible.strip():
            box = _box(visible, cm, tm, font_size, widths.units(visible, font_dict), page)
        for index, piece in enumerate(text.split("\n")):
            if index:
                close_line()
                parts.append("\n")
                pos += 1
                line_start = pos
                line_boxes = []
                line_size = 0.0
            if piece:
                parts.append(piece)
                pos += len(piece)
                if piece.strip():
                    if box is not None:
                        line_boxes.append(box)
                    line_size = max(line_size, run_size)
    close_line()
    return "".join(parts), segments, sized_lines


def _title_from_lines(sized_lines: list[tuple[float, str]]) -> str | None:
    """The first line set in the largest font on page 1, when that font is larger than the body text."""
    if not sized_lines:
        return None
    sizes = sorted(size for size, _ in sized_lines)
    body = sizes[len(sizes) // 2]
    biggest = max(sizes)
    if biggest <= body * 1.15:
        return None
    for size, line in sized_lines:
        if size == biggest and 0 < len(line) <= 150:
            return line
    return None


def _metadata_title(reader: Any) -> str | None:
    metadata = reader.metadata
    title = metadata.title if metadata is not None else None
    if not isinstance(title, str):
        return None
    title = " ".join(title.split())
    title = _OFFICE_TITLE_PREFIX.sub("", title).strip()
    return title or None


# pypdf raises many exception types on damaged files; each one means "this PDF cannot be read".
_PDF_FAILURES: tuple[type[BaseException], ...] = (
    ValueError,
    KeyError,
    TypeError,
    AttributeError,
    IndexError,
    AssertionError,
    NotImplementedError,
    RecursionError,
    OSError,
    EOFError,
    zlib.error,
    struct.error,
)


_LEADER_LINE = re.compile(r"(?:\.\s?){4,}\s*[0-9ivxlcdmIVXLCDM]+\s*$")
_INDEX_LINE = re.compile(r",\s*\d+(?:\s*[-–]\s*\d+)?\s*$")
_PAGE_NUMBER = re.compile(r"^(?:page\s+)?(?:\d+|[ivxlcdm]+)(?:\s*(?:/|of)\s*\d+)?$", re.IGNORECASE)
_DIGITS = re.compile(r"\d+")
_CHAPTER_HEAD = re.compile(r"^(?:chapter|appendix)\s+\S+?:?\s.*\s\d+$|^\d+\s+(?:chapter|appendix)\s+\S+", re.IGNORECASE)
CONTENTS_SHARE = 0.4  # a page whose lines are this much dot leaders (or index entries) is a contents page
RUNNING_MIN_PAGES = 3
EDGE_LINES = 2
FURNITURE_MAX_CHARS = 200  # contents entries, running heads and page numbers are short lines  # running heads and page numbers are looked for in the first and last two lines of a page


def _running_key(line: str) -> str:
    return _DIGITS.sub("#", line.strip().lower())


def _lines(page: tuple[str, list[Segment]]) -> list[str]:
    text, segments = page
    return [text[s.start_char : s.end_char] for s in segments]


def _is_contents_page(lines: list[str]) -> bool:
    """A table of contents or an index: most lines end in dot leaders and a page number, or in page numbers
    after a comma."""
    if len(lines) < 5:
        return False
    short = [line for line in lines if len(line) <= FURNITURE_MAX_CHARS]  # entries are short lines
    leaders = sum(1 for line in short if _LEADER_LINE.search(line))
    entries = sum(1 for line in short if _INDEX_LINE.search(line))
    return leaders >= max(5, CONTENTS_SHARE * len(lines)) or entries >= max(8, 0.6 * len(lines))


def _without_furniture(pages: list[tuple[str, list[Segment]]]) -> list[tuple[str, list[Segment]]]:
    """Pages without contents and index pages, and lines without running headers and footers (a first or last
    line that repeats, digits aside, on several pages; a "Chapter 2: Title 7" head) and bare page numbers."""
    kept = [(page, lines) for page in pages if not _is_contents_page(lines := _lines(page))]
    counts: dict[str, int] = {}
    for _, lines in kept:
        for line in set(lines[:EDGE_LINES] + lines[-EDGE_LINES:]):
            counts[_running_key(line)] = counts.get(_running_key(line), 0) + 1
    running = {k for k, n in counts.items() if n >= max(RUNNING_MIN_PAGES, 0.3 * len(kept))}

    def furniture(line: str, top: bool) -> bool:
        line = line.strip()
        if len(line) > FURNITURE_MAX_CHARS:
            return False
        if len(kept) > 1 and (_PAGE_NUMBER.match(line) or (top and _CHAPTER_HEAD.match(line))):
            return True
        return _running_key(line) in running

    out: list[tuple[str, list[Segment]]] = []
    for (text, segments), lines in kept:
        drop: set[int] = set()
        for order, top in ((range(len(lines)), True), (range(len(lines) - 1, -1, -1), False)):
            for i in order[:EDGE_LINES]:  # from each edge inwards, while the lines are furniture
                if i in drop or not furniture(lines[i], top):
                    break
                drop.add(i)
        if not drop:
            out.append((text, segments))
            continue
        parts: list[str] = []
        moved: list[Segment] = []
        pos = 0
        for i, seg in enumerate(segments):
            if i in drop:
                continue
            if parts:
                parts.append("\n")
                pos += 1
            line = lines[i]
            moved.append(Segment(pos, pos + len(line), page_number=seg.page_number, bboxes=seg.bboxes))
            parts.append(line)
            pos += len(line)
        out.append(("".join(parts), moved))
    return out


def _assemble(pages: list[tuple[str, list[Segment]]]) -> tuple[list[str], list[Segment]]:
    """The pages' texts (blank pages left out) and their segments, offset into the text joined by newlines."""
    texts: list[str] = []
    segments: list[Segment] = []
    offset = 0
    for page_text, page_segments in pages:
        lead = len(page_text) - len(page_text.lstrip())
        page_text = page_text.strip()
        if not page_text:
            continue
        if texts:
            offset += 1  # the "\n" between pages
        for segment in page_segments:
            segments.append(
                Segment(
                    segment.start_char - lead + offset,
                    segment.end_char - lead + offset,
                    page_number=segment.page_number,
                    bboxes=segment.bboxes,
                )
            )
        texts.append(page_text)
        offset += len(page_text)
    return texts, segments


def parse_pdf(data: bytes) -> PdfText:
    """Extract the text of a PDF with one segment per line (page number and box).

    :raises DocumentParseError: empty, not a PDF, corrupt, encrypted with a password, or no text at all.
    """
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, PyPdfError

    if not data.strip():
        raise DocumentParseError("The PDF file is empty.")
    if b"%PDF-" not in data[:1024]:
        raise DocumentParseError("The file is not a PDF (no %PDF- header).")
    failures = _PDF_FAILURES + (PyPdfError, DependencyError)
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise DocumentParseError("The PDF is encrypted with a password; upload an unprotected copy.")
        widths = _Widths()
        pages: list[tuple[str, list[Segment]]] = []
        first_page_lines: list[tuple[float, str]] = []
        page_count = len(reader.pages)
        for number, page_obj in enumerate(reader.pages, start=1):
            box = page_obj.mediabox
            page = _Page(number, float(box.left), float(box.bottom), float(box.width), float(box.height))
            page_text, page_segments, sized_lines = _page_text(page_obj, page, widths)
            if number == 1:
                first_page_lines = sized_lines
            pages.append((page_text, page_segments))
        texts, segments = _assemble(_without_furniture(pages))
        title = _metadata_title(reader) or _title_from_lines(first_page_lines)
    except DocumentParseError:
        raise
    except failures as exc:
        if isinstance(exc, DependencyError) or "decrypt" in str(exc).lower():
            raise DocumentParseError("The PDF is encrypted and cannot be opened.") from exc
        raise DocumentParseError("The PDF is damaged and cannot be read.", reason=type(exc).__name__) from exc
    if not texts:
        raise NoContent(
            "The PDF contains no extractable text (scanned images need OCR, which is not supported).",
            pages=page_count,
        )
    return PdfText(text="\n".join(texts), segments=tuple(segments), title=title, page_count=page_count)
