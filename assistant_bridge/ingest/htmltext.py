"""HTML to plain text with the standard library's :mod:`html.parser`.

The page's chrome (navigation, sidebars, footers, link lists: :mod:`.boilerplate`) is removed first; of what
remains, scripts, styles, templates and other non-content elements are dropped; block elements become
paragraph breaks so that the chunker never glues a heading to the next paragraph. The title is
``<title>``, else the first ``<h1>``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from html.parser import HTMLParser
from typing import Any

from assistant_bridge.ingest.boilerplate import main_content
from assistant_bridge.ingest.text import clean_text, collapse_inline_space
from assistant_bridge.text import TABLE_CELL

_SKIP = frozenset({"script", "style", "noscript", "template", "svg", "math", "iframe", "object", "nav", "head"})
_PARAGRAPH = frozenset(
    {
        "p",
        "div",
        "section",
        "article",
        "main",
        "header",
        "footer",
        "aside",
        "blockquote",
        "pre",
        "form",
        "figure",
        "figcaption",
        "table",
        "ul",
        "ol",
        "dl",
        "address",
        "hr",
        "fieldset",
        "details",
        "summary",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "body",
    }
)
# Line breaks go before these elements only, so that the whitespace between ``</li>`` and ``<li>`` does not
# turn into blank lines (which would split a list into paragraphs).
_LINE = frozenset({"br", "li", "tr", "dt", "dd", "caption", "option"})
_CELL = frozenset({"td", "th"})
# a table with this many rows of two cells or more that hold text holds data, not a layout or a framed note
_DATA_ROWS = 2
# a list item's first paragraph that only names a term ("<li><p><code>Depends</code></p><p>the package will not
# be installed unless…</p></li>", as DocBook and SQLite's pages write a list of terms): at most this many words,
# with no end of sentence, heads the paragraph after it as a definition term heads its description
_ITEM_TERM_WORDS = 6
_ITEM_TERM_CHARS = 60
_NOT_A_TERM = re.compile(r"[.!?:;。：！？]\s*$")
_VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed", "source", "wbr"})
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
# A space inside ``<pre>`` while the text is assembled: the collapsing of runs of spaces and the trimming of lines
# leave it alone, so a code example keeps its indentation and a help listing its columns
# (".dump ?OBJECTS?     Render database content as SQL"). A private-use character no page writes.
_PRE_SPACE = "\ue000"


def _is_item_term(text: str) -> bool:
    """``text`` (a list item's first paragraph) only names a term: a few words and no end of sentence."""
    words = text.split()
    return (
        0 < len(words) <= _ITEM_TERM_WORDS
        and len(text.strip()) <= _ITEM_TERM_CHARS
        and not _NOT_A_TERM.search(text)
        and any(c.isalpha() for c in text)
    )


def sniff_charset(data: bytes) -> str | None:
    """Return the charset a ``<meta>`` tag declares in the first 4 KB, if any."""
    match = _META_CHARSET.search(data[:4096])
    return match.group(1).decode("ascii") if match else None


class _Extractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip_depth = 0
        self.pre_depth = 0
        self.in_title = False
        self.title_parts: list[str] = []
        self.h1_depth = 0
        self.h1_parts: list[str] = []
        self.h1_done = False
        self.cells_in_row = 0
        # per open table (innermost last), its rows: per cell, the index in ``parts`` of the " | " before it (None
        # for a row's first cell) and whether it holds text (:meth:`_close_table`)
        self.tables: list[list[list[list[Any]]]] = []
        # per open table, whether a cell of it is open, and where in ``parts`` the breaks inside its cells are: a
        # data table's cell that holds paragraphs ("<td><p>Weekday as locale's full name.</p></td>", as docutils
        # and Sphinx write every cell) is one cell of its row (:meth:`_close_table`)
        self.cell_open: list[bool] = []
        self.cell_breaks: list[list[int]] = []
        self.after_dt = False  # a definition term just ended: its description joins it on one line
        self.joining_dd = False  # inside that description, before its first text: no break
        self.item_open = False  # a list item has begun and holds no text yet: its first paragraph joins "- "
        self.item_start = 0  # where the text of the innermost list item begins in ``parts``
        self.item_paragraphs = -1  # paragraphs the innermost list item has ended (-1: none is open)
        self.term_ended = False  # that item's first paragraph just ended and is a term: the next one joins it

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.in_title = True
            return
        if tag in _SKIP:
            if tag not in _VOID:
                self.skip_depth += 1
            return
        if self.skip_depth:
            return
        if (tag == "dd" and self.after_dt) or (tag == "p" and self.term_ended):
            # a term and its description are one line: "<dt>-l, --lines</dt><dd>print the newline counts</dd>"
            # reads "-l, --lines: print …"; so does a list item whose first paragraph only names a term ("- Depends"
            # then "le paquet ne sera pas installé…": "- Depends: le paquet…")
            while self.parts and not self.parts[-1].strip():
                self.parts.pop()
            self.parts.append(": ")
            self.after_dt = self.term_ended = False
            self.joining_dd = True
            return
        self.after_dt = self.term_ended = False
        self._break(tag)
        if tag == "li":
            self.parts.append("- ")
            self.item_open = True
            self.item_start, self.item_paragraphs = len(self.parts), 0
        elif tag == "table":
            self.tables.append([])
            self.cell_open.append(False)
            self.cell_breaks.append([])
        elif tag == "tr":
            self.cells_in_row = 0
            if self.tables:
                self.tables[-1].append([])
                self.cell_open[-1] = False
        elif tag in _CELL:
            if self.cell_open:
                self.cell_open[-1] = True
            separator = None
            if self.cells_in_row:
                self.parts.append(TABLE_CELL)
                separator = len(self.parts) - 1
            self.cells_in_row += 1
            if self.tables and self.tables[-1]:
                self.tables[-1][-1].append([separator, False])
        elif tag == "pre":
            self.pre_depth += 1
        elif tag == "h1" and not self.h1_done:
            self.h1_depth += 1
        elif tag == "span" and "classifier" in (dict(attrs).get("class") or "").split():
            # docutils and Sphinx write a term's type beside it ("<dt>leave<span class="classifier">bool,
            # optional</span></dt>"): "leave : bool, optional", as the source writes it, not "leavebool"
            self.parts.append(" : ")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if not self.skip_depth:
            self._break(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
            return
        if tag in _SKIP:
            self.skip_depth = max(0, self.skip_depth - 1)
            return
        if self.skip_depth:
            return
        if tag == "dt":
            self.after_dt = True
            return
        if tag == "p" and self.item_paragraphs >= 0:
            self.item_paragraphs += 1
            self.term_ended = self.item_paragraphs == 1 and _is_item_term("".join(self.parts[self.item_start :]))
        elif tag == "li":
            self.item_paragraphs = -1
        if tag in _CELL and self.cell_open:
            self.cell_open[-1] = False
        if tag == "table" and self.tables:
            self.cell_open.pop()
            self._close_table(self.tables.pop(), self.cell_breaks.pop())
        if tag == "pre":
            self.pre_depth = max(0, self.pre_depth - 1)
        elif tag == "h1" and self.h1_depth:
            self.h1_depth -= 1
            self.h1_done = self.h1_done or bool("".join(self.h1_parts).strip())
        if tag in _PARAGRAPH:
            self._break(tag)

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title_parts.append(data)
            return
        if self.skip_depth:
            return
        if self.pre_depth:
            data = "\n".join(line.expandtabs(8) for line in data.split("\n")).replace(" ", _PRE_SPACE)
        else:
            data = collapse_inline_space(data.replace("\n", " "))
        if self.h1_depth:
            self.h1_parts.append(data)
        if data.strip():
            self.joining_dd = self.item_open = self.term_ended = False
            if self.tables and self.tables[-1] and self.tables[-1][-1]:
                self.tables[-1][-1][-1][1] = True
        elif self.joining_dd or self.after_dt:
            return  # the spaces between "</dt>" and "<dd>"
        self.parts.append(data)

    def _close_table(self, rows: list[list[list[Any]]], breaks: Sequence[int] = ()) -> None:
        """Drop the separators of a table's spacer columns, empty in every row (a layout table's
        ``<td width="10"></td>``: "%d | | day of month" reads "%d | day of month"), and of its empty rows. In a
        data table (:data:`_DATA_ROWS` rows of two cells or more that hold text), the paragraph and line breaks
        inside its cells (``breaks``) become spaces: a row is one line ("%A | Weekday as locale's full name. |
        Sunday, Monday, …, Saturday (en_US)"), not a paragraph per cell. A table that frames a note (DocBook's
        "Tip": an icon, a heading, then the note's paragraphs in one cell) keeps its paragraphs."""
        width = max((len(row) for row in rows), default=0)
        empty = {c for c in range(width) if not any(len(row) > c and row[c][1] for row in rows)}
        if sum(1 for row in rows if sum(1 for _, text in row if text) >= 2) >= _DATA_ROWS:
            for i in breaks:
                self.parts[i] = " "
        for row in rows:
            kept = [c for c in range(len(row)) if c not in empty] if any(text for _, text in row) else []
            for c, (separator, _) in enumerate(row):
                if separator is not None and (c in empty or not kept or c == kept[0]):
                    self.parts[separator] = ""

    def _break(self, tag: str) -> None:
        if self.joining_dd or (self.item_open and tag in ("p", "div", "dl", "dt")):
            # "<li><p>text" (DocBook, Sphinx) is the item "- text", not a marker above a paragraph; so is
            # "<li><dl><dt>term" (a docutils list of parameters): "- term: description"
            return
        if tag in _PARAGRAPH or tag in _LINE:
            self.parts.append("\n\n" if tag in _PARAGRAPH else "\n")
            if self.cell_open and self.cell_open[-1] and tag != "table":
                self.cell_breaks[-1].append(len(self.parts) - 1)


def html_to_text(source: str) -> tuple[str, str | None]:
    """Return ``(text, title)`` for an HTML document or fragment: the text of its main content
    (:func:`~assistant_bridge.ingest.boilerplate.main_content`), and its ``<title>`` or first ``<h1>``."""
    content, page_title = main_content(source)
    extractor = _Extractor()
    extractor.feed(content)
    extractor.close()
    text = "".join(extractor.parts)
    text = "\n".join(collapse_inline_space(line).strip() for line in text.split("\n")).replace(_PRE_SPACE, " ")
    heading = "".join(extractor.h1_parts).replace(_PRE_SPACE, " ")
    title = page_title or " ".join("".join(extractor.title_parts).split()) or " ".join(heading.split())
    return clean_text(text), title or None
