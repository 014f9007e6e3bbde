"""reStructuredText: docutils with Sphinx's common markup, nothing read from outside the document."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from assistant_bridge.ingest import detect_format, parse_file

pytestmark = pytest.mark.unit

PAGE = """\
=============
pip install
=============

Usage
=====

.. code-block:: shell
   :caption: example

   python -m pip install SomePackage

Options
=======

.. option:: -r, --requirement <file>

   Install from the given requirements file. This option can be used multiple times.

.. option:: --no-deps

   Don't install package dependencies.

See :ref:`Requirements Files <requirements-file-format>`, :py:func:`~pip._internal.main` and :doc:`cli/pip`.

.. versionadded:: 20.3
   The new resolver.

.. toctree::
   :maxdepth: 2

   cli/index

.. tab:: Unix

   Text inside a directive of a Sphinx extension.
"""


def test_a_sphinx_page_reads_as_its_text() -> None:
    doc = parse_file("install.rst", PAGE.encode())
    assert (doc.title, doc.mime_type) == ("pip install", "text/x-rst")
    paragraphs = doc.text.split("\n\n")
    assert "python -m pip install SomePackage" in paragraphs
    assert (
        "-r, --requirement <file>: Install from the given requirements file. This option can be used multiple times."
        in paragraphs
    )
    assert "--no-deps: Don't install package dependencies." in paragraphs
    assert "See Requirements Files, main and cli/pip." in paragraphs
    assert "New in version 20.3. The new resolver." in paragraphs
    assert "Text inside a directive of a Sphinx extension." in paragraphs
    assert "maxdepth" not in doc.text and "cli/index" not in doc.text and "caption" not in doc.text


def test_nothing_outside_the_document_is_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET VALUE")
    source = f"""Title
=====

Some text.

.. include:: {secret}

.. literalinclude:: {secret}

.. raw:: html

   <script>alert('x')</script>

.. csv-table:: data
   :file: {secret}
"""
    doc = parse_file("notes.rst", source.encode())
    assert "TOP SECRET" not in doc.text and "alert" not in doc.text
    assert "Some text." in doc.text


def test_rst_by_extension_mime_type_and_gzip() -> None:
    assert detect_format("index.rst") == "rst" and detect_format("index.rest") == "rst"
    assert detect_format("upload", "text/x-rst") == "rst"
    assert parse_file("index.rst.gz", gzip.compress(PAGE.encode())) == parse_file("index.rst", PAGE.encode())


def test_broken_markup_still_gives_the_text() -> None:
    doc = parse_file("broken.rst", b"Title\n===\n\n:unknown:`role` and `unclosed\n\n.. note::\n\n  A note.\n")
    assert "A note." in doc.text and "role" in doc.text and ":unknown:" not in doc.text


@pytest.mark.unit
def test_a_list_of_typed_parameters_keeps_each_name_apart_from_its_type() -> None:
    """tqdm's README lists its parameters as "* leave  : bool, optional" over an indented description: docutils
    makes each a list item holding a term with a classifier. The text has one line per parameter, its name and
    type apart, and no list marker alone on a line."""
    source = (
        "Parameters\n----------\n\n"
        "* leave  : bool, optional\n    If [default: True], keeps all traces of the progress bar.\n"
        "* total  : int or float, optional\n    The number of expected iterations.\n"
    )
    text = parse_file("README.rst", source.encode()).text
    assert "- leave : bool, optional: If [default: True], keeps all traces of the progress bar." in text
    assert "- total : int or float, optional: The number of expected iterations." in text
    assert "leavebool" not in text and "\n-\n" not in text
