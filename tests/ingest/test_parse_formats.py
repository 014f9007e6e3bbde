"""parse_file / parse_text for text, Markdown and HTML, format detection and decoding errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant_bridge.errors import DocumentParseError, UnsupportedMediaType, ValidationFailed
from assistant_bridge.ingest import SUPPORTED_EXTENSIONS, detect_format, parse_file, parse_text

pytestmark = pytest.mark.unit

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_plain_text_title_from_first_line_and_text_cleaned() -> None:
    data = b"Badge policy\r\n\r\nBadges must be worn at all times.   \r\n\r\n\r\n\r\nLost badges cost 10 euros.\x00"
    with pytest.raises(DocumentParseError):
        parse_file("policy.txt", data)  # NUL byte: binary
    doc = parse_file("policy.txt", data[:-1])
    assert doc.title == "Badge policy"
    assert doc.text == "Badge policy\n\nBadges must be worn at all times.\n\nLost badges cost 10 euros."
    assert doc.mime_type == "text/plain"
    assert doc.modality == "text"
    assert doc.language == "en"
    assert doc.segments == ()


def test_minus_signs_of_options_are_read_as_ascii_dashes() -> None:
    # manuals typeset an option's dashes as minus signs; a question, a shell and BM25 read "-l", "--login"
    text = "\u2212l, \u2212\u2212login\n\nMake bash act as a login shell; it reads \u02dc/.profile."
    doc = parse_file("bash.txt", text.encode())
    assert doc.text.endswith("-l, --login\n\nMake bash act as a login shell; it reads ~/.profile.")
    html = "<html><body><p>Use &minus;f to follow forks.</p></body></html>"
    assert parse_file("strace.html", html.encode()).text == "Use -f to follow forks."


def test_plain_text_without_title_line_uses_filename_stem() -> None:
    doc = parse_file("notes/meeting-2026.txt", b"We agreed on the roadmap.\nNext meeting in May.")
    assert doc.title == "meeting-2026"


def test_markdown_title_text_and_markup_removed() -> None:
    doc = parse_file("onboarding.md", (FIXTURES / "onboarding.md").read_bytes())
    assert doc.title == "Onboarding Checklist"
    assert doc.mime_type == "text/markdown"
    text = doc.text
    assert "Intro paragraph before the title with bold, emphasis and a link." in text
    assert "\n\nOnboarding Checklist\n\n" in text
    assert "2. Sign in and set a password of at least 14 characters." in text
    assert "- Read the remote work policy." in text
    assert "- Install the VPN client: screenshot" in text
    assert "Step | Owner\nLaptop | IT" in text
    assert 'echo "keep code text"' in text
    assert "Quoted tip: lock your screen." in text
    assert "snake_case_name stays intact." in text
    for noise in ("**", "](", "```", "---", "|---", "owner: hr", "https://example.com/remote", "> "):
        assert noise not in text


def test_markdown_badge_lines_go_and_inline_images_keep_their_text() -> None:
    source = (
        "# tool\n\n[![Github-CI][ci-badge]][ci-link]\n[![PyPI](https://img/pypi.svg)](https://pypi.org/p/tool)\n\n"
        "Parses files fast. ![diagram of the pipeline](pipe.png)\n\n[ci-badge]: https://img/ci.svg\n"
    )
    text = parse_file("README.md", source.encode()).text
    assert text == "tool\n\nParses files fast. diagram of the pipeline"


def test_a_markdown_table_of_contents_goes() -> None:
    source = (
        "# Tomli\n\n**Table of Contents**\n\n- [Intro](#intro)\n- [Usage](#usage)\n  - [Parse a TOML string](#parse)\n"
        "1. [FAQ](#faq)\n\n## Intro\n\nSee [Usage](#usage) below.\n\n- [The TOML spec](https://toml.io)\n"
    )
    text = parse_file("README.md", source.encode()).text
    assert text == "Tomli\n\nTable of Contents\n\nIntro\n\nSee Usage below.\n\n- The TOML spec"


def test_a_changelog_heading_after_the_text_is_no_title_and_an_html_h1_on_top_is() -> None:
    # a package's long description: its README, then its changelog under "# Change Log"
    source = (
        '<h2 align="center">The Uncompromising Code Formatter</h2>\n\n'
        "Black is the uncompromising Python code formatter.\n\nIt requires Python 3.10+ to run.\n\n"
        "Install it with pip.\n\n# Change Log\n\n## 26.1.0\n\n- Faster.\n"
    )
    assert parse_file("black-README.md", source.encode()).title == "black-README"
    source = '<p><img src="logo.svg"></p>\n<h1 align="center">PyrateLimiter</h1>\n\nRate limits.\n\n# Usage\n'
    assert parse_file("README.md", source.encode()).title == "PyrateLimiter"


def test_badges_beside_a_markdown_title_are_not_part_of_it() -> None:
    source = (
        "# Thread-pool Controls [![Build Status](https://ci/badge.svg)](https://ci) [![codecov](https://cov/b.svg)]"
        "(https://cov)\n\n## Usage ![logo](logo.png) notes\n\nLimit threads. ![diagram](d.png)\n"
    )
    doc = parse_file("README.md", source.encode())
    assert doc.title == "Thread-pool Controls"
    assert doc.text == "Thread-pool Controls\n\nUsage notes\n\nLimit threads. diagram"


def test_markdown_without_heading_uses_front_matter_then_stem() -> None:
    doc = parse_file("x.md", b"---\ntitle: From front matter\n---\nBody text.")
    assert doc.title == "From front matter"
    assert doc.text == "Body text."
    assert parse_file("plain-notes.md", b"Just *text*.").title == "plain-notes"


def test_html_strips_scripts_styles_nav_and_keeps_blocks() -> None:
    doc = parse_file("handbook.html", (FIXTURES / "handbook.html").read_bytes())
    assert doc.title == "Employee Handbook"
    assert doc.mime_type == "text/html"
    assert doc.text == (
        "Welcome aboard\n\n"
        "Your first week starts with an IT onboarding session & a badge photo.\n\n"
        "Useful contacts\n\n"
        "- Help desk: extension 4357\n- Security: extension 5000\n\n"
        "Day | Activity\nMonday | Laptop setup\n\n"
        "ssh   jump.example.com\n\n"  # <pre> keeps its spaces, as a browser shows it
        "Café and tea are free.\nLunch is served at noon."
    )
    for noise in ("secret", "color", "Policies", "JavaScript", "<"):
        assert noise not in doc.text


def test_html_pre_keeps_indentation_and_columns() -> None:
    source = (
        "<html><body><p>An   example:</p><pre>def f(x):\n    return x\n\n.dump ?OBJECTS?   Render content as SQL\n"
        "\t.help   Show help</pre><p>After  it.</p></body></html>"
    )
    assert parse_file("page.html", source.encode()).text == (
        "An example:\n\ndef f(x):\n    return x\n\n.dump ?OBJECTS?   Render content as SQL\n        .help   Show help"
        "\n\nAfter it."
    )


def test_html_title_falls_back_to_first_h1() -> None:
    doc = parse_file("page.htm", b"<html><body><h1>Expense <i>rules</i></h1><p>Keep receipts.</p></body></html>")
    assert doc.title == "Expense rules"
    assert doc.text == "Expense rules\n\nKeep receipts."


def test_html_meta_charset_is_honoured() -> None:
    body = '<html><head><meta charset="shift_jis"><title>経費</title></head><body><p>経費精算の手順です。</p></body></html>'
    doc = parse_file("keihi.html", body.encode("shift_jis"))
    assert doc.title == "経費"
    assert doc.text == "経費精算の手順です。"
    assert doc.language == "ja"


def test_mime_charset_and_legacy_encodings() -> None:
    french = "Les congés payés sont posés dans le portail."
    assert parse_file("conges.txt", french.encode("cp1252")).text == french
    assert parse_file("conges.txt", french.encode("latin-1"), mime_type="text/plain; charset=ISO-8859-1").text == french
    japanese = "パスワードを忘れた場合は、ヘルプデスクに連絡してください。"
    assert parse_file("pw.txt", japanese.encode("cp932")).text == japanese
    assert parse_file("pw.txt", "\ufeff".encode() + japanese.encode()).text == japanese
    assert parse_file("pw.txt", japanese.encode("utf-16")).text == japanese
    # EUC-JP decodes "as cp1252" without an error, and ISO-2022-JP "as ASCII": both are told apart
    assert parse_file("pw.txt", japanese.encode("euc_jp")).text == japanese
    assert parse_file("pw.txt", japanese.encode("iso2022_jp")).text == japanese
    assert parse_file("pw.txt", ("経費精算は" + "月末までに申請します。" * 20).encode("euc_jp")).language == "ja"
    mixed = "Größe und Übergröße, naïve façade, déjà vu — «oui»."
    assert parse_file("de.txt", mixed.encode("cp1252")).text == mixed


def test_bytes_that_no_encoding_makes_plausible_are_refused_not_garbled() -> None:
    with pytest.raises(DocumentParseError, match="could not be told"):
        parse_file("noise.txt", bytes(range(0xA1, 0xFF)) * 4)


def test_undecodable_and_empty_text_raise_parse_error() -> None:
    with pytest.raises(DocumentParseError, match="UTF-8"):
        parse_file("bad.txt", b"\x81\x8d\x8f\x90\x9d\xff\xfe\xfd" * 3)
    with pytest.raises(DocumentParseError):
        parse_file("empty.txt", b"")
    with pytest.raises(DocumentParseError, match="no text"):
        parse_file("blank.md", b"   \n\n  ")
    with pytest.raises(DocumentParseError, match="no text"):
        parse_file("only-script.html", b"<script>alert(1)</script>")


@pytest.mark.parametrize(
    ("filename", "mime_type", "expected"),
    [
        ("a.TXT", None, "text"),
        ("a.markdown", None, "markdown"),
        ("a.HTM", None, "html"),
        ("a.pdf", "text/plain", "pdf"),  # the extension wins
        ("upload", "application/pdf", "pdf"),
        ("upload.bin", "text/markdown; charset=utf-8", "markdown"),
        ("captions", "text/vtt", "vtt"),
        ("captions", "application/x-subrip", "srt"),
    ],
)
def test_detect_format(filename: str, mime_type: str | None, expected: str) -> None:
    assert detect_format(filename, mime_type) == expected


def test_unknown_type_raises_unsupported_media_type_naming_supported_ones() -> None:
    with pytest.raises(UnsupportedMediaType) as caught:
        parse_file("slides.pptx", b"PK\x03\x04", mime_type="application/vnd.openxmlformats")
    error = caught.value
    assert error.status == 415
    assert ".pptx" in error.message
    for extension in (".txt", ".md", ".html", ".pdf", ".vtt", ".srt"):
        assert extension in error.message
    assert error.details["supported"] == list(SUPPORTED_EXTENSIONS)
    with pytest.raises(UnsupportedMediaType):
        parse_file("noext", b"hello")


def test_invalid_modality_is_rejected() -> None:
    with pytest.raises(ValidationFailed):
        parse_file("a.vtt", b"WEBVTT\n\n00:00.000 --> 00:01.000\nhi", modality="hologram")


def test_parse_text_formats() -> None:
    doc = parse_text("<h1>Ignored</h1><p>Bonjour, les congés sont dans le portail.</p>", title="Congés", fmt="html")
    assert doc.title == "Congés"
    assert doc.text == "Ignored\n\nBonjour, les congés sont dans le portail."
    assert doc.mime_type == "text/html"
    assert doc.language == "fr"
    markdown = parse_text("# Heading\n\nSome **bold** text.", title="  ", fmt="markdown")
    assert markdown.title == "Heading"
    assert markdown.text == "Heading\n\nSome bold text."
    plain = parse_text("line one\r\nline two", title="")
    assert (plain.title, plain.text, plain.mime_type) == ("Untitled", "line one\nline two", "text/plain")
    with pytest.raises(UnsupportedMediaType):
        parse_text("x", title="t", fmt="rtf")  # type: ignore[arg-type]
    with pytest.raises(DocumentParseError):
        parse_text("<p> </p>", title="t", fmt="html")
