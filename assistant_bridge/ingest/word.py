"""Word documents (``.docx``, Office Open XML) to text, read by python-docx (MIT).

The body is read in order, paragraphs and tables as they come: a heading (``Title``, ``Heading 1``…) is a
paragraph of its own, a list paragraph (a list style or numbering) is an item ``- text``, a table is one line
per row, its cells joined by ``" | "`` (a merged cell once). Headers, footers, comments and tracked deletions
are not the document's text and are left out. The title is the document's core property, else its first
``Title`` or heading paragraph.

A ``.docx`` is a zip archive: it is refused before parsing when it would unpack to more than
:data:`MAX_UNPACKED_BYTES` (a small upload can hold gigabytes of XML), and python-docx's XML parser does not
resolve entities.
"""

from __future__ import annotations

import io
import zipfile
from typing import Any

from assistant_bridge.errors import DocumentParseError
from assistant_bridge.text import TABLE_CELL

MAX_UNPACKED_BYTES = 256 * 1024 * 1024
_HEADING_STYLES = ("Title", "Heading", "Subtitle")


def docx_to_text(data: bytes) -> tuple[str, str | None]:
    """``(text, title)``.

    :raises DocumentParseError: not a Word document, a damaged one, or one that unpacks to too much.
    """
    import docx
    from docx.opc.exceptions import PackageNotFoundError

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            unpacked = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError):
        raise DocumentParseError("The file is not a readable Word document (it is not a .docx archive).") from None
    if unpacked > MAX_UNPACKED_BYTES:
        raise DocumentParseError(
            f"The Word document unpacks to more than {MAX_UNPACKED_BYTES // (1024 * 1024)} MiB.",
            limit_bytes=MAX_UNPACKED_BYTES,
        )
    try:
        document = docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, KeyError, ValueError, zipfile.BadZipFile, SyntaxError) as exc:
        raise DocumentParseError(f"The file is not a readable Word document ({type(exc).__name__}).") from None
    paragraphs: list[str] = []
    title = (document.core_properties.title or "").strip() or None
    for block in document.iter_inner_content():
        if hasattr(block, "rows"):
            paragraphs.extend(_rows(block))
            continue
        text = " ".join(block.text.split())
        if not text:
            continue
        style = _style(block)
        if style.startswith(_HEADING_STYLES):
            title = title or text
            paragraphs.append(text)
        elif style.startswith("List") or _numbered(block):
            paragraphs.append(f"- {text}")
        else:
            paragraphs.append(text)
    return "\n\n".join(paragraphs), title


def _style(paragraph: Any) -> str:
    try:
        return str(paragraph.style.name or "") if paragraph.style is not None else ""
    except (KeyError, AttributeError):
        return ""


def _numbered(paragraph: Any) -> bool:
    ppr = paragraph._p.pPr  # noqa: SLF001 - python-docx exposes no public numbering test
    return ppr is not None and ppr.numPr is not None


def _rows(table: Any) -> list[str]:
    rows: list[str] = []
    for row in table.rows:
        cells: list[str] = []
        seen: set[int] = set()
        for cell in row.cells:
            if id(cell._tc) in seen:  # noqa: SLF001 - a merged cell comes back once per grid column
                continue
            seen.add(id(cell._tc))  # noqa: SLF001
            cells.append(" ".join(cell.text.split()))
        if any(cells):
            rows.append(TABLE_CELL.join(cells))
    return rows
