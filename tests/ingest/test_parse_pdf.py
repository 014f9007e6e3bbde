"""PDF parsing: text per page, line boxes in top-left page coordinates, titles and failure modes."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant_bridge.errors import DocumentParseError
from assistant_bridge.ingest import parse_file
from tests.fixtures.make_pdf import TWO_PAGE_LINES, Line, make_pdf

pytestmark = pytest.mark.unit

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture(scope="module")
def two_pages() -> bytes:
    return (FIXTURES / "two_pages.pdf").read_bytes()


def test_committed_fixture_matches_generator(two_pages: bytes) -> None:
    assert two_pages == make_pdf(TWO_PAGE_LINES, title="Travel Policy")


def test_text_title_and_page_numbers(two_pages: bytes) -> None:
    doc = parse_file("travel.pdf", two_pages)
    assert doc.title == "Travel Policy"
    assert doc.mime_type == "application/pdf"
    assert doc.language == "en"
    assert doc.modality == "text"
    expected_lines = [line.text for page in TWO_PAGE_LINES for line in page]
    assert doc.text.replace("\n", " ") == " ".join(expected_lines)  # a line ends in a break or a space
    assert doc.text.startswith("Travel Policy\nEmployees must book")  # the title's font is not the body's
    assert [doc.text[s.start_char : s.end_char] for s in doc.segments] == expected_lines
    assert [s.page_number for s in doc.segments] == [1] * 5 + [2] * 3


def test_line_boxes_are_top_left_points_on_the_right_page(two_pages: bytes) -> None:
    doc = parse_file("travel.pdf", two_pages)
    lines = [line for page in TWO_PAGE_LINES for line in page]
    for segment, line in zip(doc.segments, lines, strict=True):
        (box,) = segment.bboxes
        assert box.page_number == segment.page_number
        assert (box.layout_width, box.layout_height) == (612.0, 792.0)
        assert box.x1 == pytest.approx(line.x)
        # Baseline y (bottom-left origin) becomes 792 - y from the top; the box straddles it.
        baseline_from_top = 792.0 - line.y
        assert box.y1 < baseline_from_top < box.y2
        assert box.y2 - box.y1 == pytest.approx(line.size, rel=0.01)
        # Helvetica averages about half an em per character.
        width = box.x2 - box.x1
        assert 0.35 * line.size * len(line.text) < width < 0.65 * line.size * len(line.text)
        assert 0 <= box.x1 < box.x2 <= 612 and 0 <= box.y1 < box.y2 <= 792
    first, last_on_page_one = doc.segments[0].bboxes[0], doc.segments[4].bboxes[0]
    assert first.y1 < last_on_page_one.y1  # the title is near the top, the continuation near the bottom
    assert first.to_json()["bbox"] == [first.x1, first.y1, first.x2, first.y2]


def test_media_box_offset_and_size_are_respected() -> None:
    data = make_pdf([[Line("Offset page text.", 100, 300, 10)]], width=400, height=500)
    data = data.replace(b"/MediaBox [0 0 400 500]", b"/MediaBox [50 100 450 600]")
    doc = parse_file("offset.pdf", data)
    (box,) = doc.segments[0].bboxes
    assert (box.layout_width, box.layout_height) == (400.0, 500.0)
    assert box.x1 == pytest.approx(50.0)
    assert box.y1 == pytest.approx(600 - 308, abs=0.01)  # top edge 0.8 em above the baseline
    assert box.y2 == pytest.approx(600 - 298, abs=0.01)


def test_title_from_largest_font_when_metadata_is_missing() -> None:
    pages = [
        [Line("Body line one.", 72, 700, 11), Line("Holiday Calendar", 72, 740, 20), Line("Body two.", 72, 680, 11)]
    ]
    assert parse_file("cal.pdf", make_pdf(pages)).title == "Holiday Calendar"
    same_size = [[Line("Only body text here.", 72, 700, 11)]]
    assert parse_file("notes-2026.pdf", make_pdf(same_size)).title == "notes-2026"


def test_non_latin1_text_round_trips() -> None:
    doc = parse_file("fr.pdf", make_pdf([[Line("Congés payés : déclarez-les à l'avance (RH).", 72, 700)]]))
    assert doc.text == "Congés payés : déclarez-les à l'avance (RH)."
    assert doc.language == "fr"


def test_a_typeset_tilde_is_read_as_the_one_a_shell_takes() -> None:
    # groff's PDFs set "~" as a small tilde (WinAnsi 0x98, U+02DC): a reader copies the path into a shell
    doc = parse_file("bash.pdf", make_pdf([[Line("It reads \u02dc/.bashrc when it starts.", 72, 700)]]))
    assert doc.text == "It reads ~/.bashrc when it starts."


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("corrupt.pdf", "damaged"),
        ("encrypted.pdf", "encrypted"),
        ("no_text.pdf", "no extractable text"),
    ],
)
def test_unreadable_pdfs_raise_document_parse_error(name: str, message: str) -> None:
    with pytest.raises(DocumentParseError, match=message) as caught:
        parse_file(name, (FIXTURES / name).read_bytes())
    assert caught.value.status == 422


def test_truncated_not_pdf_and_empty_bytes() -> None:
    with pytest.raises(DocumentParseError, match="not a PDF"):
        parse_file("fake.pdf", b"<html>not a pdf</html>")
    with pytest.raises(DocumentParseError, match="empty"):
        parse_file("empty.pdf", b"")
    with pytest.raises(DocumentParseError):
        parse_file("cut.pdf", (FIXTURES / "two_pages.pdf").read_bytes()[:200])


def _encrypted_copy(data: bytes, user_password: str) -> bytes:
    import io

    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password=user_password, owner_password="owner-secret", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_pdf_with_only_an_owner_password_is_read(two_pages: bytes) -> None:
    doc = parse_file("locked.pdf", _encrypted_copy(two_pages, user_password=""))
    assert doc.text.startswith("Travel Policy\nEmployees must book flights")
    assert [s.page_number for s in doc.segments][-1] == 2


def test_pdf_with_a_user_password_is_rejected(two_pages: bytes) -> None:
    with pytest.raises(DocumentParseError, match="encrypted"):
        parse_file("locked.pdf", _encrypted_copy(two_pages, user_password="open-sesame"))


def test_words_set_apart_by_kerning_get_spaces() -> None:
    """TeX and DocBook PDFs place words apart with TJ kerning and no space character; the text has the spaces."""
    line = Line("The Debian Project was created by Ian Murdock in 1993.", 72, 700, kerned=True)
    doc = parse_file("faq.pdf", make_pdf([[line]]))
    assert doc.text == "The Debian Project was created by Ian Murdock in 1993."


def test_a_word_hyphenated_at_a_line_end_is_joined() -> None:
    pages = [[Line("Le paquet rend le pro-", 72, 700), Line("cessus plus facile.", 72, 686)]]
    doc = parse_file("fr.pdf", make_pdf(pages))
    assert doc.text == "Le paquet rend le processus plus facile."
    (segment,) = doc.segments  # one line now, its box spans both printed lines
    assert segment.bboxes[0].y2 - segment.bboxes[0].y1 > 20


def test_a_path_cut_at_a_dot_by_the_end_of_a_full_line_is_joined() -> None:
    """PDFium breaks a long line after the dot of a path or a link, without a hyphen: "/etc/dupload." and
    "conf, soit…" are one path; a short line that ends in a path ends its sentence ("--prefix=/usr.")."""
    pages = [
        [
            Line("Vous pouvez soit éditer le fichier global du programme /etc/dupload.", 72, 700),
            Line("conf, soit avoir votre propre fichier ~/.dupload pour les changer.", 72, 686),
            Line("Lancez ./configure --prefix=/usr.", 72, 672),
            Line("install: gentoo", 72, 658),
        ]
    ]
    doc = parse_file("fr.pdf", make_pdf(pages))
    assert "le fichier global du programme /etc/dupload.conf, soit avoir" in doc.text
    assert "--prefix=/usr.\ninstall: gentoo" in doc.text
    assert len(doc.segments) == 3


def test_the_lines_a_paragraph_wraps_over_read_as_one() -> None:
    """A full line goes on in the next one (a space), so that a sentence wrapped over two lines is one sentence;
    a short line (a paragraph's last), a line that ends in a colon and a line before a list item end in a line
    break. The segments stay one per printed line."""
    lines = [
        Line("Il n'est pas necessaire de les installer sur le serveur puisqu'il ne construit que", 72, 700),
        Line("les paquets binaires dependants de l'architecture. Cette distinction permet de dire", 72, 686),
        Line("si les paquets vont dans Build-Depends.", 72, 672),
        Line("Les cibles de debian/rules sont les suivantes, dans l'ordre ou elles sont lancees:", 72, 658),
        Line("- binary-arch : pour creer tous les paquets binaires dependants de l'architecture", 72, 644),
        Line("- binary-indep : pour creer tous les paquets binaires independants.", 72, 630),
    ]
    doc = parse_file("guide.pdf", make_pdf([lines]))
    assert doc.text.split("\n") == [
        " ".join(line.text for line in lines[:3]),
        lines[3].text,
        lines[4].text,
        lines[5].text,
    ]
    assert len(doc.segments) == 6


def test_a_cover_page_with_a_title_and_a_byline_gives_the_title() -> None:
    pages = [[Line("Filesystem Hierarchy Standard", 72, 700, 25), Line("LSB Workgroup", 72, 660, 17)]]
    assert parse_file("fhs.pdf", make_pdf(pages)).title == "Filesystem Hierarchy Standard"
