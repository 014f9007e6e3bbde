"""PDF text with line-level boxes, read by PDFium (``pypdfium2``).

PDFium lays the characters of a page out as text: it puts spaces between words that the PDF only places
apart (TeX and DocBook output draws words with kerning offsets and no space character), ends lines with
line breaks, and marks a hyphen that splits a word at the end of a line. The page text is its text, line by
line (a word hyphenated across two lines is joined back into one), so offsets are exact, and each line gets
one box.

Boxes are ``[x1, y1, x2, y2]`` in PDF points with the origin at the *top left* of the media box, and carry
``layout_width``/``layout_height`` = the media box size. A line's box runs from the origin of its first
character to the right edge of its last one, and from 0.2 em below to 0.8 em above the baseline.

PDFium is not thread-safe: one lock serialises the parses of a process (a 70-page manual takes well under
a second).

Limits: page ``/Rotate`` is ignored (boxes are in unrotated page space); text drawn as images (scans) is
not read, and a PDF without any text is rejected, since OCR is out of scope.
"""

from __future__ import annotations

import ctypes
import re
import threading
import unicodedata
from dataclasses import dataclass
from typing import Any

from assistant_bridge.core.document import Segment
from assistant_bridge.domain import BBox
from assistant_bridge.errors import DocumentParseError, NoContent
from assistant_bridge.ingest.text import ascii_typesetting
from assistant_bridge.text import BULLETS, ITEM_DASHES

_ASCENT = 0.8
_DESCENT = 0.2
_DROP = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u200b\ufeff\ufffe]")
_HYPHEN_MARKS = "\ufffe\u00ad\u0002"  # how PDFium marks a hyphen that splits a word at the end of a line
_LINE = re.compile(r"[^\r\n]+")
_OFFICE_TITLE_PREFIX = re.compile(r"^(Microsoft (Word|PowerPoint|Excel) - |untitled$)", re.IGNORECASE)
_PDFIUM = threading.Lock()


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


def _clean(text: str) -> str:
    return ascii_typesetting(_DROP.sub("", unicodedata.normalize("NFC", text))).replace("\t", " ")


class _Chars:
    """The characters of one PDFium text page: their text (one character per index), origins and boxes."""

    def __init__(self, textpage: Any) -> None:
        import pypdfium2.raw as pdfium_c

        self._c = pdfium_c
        self._page = textpage
        count = textpage.count_chars()
        text = textpage.get_text_range() if count > 0 else ""
        if len(text) != count:  # characters outside the BMP: read them one by one to keep indices aligned
            text = "".join(chr(pdfium_c.FPDFText_GetUnicode(textpage.raw, i)) for i in range(count))
        self.text: str = text

    def visible(self, i: int) -> bool:
        return not self.text[i].isspace() and not self._c.FPDFText_IsGenerated(self._page.raw, i)

    def visible_ends(self, start: int, end: int) -> tuple[int, int] | None:
        """The first and the last visible character of ``start..end-1``, looked for from both ends."""
        first = next((i for i in range(start, end) if self.visible(i)), None)
        if first is None:
            return None
        return first, next(i for i in range(end - 1, first - 1, -1) if self.visible(i))

    def size(self, i: int) -> float:
        return float(self._c.FPDFText_GetFontSize(self._page.raw, i))

    def origin(self, i: int) -> tuple[float, float]:
        x, y = ctypes.c_double(), ctypes.c_double()
        self._c.FPDFText_GetCharOrigin(self._page.raw, i, x, y)
        return x.value, y.value

    def right(self, i: int) -> float:
        return float(self._page.get_charbox(i, loose=True)[2])


def _line_box(chars: _Chars, first: int, last: int, page: _Page) -> BBox | None:
    """The box of the characters ``first..last`` (both visible): see the module docstring."""
    size = max(chars.size(first), chars.size(last)) or 1.0
    x_start, baseline = chars.origin(first)
    last_baseline = chars.origin(last)[1]  # lower when PDFium joined a hyphenated word across two lines
    x_end = max(chars.right(last), x_start)
    top = page.bottom + page.height
    x1 = min(max(x_start - page.left, 0.0), page.width)
    x2 = min(max(x_end - page.left, 0.0), page.width)
    y1 = min(max(top - (max(baseline, last_baseline) + _ASCENT * size), 0.0), page.height)
    y2 = min(max(top - (min(baseline, last_baseline) - _DESCENT * size), 0.0), page.height)
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


def _page_text(textpage: Any, page: _Page) -> tuple[str, list[Segment], list[tuple[float, str]]]:
    """Return the page text, its line segments (offsets within the page) and ``(font size, line)`` pairs."""
    chars = _Chars(textpage)
    lines: list[tuple[str, list[BBox], float]] = []
    pending: tuple[str, list[BBox], float] | None = None  # a line that ends in a word hyphenated across lines
    for match in _LINE.finditer(chars.text):
        line = _clean(match.group()).strip()
        if not line:
            continue
        shown = chars.visible_ends(match.start(), match.end())
        box = _line_box(chars, shown[0], shown[1], page) if shown else None
        size = chars.size(shown[0]) if shown else 0.0
        current = (line, [box] if box is not None else [], size)
        if pending is not None:
            current = (pending[0] + line, pending[1] + current[1], max(pending[2], size))
            pending = None
        if match.group().rstrip()[-1:] in _HYPHEN_MARKS:
            pending = current
        else:
            lines.append(current)
    if pending is not None:
        lines.append(pending)
    lines = _unwrapped_paths(lines)
    segments: list[Segment] = []
    pos = 0
    for line, boxes, _size in lines:
        bboxes = (BBox.union(boxes),) if boxes else ()
        segments.append(Segment(pos, pos + len(line), page_number=page.number, bboxes=bboxes))
        pos += len(line) + 1
    ends = [*_line_ends(lines), ""] if lines else []
    text = "".join(line + sep for (line, _, _), sep in zip(lines, ends, strict=True))
    return text, segments, [(size, line) for line, _, size in lines]


# a path or a link the line ends in, cut after one of its dots: "…le fichier global /etc/dupload." + "conf, soit…",
# "(https://www." + "debian.org/social_contract…)"
_CUT_PATH = re.compile(r"(?:^|\s|\()\S*/\S*\.$")
_PATH_GOES_ON = re.compile(r"[a-z0-9]")
FULL_LINE_EMS = 2.0  # a line whose box ends within this many ems of the page's right margin is full: it was wrapped
_Line = tuple[str, list[BBox], float]  # a line's text, its boxes and its font size


def _right_margin(lines: list[_Line]) -> float:
    """Where the page's full lines end: the rightmost edge that two lines share within a point (justified lines
    end on the margin; one line merged with a footnote mark runs past it), else the rightmost edge."""
    edges = sorted((max(b.x2 for b in boxes) for _, boxes, _ in lines if boxes), reverse=True)
    shared = (e for e, f in zip(edges, edges[1:], strict=False) if e - f <= 1.0)
    return next(shared, edges[0] if edges else 0.0)


def _full(line: _Line, right: float) -> bool:
    _, boxes, size = line
    return bool(boxes) and max(b.x2 for b in boxes) >= right - FULL_LINE_EMS * max(size, 1.0)


def _unwrapped_paths(lines: list[_Line]) -> list[_Line]:
    """``lines`` with a path or a link that a full line ends in, after one of its dots, joined to the rest of it
    on the next line (no space: "/etc/dupload.conf"). A short line that ends in a path ends a sentence or a
    command ("--prefix=/usr."), and a next line that starts with a capital starts one."""
    right = _right_margin(lines)
    out: list[_Line] = []
    for line in lines:
        if out:
            text, boxes, size = out[-1]
            if _full(out[-1], right) and _CUT_PATH.search(text) and _PATH_GOES_ON.match(line[0]):
                out[-1] = (text + line[0], boxes + line[1], max(size, line[2]))
                continue
        out.append(line)
    return out


# a line that starts an item of a list: a bullet, "1.", "2.3 ", "a)"
_ITEM_START = re.compile(rf"[{BULLETS}{ITEM_DASHES}-]\s|\(?\d+(?:\.\d+)*[.)]?\s|\(?[a-z][.)]\s")


def _line_ends(lines: list[_Line]) -> list[str]:
    """What follows each line but the last: a space when the line is full (its box ends within
    :data:`FULL_LINE_EMS` of the page's right margin, :func:`_right_margin`) and the next one goes on with the same paragraph
    (in the same font, not indented further, not a list item), so that a sentence the page wraps over two
    lines reads as one ("…il ne construit que" / "les paquets binaires dépendants…"); else a line break: after
    a short line (a paragraph's last, a heading, a line of code), before an indented line (a paragraph's
    first), a list item or a line in another font (a heading), and after a line that ends in a colon (it
    introduces what follows). A space for a line break keeps every offset."""
    right = _right_margin(lines)
    ends = []
    for line, (following, next_boxes, next_size) in zip(lines, lines[1:], strict=False):
        text, boxes, size = line
        em = max(size, next_size, 1.0)
        indented = bool(boxes and next_boxes) and min(b.x1 for b in next_boxes) > min(b.x1 for b in boxes) + em / 2
        same_font = abs(size - next_size) <= 0.05 * em
        goes_on = same_font and not indented and not text.endswith(":") and not _ITEM_START.match(following)
        ends.append(" " if _full(line, right) and goes_on else "\n")
    return ends


def _title_from_lines(sized_lines: list[tuple[float, str]]) -> str | None:
    """The first line set in the largest font on page 1, when that font is larger than the body text."""
    if not sized_lines:
        return None
    sizes = sorted(size for size, _ in sized_lines)
    body = sizes[(len(sizes) - 1) // 2]  # the lower median: a cover page may hold only a title and a byline
    biggest = max(sizes)
    if biggest <= body * 1.15:
        return None
    for size, line in sized_lines:
        if size == biggest and 0 < len(line) <= 150:
            return line
    return None


def _metadata_title(document: Any) -> str | None:
    title = document.get_metadata_value("Title")
    if not isinstance(title, str):
        return None
    title = " ".join(title.split())
    title = _OFFICE_TITLE_PREFIX.sub("", title).strip()
    return title or None


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
        after = -1  # the kept line before this one
        for i, seg in enumerate(segments):
            if i in drop:
                continue
            if parts:
                # the space or line break the page had after that line, unless a dropped line came between
                parts.append(text[segments[after].end_char] if after == i - 1 else "\n")
                pos += 1
            after = i
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
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    if not data.strip():
        raise DocumentParseError("The PDF file is empty.")
    if b"%PDF-" not in data[:1024]:
        raise DocumentParseError("The file is not a PDF (no %PDF- header).")
    with _PDFIUM:
        try:
            document = pdfium.PdfDocument(data)
        except pdfium.PdfiumError as exc:
            if exc.err_code in (pdfium_c.FPDF_ERR_PASSWORD, pdfium_c.FPDF_ERR_SECURITY):
                raise DocumentParseError("The PDF is encrypted with a password; upload an unprotected copy.") from exc
            raise DocumentParseError("The PDF is damaged and cannot be read.", reason="PdfiumError") from exc
        try:
            pages: list[tuple[str, list[Segment]]] = []
            first_page_lines: list[tuple[float, str]] = []
            page_count = len(document)
            for number in range(1, page_count + 1):
                page_obj = document[number - 1]
                left, bottom, right, top = page_obj.get_mediabox()
                page = _Page(number, float(left), float(bottom), float(right - left), float(top - bottom))
                textpage = page_obj.get_textpage()
                try:
                    page_text, page_segments, sized_lines = _page_text(textpage, page)
                finally:
                    textpage.close()
                    page_obj.close()
                if number == 1:
                    first_page_lines = sized_lines
                pages.append((page_text, page_segments))
            title = _metadata_title(document) or _title_from_lines(first_page_lines)
        except pdfium.PdfiumError as exc:
            raise DocumentParseError("The PDF is damaged and cannot be read.", reason="PdfiumError") from exc
        finally:
            document.close()
    texts, segments = _assemble(_without_furniture(pages))
    if not texts:
        raise NoContent(
            "The PDF contains no extractable text (scanned images need OCR, which is not supported).",
            pages=page_count,
        )
    return PdfText(text="\n".join(texts), segments=tuple(segments), title=title, page_count=page_count)
