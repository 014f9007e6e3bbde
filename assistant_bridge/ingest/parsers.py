"""Turn an uploaded file (or JSON text) into a :class:`ParsedDocument`.

The format is chosen by file extension, else by MIME type. Supported: plain text, Markdown, HTML, PDF, Word
(``.docx``, :mod:`.word`), WebVTT, SRT, reStructuredText (:mod:`.rst`), GNU Info manuals (:mod:`.info`) and
manual page sources (roff: ``wc.1``, read by :mod:`.roff`), each also gzip-compressed (``wc.1.gz``,
``README.md.gz``, as Debian ships documentation). Anything else is
:class:`~assistant_bridge.errors.UnsupportedMediaType`; a supported file that cannot be read is
:class:`~assistant_bridge.errors.DocumentParseError`. Parsing is pure (bytes in, dataclass out) and logs
nothing, so document text never reaches a log.
"""

from __future__ import annotations

import gzip
import io
import re
import zlib
from pathlib import PurePath
from typing import Literal

from assistant_bridge.core.document import ParsedDocument, Segment
from assistant_bridge.core.language import detect_language
from assistant_bridge.domain import MODALITIES
from assistant_bridge.errors import DocumentParseError, NoContent, UnsupportedMediaType, ValidationFailed
from assistant_bridge.ingest.htmltext import html_to_text, sniff_charset
from assistant_bridge.ingest.info import info_to_text, is_info
from assistant_bridge.ingest.manpage import is_man_page, man_to_text
from assistant_bridge.ingest.pdf import parse_pdf
from assistant_bridge.ingest.roff import included_page, is_roff, roff_to_rendered
from assistant_bridge.ingest.rst import rst_to_html
from assistant_bridge.ingest.text import clean_text, decode_bytes, markdown_to_text
from assistant_bridge.ingest.transcripts import parse_cues
from assistant_bridge.ingest.word import docx_to_text

__all__ = [
    "SUPPORTED_EXTENSIONS",
    "SUPPORTED_MIME_TYPES",
    "ParsedDocument",
    "Segment",
    "TextFormat",
    "detect_format",
    "parse_file",
    "parse_text",
]

TextFormat = Literal["text", "markdown", "html"]

EXTENSION_FORMATS: dict[str, str] = {
    ".txt": "text",
    ".text": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
    ".vtt": "vtt",
    ".srt": "srt",
    ".docx": "docx",
    ".info": "info",
    ".rst": "rst",
    ".rest": "rst",
    ".man": "roff",
    **{f".{n}": "roff" for n in range(1, 10)},  # manual page sources; "wc.1", and ".1p", ".3pm" too (_MAN_SECTION)
}
MIME_FORMATS: dict[str, str] = {
    "text/plain": "text",
    "text/markdown": "markdown",
    "text/x-markdown": "markdown",
    "text/html": "html",
    "application/xhtml+xml": "html",
    "application/pdf": "pdf",
    "application/x-pdf": "pdf",
    "text/vtt": "vtt",
    "application/x-subrip": "srt",
    "application/srt": "srt",
    "text/srt": "srt",
    "text/x-srt": "srt",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "text/x-info": "info",
    "application/x-info": "info",
    "text/x-rst": "rst",
    "text/prs.fallenstein.rst": "rst",
    "text/troff": "roff",
    "application/x-troff-man": "roff",
    "text/x-troff-man": "roff",
}
FORMAT_MIME: dict[str, str] = {
    "text": "text/plain",
    "markdown": "text/markdown",
    "html": "text/html",
    "pdf": "application/pdf",
    "vtt": "text/vtt",
    "srt": "application/x-subrip",
    "roff": "text/troff",
    "rst": "text/x-rst",
    "info": "text/x-info",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
}
SUPPORTED_EXTENSIONS: tuple[str, ...] = (*EXTENSION_FORMATS, ".gz")
_MAN_SECTION = re.compile(r"\.[1-9][a-z]{0,10}$")  # a manual page's section suffix: .1, .1p, .3pm, .3readline
_INFO_PART = re.compile(r"\.info-\d{1,3}$")  # the parts of a large manual: grep.info-1, grep.info-2
_INFO_MARKER = re.compile(rb"\x00\x08\[[^\x00]{0,40}\x00\x08\]")
_GZIP_MIME = ("application/gzip", "application/x-gzip")
#: A compressed file is unpacked up to this size; a larger one is refused (not read whole into memory).
MAX_UNPACKED_BYTES = 64 * 1024 * 1024
SUPPORTED_MIME_TYPES: tuple[str, ...] = tuple(MIME_FORMATS)


def _split_mime(mime_type: str | None) -> tuple[str, str | None]:
    if not mime_type:
        return "", None
    base, *params = (part.strip() for part in mime_type.split(";"))
    charset = None
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip("\"'")
    return base.lower(), charset


def detect_format(filename: str, mime_type: str | None = None) -> str:
    """Return ``text``, ``markdown``, ``html``, ``pdf``, ``docx``, ``vtt``, ``srt``, ``rst``, ``info`` or ``roff``
    (a manual page source); the extension wins over the MIME type. A ``.gz`` file is named by what it holds
    (``wc.1.gz``: ``roff``).

    :raises UnsupportedMediaType: neither names a supported type.
    """
    suffix = PurePath(_unpacked_name(filename)).suffix.lower()
    if suffix in EXTENSION_FORMATS:
        return EXTENSION_FORMATS[suffix]
    if _MAN_SECTION.match(suffix):
        return "roff"
    if _INFO_PART.match(suffix):
        return "info"
    base, _ = _split_mime(mime_type)
    if base in MIME_FORMATS:
        return MIME_FORMATS[base]
    raise UnsupportedMediaType(
        f"Cannot ingest this file type ({suffix or 'no extension'}, {base or 'no MIME type'}); "
        f"supported types are {', '.join(SUPPORTED_EXTENSIONS)}.",
        extension=suffix,
        mime_type=base or None,
        supported=list(SUPPORTED_EXTENSIONS),
    )


def _stem(filename: str) -> str:
    return PurePath(filename).stem.strip() or "Untitled"


def _build(
    *, title: str, text: str, segments: tuple[Segment, ...] = (), fmt: str, modality: str = "text"
) -> ParsedDocument:
    if not text.strip():
        raise NoContent("The document contains no text.")
    return ParsedDocument(
        title=title,
        text=text,
        segments=segments,
        mime_type=FORMAT_MIME[fmt],
        language=detect_language(text),
        modality=modality,
    )


def parse_file(
    filename: str, data: bytes, *, mime_type: str | None = None, modality: str | None = None
) -> ParsedDocument:
    """Parse an uploaded file.

    :param filename: the client's file name; its extension picks the parser.
    :param mime_type: the upload's ``Content-Type``; used when the extension is unknown, and for its
        ``charset`` parameter.
    :param modality: override for transcripts (``audio_transcript``); documents are always ``text``.
    :raises UnsupportedMediaType: the type is not one of :data:`SUPPORTED_EXTENSIONS`.
    :raises DocumentParseError: the file is empty, corrupt, encrypted, binary or holds no text.
    :raises ValidationFailed: ``modality`` is not a known modality.
    """
    if modality is not None and modality not in MODALITIES:
        raise ValidationFailed(f"Unknown modality {modality!r}.", path="modality", allowed=list(MODALITIES))
    if not data:
        raise DocumentParseError("The file is empty.")
    base, charset = _split_mime(mime_type)
    packed = _unpacked_name(filename) != filename or base in _GZIP_MIME
    if packed:  # read as what the name says it holds: the type is known before anything is unpacked
        filename, mime_type = _unpacked_name(filename), None
    fmt = detect_format(filename, mime_type)
    if packed:
        data = gunzip(data)
    if fmt == "docx":
        text, found = docx_to_text(data)
        return _build(title=found or _stem(filename), text=clean_text(text), fmt=fmt)
    if fmt == "pdf":
        pdf = parse_pdf(data)
        return _build(title=pdf.title or _stem(filename), text=pdf.text, segments=pdf.segments, fmt=fmt)
    if fmt in ("vtt", "srt"):
        transcript = parse_cues(decode_bytes(data, declared=charset), kind=fmt)
        return _build(
            title=transcript.title or _stem(filename),
            text=transcript.text,
            segments=transcript.segments,
            fmt=fmt,
            modality=modality or "video_transcript",
        )
    if fmt == "html":
        source = decode_bytes(data, declared=charset or sniff_charset(data))
        return _from_source(source, title=None, fmt="html", fallback_title=_stem(filename))
    if fmt == "info":
        source = decode_bytes(_INFO_MARKER.sub(b"", data), declared=charset)  # "^@^H[index^@^H]" is not binary
        if not is_info(source):
            return _from_source(source, title=None, fmt="text", fallback_title=_stem(filename))
        text, found = info_to_text(source)
        return _build(title=found or _stem(filename), text=clean_text(text), fmt=fmt)
    source = decode_bytes(data, declared=charset)
    if fmt == "rst":
        text, found = html_to_text(rst_to_html(source))
        return _build(title=found or _stem(filename), text=text, fmt=fmt)
    if fmt == "roff":
        target = included_page(source)
        if target is not None:
            raise NoContent(f"This manual page only points to another one ({target}); ingest that page instead.")
        if not is_roff(source):
            return _from_source(source, title=None, fmt="text", fallback_title=_stem(filename))
        # laid out as `man` shows it; the file name names a page without a header (foo.1: foo(1))
        stem, _, section = PurePath(filename).name.rpartition(".")
        source = roff_to_rendered(source, (stem, section) if stem and _MAN_SECTION.match("." + section) else None)
    return _from_source(source, title=None, fmt=fmt, fallback_title=_stem(filename))


def _unpacked_name(filename: str) -> str:
    """The name of what a compressed file holds (``wc.1.gz``: ``wc.1``); any other name as it is."""
    return filename[:-3] if filename.lower().endswith(".gz") else filename


def gunzip(data: bytes, limit: int = MAX_UNPACKED_BYTES) -> bytes:
    """The content of a gzip file, read up to ``limit`` bytes.

    :raises DocumentParseError: not a gzip file, a damaged one, or one that unpacks to more than ``limit``.
    """
    out = bytearray()
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as fh:
            while chunk := fh.read(1 << 20):
                out += chunk
                if len(out) > limit:
                    raise DocumentParseError(
                        f"The compressed file unpacks to more than {limit // (1024 * 1024)} MiB; split it.",
                        limit_bytes=limit,
                    )
    except (OSError, EOFError, zlib.error):
        raise DocumentParseError("The file is not a readable gzip file (damaged or not compressed).") from None
    if not out:
        raise DocumentParseError("The compressed file is empty.")
    return bytes(out)


def _plain_title(text: str) -> str | None:
    """A short first line set off by a blank line and not ending like a sentence is a title."""
    first, sep, rest = text.partition("\n")
    first = first.strip()
    if not sep or not rest.startswith("\n") or not 0 < len(first) <= 120:
        return None
    return None if first[-1] in ".!?。！？,;:、" else first


def _from_source(source: str, *, title: str | None, fmt: str, fallback_title: str) -> ParsedDocument:
    found: str | None = None
    if fmt == "html":
        text, found = html_to_text(source)
    elif fmt == "markdown":
        text, found = markdown_to_text(source)
    elif is_man_page(source):
        text, found = man_to_text(source)
        text = clean_text(text)
    else:
        text = clean_text(source)
        found = _plain_title(text)
    if fmt == "html" and not text.strip() and source.strip():
        raise NoContent(
            "The page has no text of its own (no main content): only navigation, menus, scripts or link lists."
        )
    return _build(title=title or found or fallback_title, text=text, fmt=fmt)


def parse_text(text: str, *, title: str, fmt: TextFormat = "text") -> ParsedDocument:
    """Parse text sent in a JSON body.

    :param title: the caller's title; when blank, the document's own title (HTML ``<title>``, Markdown
        ``# heading``) or ``"Untitled"``.
    :raises UnsupportedMediaType: ``fmt`` is not ``text``, ``markdown`` or ``html``.
    :raises DocumentParseError: nothing but whitespace and markup.
    """
    if fmt not in ("text", "markdown", "html"):
        raise UnsupportedMediaType(
            f"Unknown text format {fmt!r}; supported formats are text, markdown, html.",
            supported=["text", "markdown", "html"],
        )
    return _from_source(text, title=title.strip() or None, fmt=fmt, fallback_title="Untitled")
