"""The cross-encoder's pairs from manual pages (``filters_models/doc_sets.py``): questions written from option
entries, and windows cut as the service cuts them."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "filters_models"))

import doc_sets  # noqa: E402

from assistant_bridge.filters.cross import CROSS_TOKENIZER_FILE, WordPiece  # noqa: E402


def _page(name: str, options: list[tuple[str, str]]) -> str:
    upper = name.upper()
    lines = [f"{upper}(1)                     User Commands                    {upper}(1)", "", "NAME"]
    lines += [f"       {name} - a tool for tests", "", "SYNOPSIS", f"       {name} [OPTION]... FILE", ""]
    lines += ["DESCRIPTION", f"       {name} copies files between hosts on a network.", ""]
    for term, desc in options:
        lines += [f"       {term}", f"              {desc}", ""]
    lines += [f"tests 1.0                        May 2026                    {upper}(1)", ""]
    return "\n".join(lines)


SCP = [
    ("-P port", "Specifies the port to connect to on the remote host. Note the capital P."),
    ("-C", "Compression enable. Passes the flag to ssh."),
    ("-l limit", "Limits the used bandwidth, specified in Kbit/s."),
    ("-q", "Quiet mode: disables the progress meter as well as warning and diagnostic messages."),
    ("-r", "Recursively copy entire directories."),
    ("-v", "Verbose mode. Causes the program to print debugging messages about its progress."),
    ("--help", "display this help and exit"),
]
XZ = [
    ("-T threads, --threads=threads", "Specify the number of worker threads to use."),
    ("-k, --keep", "Don't delete the input files."),
    ("-l, --list", "Print information about compressed files."),
    ("-d, --decompress", "Decompress the input files."),
]


@pytest.mark.unit
def test_an_entry_that_opens_with_a_verb_is_asked_for_and_others_are_left_out() -> None:
    term, verb, words = doc_sets._described(  # noqa: SLF001
        "-P port: Specifies the port to connect to on the remote host. Note the capital P."
    ) or ("", "", [])
    assert (term, verb, " ".join(words)) == ("-P port", "specify", "the port to connect to on the remote host")
    assert doc_sets._described("-r: Recursively copy entire directories.") is None  # noqa: SLF001
    assert doc_sets._described("--help: display this help and exit") is None  # noqa: SLF001
    assert doc_sets._described("-k, --keep: Don't delete the input files.") is None  # noqa: SLF001
    assert doc_sets._described("-n: Do not print anything.") is None  # noqa: SLF001
    assert doc_sets._described("Verbose mode.") is None  # noqa: SLF001


@pytest.mark.unit
def test_the_templates_ask_with_the_verb_and_sometimes_a_value_the_user_has() -> None:
    words = "the port to connect to on the remote host".split()
    asked = {doc_sets.question("scp", "-P port", "specify", words, random.Random(seed)) for seed in range(200)}
    assert "How do I specify the port to connect to on the remote host with scp?" in asked
    assert "Which scp option specifies the port to connect to on the remote host?" in asked
    assert any(q.endswith("? — scp") for q in asked)  # a follow-up as the rewriter writes one
    assert any(q.startswith("The server listens on port ") for q in asked)
    assert all("?" in q for q in asked)
    assert doc_sets._third("do") == "does" and doc_sets._third("copy") == "copies"  # noqa: SLF001


@pytest.mark.unit
def test_pairs_hold_the_entry_answering_and_other_windows_not(tmp_path: Path) -> None:
    (tmp_path / "man-scp.txt").write_text(_page("scp", SCP), encoding="utf-8")
    (tmp_path / "man-xz.txt").write_text(_page("xz", XZ), encoding="utf-8")
    tok = WordPiece(ROOT / "filters_models" / CROSS_TOKENIZER_FILE)
    pages = sorted(tmp_path.glob("*.txt"))
    pairs = doc_sets.pairs(pages, tok)
    assert pairs == doc_sets.pairs(pages, tok)  # seeded: a rerun builds the same pairs
    entries = [p for p in pairs if p.kind == "entry"]
    assert entries and all(p.label == 1 and p.source == "manpages" for p in entries)
    assert any("Specifies the port to connect to" in p.text for p in entries)
    assert not any("help" in p.query for p in pairs)
    assert all(p.label == 0 for p in pairs if p.kind != "entry")
    assert {p.split for p in pairs if "scp" in p.query} <= {doc_sets.split_of("scp")}
