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


NESTED = """\x1f
File: frob.info,  Node: Options,  Up: Top

1 Options
*********

‘-m NUM’
‘--max-count=NUM’
     Stop after the first NUM selected lines.

     If the input is standard input from a regular file, ‘frob’ leaves
     it positioned just after the last selected line.  For example:

          while frob -m 1 PATTERN
          do
            echo xxxx
          done < FILE

     Example: stop after the second line:
          $ seq 3 | frob -m 2
          1
          2

 -- Test: -name pattern
 -- Test: -iname pattern
     True if the base of the file name matches PATTERN.

 -- Function: void frob_free (void *WRITABLE)
     Free memory.  The arguments are:

     WRITABLE
          The writable address that was returned.

     This function also resets the context in the same way as
     ‘frob_init’.

     ‘ad=32’

          SGR substring for added lines.  The default is green
          foreground.

LANG environment
     This version does not conform to the POSIX standard.

  2. How do I frob directories recursively?

          frob -r /home/gigi

     frobs every file under the ‘/home/gigi’ directory.  For more
     control, use ‘find’.

   Output of ‘frob -e’:
     11a
     .
"""


def test_the_later_paragraphs_of_an_entry_are_text_and_its_examples_stay_lines() -> None:
    """makeinfo indents a table entry's description and a definition's body by 5 columns, and an example a level
    further: a description's second paragraph is prose joined into one line (a sentence is never cut at a wrapped
    line), an example keeps its lines, and an unquoted term heads its description as a quoted one does."""
    paragraphs = parse_file("frob.info", NESTED.encode()).text.split("\n\n")
    assert "-m NUM, --max-count=NUM: Stop after the first NUM selected lines." in paragraphs
    assert (
        "If the input is standard input from a regular file, ‘frob’ leaves it positioned just after the last "
        "selected line. For example:"
    ) in paragraphs
    assert "while frob -m 1 PATTERN\ndo\n  echo xxxx\ndone < FILE" in paragraphs
    assert "Example: stop after the second line:\n$ seq 3 | frob -m 2\n1\n2" in paragraphs
    assert "WRITABLE: The writable address that was returned." in paragraphs
    # a definition with more names (@deffnx) lists them in its head
    assert "Test: -name pattern, -iname pattern: True if the base of the file name matches PATTERN." in paragraphs
    assert "This function also resets the context in the same way as ‘frob_init’." in paragraphs
    assert "ad=32: SGR substring for added lines. The default is green foreground." in paragraphs
    assert "LANG environment: This version does not conform to the POSIX standard." in paragraphs
    assert "frob -r /home/gigi" in paragraphs  # an example in a list item's text
    assert "frobs every file under the ‘/home/gigi’ directory. For more control, use ‘find’." in paragraphs
    assert "Output of ‘frob -e’:\n11a\n." in paragraphs  # a line that leads into an example under it


def test_a_term_with_quotes_inside_its_quotes_is_a_term() -> None:
    """findutils' updatedb writes ``'--prunepaths='PATH...''``: the outer quotes go, the inner ones stay."""
    manual = MANUAL.replace("‘-q’\n     Say nothing.", "'--prunepaths='PATH...''\n     Directories to omit.")
    paragraphs = parse_file("frob.info", manual.encode()).text.split("\n\n")
    assert "--prunepaths='PATH...': Directories to omit." in paragraphs
