"""The shipped sample corpus parses, is labelled correctly and stays within its size budget."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from assistant_bridge.core.chunking import chunk_document
from assistant_bridge.core.textnorm import lexical_form
from assistant_bridge.ingest import SAMPLE_CORPUS_DIR, parse_file, sample_corpus_files, sample_corpus_manifest

pytestmark = pytest.mark.unit

_JA = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")


def _word_count(text: str) -> int:
    # Japanese has no spaces: count two characters as one word, a common rule of thumb.
    return len(text.split()) + len(_JA.findall(text)) // 2


def test_manifest_lists_every_file_once() -> None:
    files = sample_corpus_files()
    on_disk = sorted(p.name for p in SAMPLE_CORPUS_DIR.iterdir() if p.name != "manifest.json")
    assert sorted(p.name for p in files) == on_disk
    assert all(p.is_file() for p in files)
    languages = Counter(entry["language"] for entry in sample_corpus_manifest())
    assert all(languages[lang] >= 2 for lang in ("en", "fr", "ja"))
    suffixes = Counter(p.suffix for p in files)
    assert suffixes[".pdf"] == 1 and suffixes[".vtt"] == 1
    assert {".md", ".txt", ".html"} <= set(suffixes)


@pytest.mark.parametrize("entry", sample_corpus_manifest(), ids=lambda entry: entry["file"])
def test_each_document_parses_with_manifest_title_and_language(entry: dict[str, str]) -> None:
    path = SAMPLE_CORPUS_DIR / entry["file"]
    doc = parse_file(path.name, path.read_bytes())
    assert doc.title == entry["title"]
    assert doc.language == entry["language"]
    assert 150 <= _word_count(doc.text) <= 600
    chunks = chunk_document(doc)
    assert chunks and chunks[0].start_char == 0
    if path.suffix == ".pdf":
        assert {s.page_number for s in doc.segments} == {1, 2}
        assert any(len(c.bboxes) == 2 for c in chunk_document(doc, max_tokens=120, overlap_tokens=20))
    if path.suffix == ".vtt":
        assert doc.modality == "video_transcript"
        assert chunks[0].start_time == 0.0 and chunks[-1].end_time == doc.segments[-1].end_time


def test_japanese_expense_and_password_documents_hold_the_bm25_probe_terms() -> None:
    expense = parse_file("keihi-seisan.md", (SAMPLE_CORPUS_DIR / "keihi-seisan.md").read_bytes())
    password = parse_file("password-saisettei.txt", (SAMPLE_CORPUS_DIR / "password-saisettei.txt").read_bytes())
    assert "経費 費精 精算" in lexical_form(expense.text)
    assert "パス スワ ワー ード" in lexical_form(password.text)
