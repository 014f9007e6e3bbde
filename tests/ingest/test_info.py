"""GNU Info manuals: navigation, menus, indexes and tag tables out; headings, entries and definitions in."""

from __future__ import annotations

import gzip

import pytest

from assistant_bridge.ingest import detect_format, parse_file

pytestmark = pytest.mark.unit

MANUAL = """This is frob.info, produced by makeinfo version 6.8 from
frob.texi.

This manual is for Frob, version 2.1.

INFO-DIR-SECTION Text creation and manipulation
START-INFO-DIR-ENTRY
* frob: (frob).         Frob the files.
END-INFO-DIR-ENTRY

\x1f
File: frob.info,  Node: Top,  Next: Invoking frob,  Up: (dir)

GNU Frob
********

Frob changes files in place.

* Menu:

* Invoking frob::     How to run it.
* Index::             Every term.

\x1f
File: frob.info,  Node: Invoking frob,  Next: Index,  Prev: Top,  Up: Top

1 Invoking frob
***************

The options are:

‘-n NUM’
‘--count=NUM’
     Frob NUM times.  The default is 3.

‘-q’
     Say nothing.

 -- Function: int frob_file (const char * NAME, int
          COUNT)
     Frob the file NAME COUNT times.

   For example:

     frob -n 2 notes.txt
     frob --count=5 log.txt

\x1f
File: frob.info,  Node: Index,  Prev: Invoking frob,  Up: Top

Index
*****

* Menu:

* count:                                 Invoking frob.         (line 6)

\x1f
Tag Table:
Node: Top87
Node: Invoking frob300
\x1f
End Tag Table
"""


def test_an_info_manual_reads_as_its_text() -> None:
    doc = parse_file("frob.info", MANUAL.encode())
    assert (doc.title, doc.mime_type) == ("GNU Frob", "text/x-info")
    paragraphs = doc.text.split("\n\n")
    assert "1 Invoking frob" in paragraphs
    assert "-n NUM, --count=NUM: Frob NUM times. The default is 3." in paragraphs
    assert "-q: Say nothing." in paragraphs
    assert "Function: int frob_file (const char * NAME, int COUNT): Frob the file NAME COUNT times." in paragraphs
    assert "frob -n 2 notes.txt\nfrob --count=5 log.txt" in paragraphs
    for chrome in ("File: frob.info", "Node:", "* Menu:", "Tag Table", "makeinfo", "INFO-DIR", "(line 6)", "***"):
        assert chrome not in doc.text, chrome


@pytest.mark.parametrize(
    ("filename", "expected"), [("frob.info", "info"), ("coreutils.info-2", "info"), ("grep.info.gz", "info")]
)
def test_detect_info(filename: str, expected: str) -> None:
    assert detect_format(filename) == expected


def test_a_compressed_part_of_a_manual_and_a_plain_file_named_info() -> None:
    part = parse_file("frob.info-1.gz", gzip.compress(MANUAL.encode()))
    assert "-q: Say nothing." in part.text
    plain = parse_file("notes.info", b"Meeting notes\n\nWe met.")
    assert (plain.text, plain.mime_type) == ("Meeting notes\n\nWe met.", "text/plain")


def test_index_markers_are_not_binary() -> None:
    marked = MANUAL.replace("Index\n*****\n", "\x00\x08[index\x00\x08]\nIndex\n*****\n")
    assert parse_file("frob.info", marked.encode()).text == parse_file("frob.info", MANUAL.encode()).text
