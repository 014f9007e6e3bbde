"""Word documents (.docx): body text in order, headings, lists and tables; headers left out; bad files refused."""

from __future__ import annotations

import io

import docx
import pytest

from assistant_bridge.errors import DocumentParseError
from assistant_bridge.ingest import detect_format, parse_file, word

pytestmark = pytest.mark.unit


def _document(title: str = "") -> bytes:
    d = docx.Document()
    d.core_properties.title = title
    d.add_heading("Travel policy", 0)
    d.add_paragraph("Book trains for trips under four hours.")
    d.add_heading("Expenses", level=1)
    d.add_paragraph("Submit receipts within 30 days.", style="List Bullet")
    d.add_paragraph("Use the company card.", style="List Number")
    table = d.add_table(rows=2, cols=3)
    for cell, text in zip(table.rows[0].cells, ("Item", "Limit", "Note"), strict=True):
        cell.text = text
    table.cell(1, 0).merge(table.cell(1, 1)).text = "Hotel 150 EUR"
    table.cell(1, 2).text = "per night"
    d.sections[0].header.paragraphs[0].text = "CONFIDENTIAL HEADER"
    out = io.BytesIO()
    d.save(out)
    return out.getvalue()


def test_a_word_document_reads_in_order_with_headings_lists_and_tables() -> None:
    doc = parse_file("policy.docx", _document())
    assert doc.title == "Travel policy"
    assert doc.mime_type == "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    assert doc.text == (
        "Travel policy\n\nBook trains for trips under four hours.\n\nExpenses\n\n- Submit receipts within 30 days."
        "\n\n- Use the company card.\n\nItem | Limit | Note\n\nHotel 150 EUR | per night"
    )
    assert parse_file("policy.docx", _document(title="Travel 2026")).title == "Travel 2026"


def test_detect_docx_by_extension_and_type() -> None:
    assert detect_format("policy.DOCX") == "docx"
    mime = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    assert detect_format("upload", mime) == "docx"


def test_bad_word_files_are_clear_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(DocumentParseError, match="not a readable Word document"):
        parse_file("policy.docx", b"PK\x03\x04 not really a zip")
    with pytest.raises(DocumentParseError, match="not a readable Word document"):
        parse_file("policy.docx", b"plain text renamed")
    monkeypatch.setattr(word, "MAX_UNPACKED_BYTES", 1000)
    with pytest.raises(DocumentParseError, match="unpacks to more than"):
        parse_file("policy.docx", _document())
