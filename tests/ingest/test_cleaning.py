"""Document cleaning at ingestion: page chrome out of HTML, manual pages back into paragraphs and options,
contents pages and running heads out of PDFs, and a reindex that replaces a document's chunks in place.

The fixtures are small hand-written copies of the shapes real documentation takes (mdBook, Sphinx, texinfo,
a wiki article, a rendered manual page); the benchmark over real files is ``bench/real_docs.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.core.document import Segment
from assistant_bridge.domain import Ownership, Principal, Scope
from assistant_bridge.errors import DocumentParseError, NoContent
from assistant_bridge.ingest import parsers
from assistant_bridge.ingest.boilerplate import main_content
from assistant_bridge.ingest.manpage import is_man_page, man_to_text
from assistant_bridge.ingest.parsers import parse_file, parse_text
from assistant_bridge.ingest.pdf import _without_furniture
from assistant_bridge.ingest.service import every_chunk
from assistant_bridge.text import option_entries
from tests.conftest import make_services, make_settings

LINKS = "".join(f'<li><a href="c{i}.html">Chapter {i}</a></li>' for i in range(12))

MDBOOK = f"""<!DOCTYPE html><html><head><title>Variables - The Book</title></head><body>
<div id="mdbook-help-container"><h2>Keyboard shortcuts</h2><p>Press S to search in the book</p></div>
<nav id="mdbook-sidebar" class="sidebar"><ol class="chapter">{LINKS}</ol></nav>
<div id="mdbook-menu-bar" class="menu-bar"><ul id="mdbook-theme-list" role="menu"><li>Light</li><li>Coal</li></ul>
<h1 class="menu-title">The Book</h1></div>
<main><h1 id="v"><a class="header" href="#v">Variables and Mutability</a></h1>
<p>By default, variables are immutable. You can make them mutable by adding <code>mut</code>.</p>
<p>Constants are always immutable and are declared with <code>const</code>.</p></main>
<nav class="nav-wrapper"><a href="prev.html">Previous</a><a href="next.html">Next</a></nav>
<footer>Built with mdBook</footer></body></html>"""

SPHINX = f"""<html><head><title>Installing — Tool 2.1 documentation</title></head><body>
<div class="related" role="navigation"><ul><li><a href="i.html">index</a></li><li><a href="m.html">modules</a>
</li><li><a href="n.html">next</a></li><li><a href="p.html">previous</a></li><li><a href="h.html">Tool</a></li></ul></div>
<div class="document"><div class="documentwrapper"><div class="body" role="main">
<h1>Installing<a class="headerlink" href="#installing">¶</a></h1>
<p>Run the installer with the <code>--prefix</code> option to choose the target directory.</p>
<div class="toctree-wrapper"><p>The installer writes a log to install.log.</p></div>
</div></div>
<div class="sphinxsidebar" role="navigation"><h3>Table of Contents</h3><ul>{LINKS}</ul>
<div id="searchbox"><form><input type="text" name="q"></form></div></div></div>
<div class="rst-versions"><span>v: latest</span><select><option>2.1</option><option>2.0</option></select></div>
<div class="footer">© Copyright 2024.</div></body></html>"""

TEXINFO = """<html><head><title>Closure Example (libffi)</title></head><body><div class="section">
<div class="nav-panel"><p>Next: <a href="t.html">Thread Safety</a>, Previous: <a href="c.html">The Closure API</a>,
Up: <a href="u.html">Using libffi</a> [<a href="Index.html">Index</a>]</p></div>
<h3 class="section">2.6 Closure Example</h3><p>A trivial example that creates a new puts by binding fputs.</p>
</div></body></html>"""

DOCBOOK = """<html><head><title>Chapter 16. General information about the FAQ</title></head><body>
<div class="navheader"><table width="100%" summary="Navigation header"><tr><th colspan="3" align="center">Chapter 16.
General information about the FAQ</th></tr><tr><td width="20%" align="left"><a accesskey="p" href="next.html">
<img src="prev.png" alt="Prev" /></a> </td><th width="60%" align="center"> </th><td width="20%" align="right"> </td>
</tr></table><hr /></div><div class="chapter"><h1 class="title">Chapter 16. General information about the FAQ</h1>
<h2>16.2. Feedback</h2><p>Comments and additions to this document are always welcome.</p></div>
<div class="navfooter"><hr /><table width="100%" summary="Navigation footer"><tr><td width="40%" align="left">
<a accesskey="p" href="next.html"><img src="prev.png" alt="Prev" /></a> </td><td width="20%" align="center"> </td>
<td width="40%" align="right"> </td></tr><tr><td width="40%" align="left" valign="top">Chapter 15. Changes expected
in the next major release of Debian </td><td width="20%" align="center"><a accesskey="h" href="index.html">
<img src="home.png" alt="Home" /></a></td><td width="40%" align="right" valign="top"> </td></tr></table></div>
</body></html>"""

WIKI = f"""<html><head><title>Aden - Wiki</title></head><body><div id="mw-navigation"><ul>{LINKS}</ul></div>
<main id="content"><h1>Aden</h1><div id="mw-content-text">
<table class="infobox"><tr><th>Country</th><td>Yemen</td></tr><tr><th>Elevation</th><td>6 m</td></tr></table>
<p>Aden is a port city in Yemen, on the Gulf of Aden.<sup class="reference"><a href="#c1">[1]</a></sup>
It lies east of the strait of Bab-el-Mandeb.<span class="mw-editsection">[edit]</span></p>
<table class="navbox"><tr><td>{LINKS}</td></tr></table>
<div class="reflist"><ol class="references"><li>Encyclopedia, 1911.</li></ol></div>
</div></main><div id="footer">Privacy policy</div></body></html>"""

MAN = """WC(1)                            User Commands                           WC(1)

NAME
       wc - print newline, word, and byte counts for each file

SYNOPSIS
       wc [OPTION]... [FILE]...

DESCRIPTION
       The  options  below may be used to select which counts are printed, al\u2010
       ways in the following order: newline, word,  character,  byte.

       -c, --bytes
              print the byte counts

       -l, --lines
              print the newline counts

       --help display this help and exit

GNU coreutils 9.1               September 2022                           WC(1)
"""


def _text(html: str) -> tuple[str, str | None]:
    doc = parse_text(html, title="", fmt="html")
    return doc.text, doc.title


@pytest.mark.unit
def test_mdbook_keeps_the_chapter_and_its_heading_and_drops_menus_help_and_sidebar() -> None:
    text, title = _text(MDBOOK)
    assert title == "Variables - The Book"
    assert text.startswith("Variables and Mutability")  # the heading's own anchor is not chrome
    assert "Constants are always immutable" in text
    for chrome in ("Keyboard shortcuts", "Chapter 3", "Coal", "Previous", "Built with mdBook"):
        assert chrome not in text


@pytest.mark.unit
def test_sphinx_keeps_the_body_and_drops_relbar_sidebar_versions_and_pilcrows() -> None:
    text, _ = _text(SPHINX)
    assert "--prefix" in text and "install.log" in text  # "toctree-wrapper" is not a table of contents
    for chrome in ("modules", "Table of Contents", "v: latest", "2.0", "Copyright", "¶"):
        assert chrome not in text


@pytest.mark.unit
def test_texinfo_navigation_panel_goes_and_the_section_stays() -> None:
    text, _ = _text(TEXINFO)
    assert text.startswith("2.6 Closure Example") and "Thread Safety" not in text


@pytest.mark.unit
def test_docbook_navigation_header_and_footer_go_and_the_chapter_stays() -> None:
    """DocBook pages (the Debian FAQ, Policy and Reference) put a "Prev / Up / Next" table above and below each
    page: its cells ("|   |  Next", the neighbouring chapter's title) are no text of the page."""
    text, _ = _text(DOCBOOK)
    assert text.startswith("Chapter 16. General information about the FAQ")
    assert "always welcome" in text and "Chapter 15" not in text and "|" not in text


@pytest.mark.unit
def test_a_layout_tables_spacer_column_and_empty_rows_leave_no_empty_cells() -> None:
    """SQLite's pages lay out a list of substitutions as a table with an empty spacer column
    (``<td width="10"></td>``) under an empty first row: each row reads "%d | day of month", not "%d | | day of
    month" below a line of "| |". A column that holds text in some row keeps its place in the others."""
    spacer = (
        "<p>The substitutions:</p><table><tr><td></td><td width=10></td><td></td></tr>"
        "<tr><td> %d </td><td></td><td> day of month: 00</td></tr>"
        "<tr><td> %j </td><td></td><td> day of year: 001-366</td></tr></table>"
    )
    text, _ = _text(f"<html><body>{spacer}</body></html>")
    assert text.split("\n")[-2:] == ["%d | day of month: 00", "%j | day of year: 001-366"] and "| |" not in text
    sparse = "<table><tr><th>Option</th><th>Short</th></tr><tr><td>--all</td><td></td></tr><tr><td></td><td>-a</td></tr></table>"
    text, _ = _text(f"<html><body>{sparse}</body></html>")
    assert text.split("\n")[-3:] == ["Option | Short", "--all |", "| -a"]


@pytest.mark.unit
def test_a_data_tables_cells_of_paragraphs_make_one_line_a_row() -> None:
    """docutils and Sphinx write every cell's text as a paragraph, and a cell may hold several lines: each row is
    one line of cells all the same. A table that frames a note (DocBook's "Tip": an icon and a heading, then the
    note's paragraphs in one cell) keeps the note's paragraphs."""
    codes = (
        "<table><thead><tr><th><p>Directive</p></th><th><p>Meaning</p></th><th><p>Example</p></th></tr></thead>"
        "<tbody><tr><td><p><code>%a</code></p></td><td><p>Weekday as locale's\nabbreviated name.</p></td>"
        "<td><div class='line-block'><div class='line'>Sun, Mon, …, Sat (en_US);</div>"
        "<div class='line'>So, Mo, …, Sa (de_DE)</div></div></td></tr>"
        "<tr><td><p><code>%A</code></p></td><td><p>Weekday as locale's full name.</p></td><td><p>Sunday</p></td></tr>"
        "</tbody></table>"
    )
    text, _ = _text(f"<html><body><p>The format codes:</p>{codes}</body></html>")
    assert text.split("\n")[-3:] == [
        "Directive | Meaning | Example",
        "%a | Weekday as locale's abbreviated name. | Sun, Mon, …, Sat (en_US); So, Mo, …, Sa (de_DE)",
        "%A | Weekday as locale's full name. | Sunday",
    ]
    tip = (
        "<table><tr><td rowspan='2'><img src='tip.png' alt='Tip'/></td><th>Tip</th></tr>"
        "<tr><td><p>You can save connection fees with screen.</p><p>Detach it and attach it later.</p></td></tr>"
        "</table>"
    )
    text, _ = _text(f"<html><body><p>Before the note.</p>{tip}</body></html>")
    assert "You can save connection fees with screen.\n\nDetach it and attach it later." in text


@pytest.mark.unit
def test_wiki_article_without_infobox_navbox_references_or_edit_links() -> None:
    text, title = _text(WIKI)
    assert "Aden is a port city in Yemen, on the Gulf of Aden." in text
    assert "strait of Bab-el-Mandeb." in text  # the text after a removed citation mark is kept
    for chrome in ("Elevation", "Chapter 5", "[1]", "[edit]", "Encyclopedia", "Privacy"):
        assert chrome not in text


@pytest.mark.unit
def test_a_named_element_holding_most_of_the_page_is_kept() -> None:
    body = "<p>" + "Real content about backups and restores. " * 20 + "</p>"
    text, _ = _text(f'<html><body><div class="page-wrapper nav-content">{body}</div><p>Short.</p></body></html>')
    assert "backups and restores" in text


@pytest.mark.unit
def test_prose_with_a_few_links_is_not_a_link_list() -> None:
    para = (
        '<p>See <a href="a">the guide</a>, <a href="b">the FAQ</a>, <a href="c">the API</a>, '
        '<a href="d">the CLI</a> and <a href="e">the forum</a> for more on setting up a new account '
        "with a strong password and two-factor authentication enabled from the first day.</p>"
    )
    text, _ = _text(f"<html><body>{para}</body></html>")
    assert "two-factor authentication" in text


@pytest.mark.parametrize(
    "html",
    [
        f"<html><body><nav><ul>{LINKS}</ul></nav><ul>{LINKS}</ul></body></html>",
        "<html><body><script>var x = 1;</script><form><input name=q></form></body></html>",
    ],
)
@pytest.mark.unit
def test_a_page_of_only_navigation_is_reported_as_having_no_text(html: str) -> None:
    with pytest.raises(NoContent, match="no main content"):
        parse_file("menu.html", html.encode())


@pytest.mark.unit
def test_markup_lxml_cannot_parse_is_left_to_the_plain_renderer() -> None:
    assert main_content("") == ("", None)
    text, _ = _text("<p>Plain fragment, no html element.</p>")
    assert text == "Plain fragment, no html element."


@pytest.mark.unit
def test_a_rendered_manual_page_becomes_paragraphs_and_option_entries() -> None:
    assert is_man_page(MAN) and not is_man_page("WC is a tool.\n\nIt counts.")
    text, title = man_to_text(MAN)
    assert title == "wc(1): print newline, word, and byte counts for each file"
    paras = text.split("\n\n")
    assert "-l, --lines: print the newline counts" in paras
    assert "--help display this help and exit" in paras
    assert "Description" in paras
    assert any(p.startswith("The options below may be used") and "always in the following" in p for p in paras)
    assert "User Commands" not in text and "September 2022" not in text


FR_MAN = """FIND(1)                     General Commands Manual                    FIND(1)

NOM
       find - Rechercher des fichiers dans une hiérarchie de répertoires

SYNOPSIS
       find [-H] [-L] [-P] [point-départ...] [expression]

DESCRIPTION
       Cette  page  de  manuel  documente la version GNU de find.

                                  3 mars 2024                          FIND(1)
"""

JA_MAN = """CRONTAB(1)                  General Commands Manual                 CRONTAB(1)

名前
       crontab - 各ユーザーのための crontab ファイルを管理する (V3)

書式
       crontab [ -u user ] file

説明
       crontab  は、Vixie  Cron  パッケージの cron(8) デーモンの運用に使われる
       テーブルを表示するためのプログラムである。
"""

HEADLESS_MAN = """
NOM
     file — Déterminer le type d'un fichier

DESCRIPTION
     file teste chaque argument dans le but de les classer.
"""


@pytest.mark.unit
def test_a_translated_manual_page_gets_its_name_line_as_title_and_its_sections_as_headings() -> None:
    """The NAME section is "NOM" in French and "名前" in Japanese; Japanese headings are not capitals, and a
    Japanese section's first line is its prose, not a keyword's description ("説明: crontab は…")."""
    text, title = man_to_text(FR_MAN)
    assert title == "find(1): Rechercher des fichiers dans une hiérarchie de répertoires"
    assert text.split("\n\n")[:2] == ["Nom", "find - Rechercher des fichiers dans une hiérarchie de répertoires"]
    text, title = man_to_text(JA_MAN)
    assert title == "crontab(1): 各ユーザーのための crontab ファイルを管理する (V3)"
    paras = text.split("\n\n")
    assert "説明" in paras and "書式" in paras
    assert any(p.startswith("crontab は、Vixie Cron パッケージの") for p in paras)


@pytest.mark.unit
def test_japanese_lines_wrapped_at_the_terminal_width_join_without_a_space() -> None:
    """A line break inside Japanese text is no space: "…運用に使われる" and "テーブルを…" are one word run, which
    the search and the answers read as character pairs ("れるテ" holds "るテ")."""
    text, _ = man_to_text(JA_MAN)
    assert (
        "crontab は、Vixie Cron パッケージの cron(8) デーモンの運用に使われるテーブルを表示するためのプログラムである。"
        in text.split("\n\n")
    )


@pytest.mark.unit
def test_a_manual_page_rendered_without_its_header_is_still_one() -> None:
    assert is_man_page(HEADLESS_MAN)
    text, title = man_to_text(HEADLESS_MAN)
    assert title == "file: Déterminer le type d'un fichier"
    assert "file teste chaque argument dans le but de les classer." in text.split("\n\n")
    assert not is_man_page("NOM\n\nLe nom du projet.\n") and not is_man_page("Name\n     foo - bar\n")


@pytest.mark.unit
def test_a_manual_page_file_gets_its_name_line_as_title() -> None:
    doc = parse_file("wc.1.txt", MAN.encode())
    assert doc.title.startswith("wc(1): print newline") and "GNU coreutils" not in doc.text


def _page(number: int, *lines: str) -> tuple[str, list[Segment]]:
    text, segments, pos = "", [], 0
    for line in lines:
        if text:
            text += "\n"
            pos += 1
        segments.append(Segment(pos, pos + len(line), page_number=number))
        text += line
        pos += len(line)
    return text, segments


@pytest.mark.unit
def test_contents_and_index_pages_and_running_heads_leave_the_pdf_text() -> None:
    toc = _page(2, "Table of Contents", *[f"{i} Section {i} . . . . . . . . . . {i + 3}" for i in range(1, 9)])
    words = ["alpha", "beta", "gamma", "delta", "epsilon"]
    body = [
        _page(n, f"Chapter {n}: Usage {n + 10}", f"Body text about {w}.", "The Manual", str(n))
        for n, w in zip(range(3, 8), words, strict=False)
    ]
    index = _page(8, "Index", *[f"term{i}, {i}, {i + 4}" for i in range(10)])
    pages = _without_furniture([_page(1, "The Manual", "A guide."), toc, *body, index])
    texts = [t for t, _ in pages]
    assert len(pages) == 6 and not any("Section 3" in t or "term4" in t for t in texts)
    assert texts[1] == "Body text about alpha."
    for text, segments in pages:  # segments still index their own lines
        assert [text[s.start_char : s.end_char] for s in segments] == text.split("\n")


@pytest.fixture
def svc(tmp_path: Path) -> Any:
    s = make_services(make_settings(tmp_path))
    yield s
    s.backend.close()


@pytest.mark.unit
def test_reindex_replaces_the_chunks_under_the_same_id(svc: Any, monkeypatch: Any) -> None:
    own = Ownership()
    data = b"First paragraph about the office.\n\nSecond paragraph about parking."
    first = svc.ingestor.ingest_bytes("a.txt", data, own)
    assert svc.ingestor.ingest_bytes("a.txt", data, own).created is False  # present: nothing to do
    real = parsers.parse_file

    def cleaner(filename: str, raw: bytes, **kw: Any) -> Any:
        doc = real(filename, raw, **kw)
        return type(doc)(title="Office", text="Only the office paragraph, cleaned.", mime_type=doc.mime_type)

    monkeypatch.setattr("assistant_bridge.ingest.service.parse_file", cleaner)
    again = svc.ingestor.ingest_bytes("a.txt", data, own, reindex=True)
    assert again.created and again.document.id == first.document.id
    chunks = svc.backend.document_chunks(first.document.id, every_chunk(again.document))
    assert [c.text for c in chunks] == ["Only the office paragraph, cleaned."]
    assert svc.store.get_document(first.document.id).title == "Office"


@pytest.mark.unit
def test_reindex_of_a_file_that_now_fails_keeps_the_old_document(svc: Any, monkeypatch: Any) -> None:
    own = Ownership()
    first = svc.ingestor.ingest_bytes("a.txt", b"Some text about leave.", own)

    def broken(*a: Any, **kw: Any) -> Any:
        raise DocumentParseError("cannot read it any more")

    monkeypatch.setattr("assistant_bridge.ingest.service.parse_file", broken)
    with pytest.raises(DocumentParseError):
        svc.ingestor.ingest_bytes("a.txt", b"Some text about leave.", own, reindex=True)
    assert svc.store.get_document(first.document.id) is not None  # parsing comes before any write
    assert svc.backend.document_chunks(
        first.document.id, Scope(principal=every_chunk(first.document).principal, document_ids=(first.document.id,))
    )


CHROME = (
    "Keyboard shortcuts",
    "Previous",
    "Next:",
    "Table of Contents",
    "modules",
    "v: latest",
    "Chapter 7",
    "User Commands",
    "September 2022",
    "Privacy",
    "[edit]",
    "Elevation",
)


@pytest.mark.integration
def test_answers_over_documentation_pages_carry_no_page_chrome(tmp_path: Path) -> None:
    """Whole turns (search, the extractive generator) over the fixture pages: what a page's chrome would have
    matched (its menus name every chapter) is no longer there to be answered from."""
    from assistant_bridge.generators.extractive import ExtractiveGenerator
    from tests.conversation.helpers import ask, build, checked

    app, services, _ = build(tmp_path, generator=ExtractiveGenerator())
    for name, body in (
        ("mdbook.html", MDBOOK),
        ("sphinx.html", SPHINX),
        ("texinfo.html", TEXINFO),
        ("wiki.html", WIKI),
        ("wc.txt", MAN),
    ):
        services.ingestor.ingest_bytes(name, body.encode(), Ownership())
    client = app.test_client()
    questions = (
        "How do I make variables mutable?",
        "Which option chooses the install directory?",
        "What does the closure example create?",
        "Where is Aden?",
        "Which wc option prints the newline counts?",
        "What are the chapters of the book?",
        "Which version is the documentation for?",
    )
    answers = []
    for q in questions:
        item = checked(ask(client, q))["output"]["generic"][0]
        answers.append(item.get("text", ""))
    assert any("mut" in a for a in answers) and any("-l, --lines: print the newline counts" in a for a in answers)
    for answer in answers:
        assert not any(c in answer for c in CHROME), answer


@pytest.mark.unit
def test_a_definition_list_gives_one_line_per_term_and_its_description() -> None:
    html = (
        "<dl><dt>-l, --lines</dt>\n<dd>print the newline counts</dd>"
        '<dt><span class="category">Function: </span>void *ffi_closure_alloc (size_t size)'
        '<a class="copiable-anchor" href="#x"> ¶</a></dt><dd><p>Allocate a chunk of memory.</p>'
        "<p>Free it with ffi_closure_free.</p></dd></dl>"
    )
    text, _ = _text(html)
    assert text.split("\n")[:2] == [
        "-l, --lines: print the newline counts",
        "Function: void *ffi_closure_alloc (size_t size): Allocate a chunk of memory.",
    ]
    assert "Free it with ffi_closure_free." in text and "¶" not in text


@pytest.mark.unit
def test_markup_nested_deeper_than_the_parser_reads_loses_no_text() -> None:
    deep = "<div>" * 5000 + "<p>Deep text here.</p>" + "</div>" * 5000
    assert _text("<html><body>" + deep + "</body></html>")[0] == "Deep text here."


@pytest.mark.unit
def test_hostile_lines_are_read_in_linear_time() -> None:
    """Each of these took seconds to minutes with backtracking patterns; now they return at once."""
    assert not is_man_page("X(1)" + " " * 100_000 + "y")
    pages = _without_furniture([_page(n, "." * 100_000, "x" * 50, "1, 2, 3" + " " * 50_000) for n in range(1, 7)])
    assert len(pages) == 6


@pytest.mark.unit
def test_a_list_item_that_opens_with_a_paragraph_keeps_its_text_on_the_marker_line() -> None:
    """DocBook and Sphinx write ``<li><p>…</p></li>``: the item is "- text", not a lone "-" above a paragraph."""
    html = (
        "<p>The value is one of:</p><ul><li><p><code>Architecture: any</code></p>"
        "<ul><li><p>a package compiled for each architecture.</p></li></ul></li></ul>"
    )
    text, _ = _text(html)
    assert "- Architecture: any" in text and "- a package compiled for each architecture." in text
    assert "-\n" not in text


@pytest.mark.unit
def test_sphinx_cross_references_keep_their_text_and_wiki_citation_marks_go() -> None:
    link = '<a class="reference internal" href="#nmu"><span class="std std-ref">Non-Maintainer Upload</span></a>'
    mark = '<sup class="reference"><a href="#c1">[1]</a></sup>'
    assert _text(f"<p>When preparing a {link}, wait.{mark}</p>")[0] == "When preparing a Non-Maintainer Upload, wait."


def _man_paragraphs(*lines: str) -> list[str]:
    """The paragraphs :func:`man_to_text` makes of a rendered manual page given line by line."""
    return man_to_text("\n".join(lines))[0].split("\n\n")


@pytest.mark.unit
def test_configuration_keywords_of_a_manual_page_become_entries() -> None:
    paras = _man_paragraphs(
        "SSH_CONFIG(5)            File Formats Manual            SSH_CONFIG(5)",
        "",
        "DESCRIPTION",
        "     ServerAliveCountMax",
        "             Sets the number of server alive messages which may be sent.",
        "             The default value is 3.",
        "",
        "     Host    Restricts the following declarations to be only for those",
        "             hosts that match one of the patterns.",
        "",
        "Debian                    2023-12-18                    SSH_CONFIG(5)",
    )
    assert (
        "ServerAliveCountMax: Sets the number of server alive messages which may be sent. The default value is 3."
        in paras
    )
    assert (
        "Host: Restricts the following declarations to be only for those hosts that match one of the patterns." in paras
    )


@pytest.mark.unit
def test_a_tag_nested_in_a_description_becomes_its_own_term_and_an_example_does_not() -> None:
    """parted(8) lists its commands as tags inside the description of "[command [options]]", 14 columns in;
    jq(1) lays an example's program and its input out alike, and stays as it is written."""
    paras = _man_paragraphs(
        "PARTED(8)                  GNU Parted Manual                 PARTED(8)",
        "",
        "COMMANDS",
        "       [command [options]]",
        "              Specifies the command to be executed.  Possible commands are:",
        "",
        "              print print-type",
        "                     Display the partition table.  print-type is optional.",
        "",
        "              rm partition",
        "                     Delete partition.",
        "",
        "              jq '.foo'",
        '                 {"foo": 42}',
        "",
        "parted                          2023-01-01                     PARTED(8)",
    )
    assert "print print-type: Display the partition table. print-type is optional." in paras
    assert "rm partition: Delete partition." in paras
    assert "jq '.foo' {\"foo\": 42}" in paras


@pytest.mark.unit
def test_one_line_entries_of_a_list_become_entries() -> None:
    paras = _man_paragraphs(
        "GAWK(1)                    Utility Commands                    GAWK(1)",
        "",
        "VARIABLES",
        '       CONVFMT     The conversion format for numbers, "%.6g", by default.',
        "",
        "       ENVIRON     An array containing the values of the current environment.",
        "                   The array is indexed by the environment variables.",
        "",
        "       NF          The number of fields in the current input record.",
        "",
        "       NR          The total number of input records seen so far.",
        "",
        "EXIT STATUS",
        "       0      No problems occurred.",
        "",
        "       1      Generic error code.",
        "",
        "FEATURES",
        "       o      exclude and exclude-from options similar to GNU tar",
        "",
        "       o      does not require super-user privileges",
        "",
        "       The  default  is  to  read  the  whole  file.",
        "",
        "GNU Awk 5.2.1               Mar 23 2022                        GAWK(1)",
    )
    assert 'CONVFMT: The conversion format for numbers, "%.6g", by default.' in paras
    assert "NF: The number of fields in the current input record." in paras
    assert "NR: The total number of input records seen so far." in paras
    assert (
        "ENVIRON: An array containing the values of the current environment. The array is indexed by the environment variables."
        in paras
    )
    assert "0: No problems occurred." in paras and "1: Generic error code." in paras
    # a bullet is no tag, and a prose line's justification spaces are no list's layout
    assert "o exclude and exclude-from options similar to GNU tar" in paras
    assert "The default is to read the whole file." in paras


@pytest.mark.unit
def test_a_subsection_heading_is_no_tag_of_the_options_below_it() -> None:
    """man(7) renders a subsection heading (.SS) at 3 columns and the options below it at 7: the heading has the
    shape of a tag, and was one, so wget's first recursive option read "Recursive Retrieval Options: -r
    --recursive Turn on …" and was no option entry."""
    paras = _man_paragraphs(
        "WGET(1)                            GNU Wget                            WGET(1)",
        "",
        "OPTIONS",
        "   Recursive Retrieval Options",
        "       -r",
        "       --recursive",
        "           Turn on recursive retrieving.    The default maximum depth is 5.",
        "",
        "   Contrôle général de l'affichage",
        "       -c, --count",
        "              Ne pas afficher les résultats normaux.",
        "",
        "     ServerAliveCountMax",
        "             Sets the number of server alive messages which may be sent.",
        "",
        "   Operation Modifiers",
        "       ○   -#: selects # compression level [1-19] (default: 3)",
        "",
        "GNU Wget 1.21.4                     2023-07-15                        WGET(1)",
    )
    assert "Recursive Retrieval Options" in paras and "Contrôle général de l'affichage" in paras
    assert "Operation Modifiers" in paras and "-#: selects # compression level [1-19] (default: 3)" in paras
    assert "-r: --recursive Turn on recursive retrieving. The default maximum depth is 5." in paras
    assert "-c, --count: Ne pas afficher les résultats normaux." in paras
    # a keyword's tag (indented as the body is) stays a tag
    assert "ServerAliveCountMax: Sets the number of server alive messages which may be sent." in paras
    text = "\n\n".join(paras)
    assert [text[a : a + 2] for a, _ in option_entries(text)] == ["-r", "-c", "-#"]


@pytest.mark.unit
def test_options_listed_under_bullets_become_entries() -> None:
    paras = _man_paragraphs(
        "JQ(1)                                                                    JQ(1)",
        "",
        "INVOKING JQ",
        "       ○   --version:",
        "",
        "           Output the jq version and exit with zero.",
        "",
        "       ○   -k, --keep: keep source file(s) after successful compression or",
        "           decompression.",
        "",
        "       •   Case insensitive matching will use Unicode case folding.",
        "",
        "                                  December 2023                          JQ(1)",
    )
    assert "--version: Output the jq version and exit with zero." in paras
    assert "-k, --keep: keep source file(s) after successful compression or decompression." in paras
    assert "• Case insensitive matching will use Unicode case folding." in paras  # a list item stays one


@pytest.mark.unit
def test_tags_written_inside_an_html_title_are_not_its_title() -> None:
    """``<title>`` holds text only, so "<strong>socat</strong>" there is text to a parser; the title is "socat"."""
    page = "<html><head><title><strong>socat</strong></title></head><body><p>socat relays.</p></body></html>"
    assert main_content(page)[1] == "socat"
    assert main_content("<html><head><title>a < b and c > d</title></head><body><p>x</p></body></html>")[1] == (
        "a < b and c > d"
    )


@pytest.mark.unit
def test_a_chunks_id_derives_from_its_document_and_position(tmp_path: Path) -> None:
    from assistant_bridge.ingest.service import chunk_id
    from tests.conftest import make_services, make_settings

    svc = make_services(make_settings(tmp_path))
    doc = svc.ingestor.ingest_text(
        "First part.\n\n" + "More text here. " * 400, title="t", ownership=Ownership()
    ).document
    chunks = svc.backend.document_chunks(doc.id, Scope(principal=Principal("admin", admin=True)))
    assert len(chunks) > 1 and [c.id for c in chunks] == [chunk_id(doc.id, c.position) for c in chunks]


@pytest.mark.unit
def test_a_list_item_whose_first_paragraph_names_a_term_reads_as_one_entry() -> None:
    """DocBook writes a list of terms as items of two paragraphs, the term and what it means (the maintainers'
    guide's package relations); each becomes one line, "- Depends: …", as a definition list's entries do. An
    item that opens with a sentence, or with a term followed by a nested list, keeps its paragraphs."""
    html = (
        "<ul><li><p><code class='literal'>Depends</code></p><p>le paquet ne sera pas installé sans ses "
        "dépendances.</p></li><li><p><b>Application file format</b></p>\n<p>SQLite is often used as the on-disk "
        "file format.</p></li><li><p>Build the package first.</p><p>Then upload it.</p></li>"
        "<li><p>Options</p><ul><li>inner</li></ul><p>After the list.</p></li></ul>"
    )
    lines = [line for line in _text(html)[0].split("\n") if line]
    assert lines == [
        "- Depends: le paquet ne sera pas installé sans ses dépendances.",
        "- Application file format: SQLite is often used as the on-disk file format.",
        "- Build the package first.",
        "Then upload it.",
        "- Options",
        "- inner",
        "After the list.",
    ]
