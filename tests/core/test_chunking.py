"""chunk_document: sentence packing, overlap, size bounds, locations and the coverage invariant."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assistant_bridge.core.chunking import ChunkDraft, approximate_tokens, chunk_document
from assistant_bridge.domain import BBox
from assistant_bridge.ingest import ParsedDocument, Segment, parse_file
from assistant_bridge.text import sentence_spans

pytestmark = pytest.mark.unit

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _doc(text: str, **kwargs: object) -> ParsedDocument:
    return ParsedDocument(title="t", text=text, **kwargs)  # type: ignore[arg-type]


def _check_invariants(doc: ParsedDocument, chunks: list[ChunkDraft], max_tokens: int, count=approximate_tokens) -> None:
    assert [c.position for c in chunks] == list(range(len(chunks)))
    covered = bytearray(len(doc.text))
    previous_start = -1
    for chunk in chunks:
        assert chunk.text == doc.text[chunk.start_char : chunk.end_char]
        assert chunk.text and chunk.text == chunk.text.strip()
        assert chunk.start_char > previous_start
        previous_start = chunk.start_char
        if len(chunk.text) > 1:
            assert count(chunk.text) <= max_tokens
        covered[chunk.start_char : chunk.end_char] = b"\x01" * (chunk.end_char - chunk.start_char)
    for index, char in enumerate(doc.text):
        if not char.isspace():
            assert covered[index], f"character {index} ({char!r}) is in no chunk"


def test_approximate_tokens_counts_words_and_cjk_characters() -> None:
    assert approximate_tokens("Reset your password, then sign in.") == 6
    assert approximate_tokens("経費精算") == 4
    assert approximate_tokens("VPNの設定 OK") == 5
    assert approximate_tokens("   ") == 0


def test_sentence_spans_english_french_japanese() -> None:
    text = "First one. Second e.g. still second! Third?\n\nNew paragraph without stop\nContinues here"
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        "First one.",
        "Second e.g. still second!",
        "Third?",
        "New paragraph without stop\nContinues here",
    ]
    french = "Vous partez en congés ? Déposez la demande ! « Merci. » Ensuite, rien."
    assert [french[a:b] for a, b in sentence_spans(french)] == [
        "Vous partez en congés ?",
        "Déposez la demande !",
        "« Merci. »",
        "Ensuite, rien.",
    ]
    japanese = "経費を精算します。領収書は必要？「はい」と答えてください！最後"
    assert [japanese[a:b] for a, b in sentence_spans(japanese)] == [
        "経費を精算します。",
        "領収書は必要？",
        "「はい」と答えてください！",
        "最後",
    ]
    assert sentence_spans("Version 3.5 is out.") == [(0, 19)]


def test_packs_whole_sentences_with_sentence_overlap() -> None:
    sentences = [f"Sentence number {i} has exactly seven words." for i in range(10)]
    doc = _doc(" ".join(sentences))
    chunks = chunk_document(doc, max_tokens=21, overlap_tokens=7)
    _check_invariants(doc, chunks, 21)
    assert [c.text for c in chunks[:2]] == [" ".join(sentences[0:3]), " ".join(sentences[2:5])]
    assert chunks[-1].text.endswith(sentences[-1])
    no_overlap = chunk_document(doc, max_tokens=21, overlap_tokens=0)
    assert [c.text for c in no_overlap] == [" ".join(sentences[i : i + 3]) for i in (0, 3, 6)] + [sentences[9]]


def test_single_chunk_for_short_text_and_empty_for_blank() -> None:
    assert [c.text for c in chunk_document(_doc("  Short text.  "))] == ["Short text."]
    assert chunk_document(_doc(" \n\t ")) == []


def test_long_sentence_is_split_by_words_and_long_word_by_characters() -> None:
    words = " ".join(f"w{i}" for i in range(25))
    doc = _doc(words + ". " + "x" * 30)
    chunks = chunk_document(doc, max_tokens=10, overlap_tokens=0, count_tokens=lambda s: max(1, len(s) // 3))
    _check_invariants(doc, chunks, 10, count=lambda s: max(1, len(s) // 3))
    assert all(len(c.text) <= 32 for c in chunks)
    assert chunks[-1].text == "x" * len(chunks[-1].text)
    assert "".join(c.text for c in chunks if c.text.startswith("x")) == "x" * 30


def test_japanese_text_is_chunked_on_sentence_ends_by_character_count() -> None:
    sentence = "経費は三十日以内に申請してください。"  # 17 CJK characters + 。
    doc = _doc(sentence * 6, language="ja")
    chunks = chunk_document(doc, max_tokens=40, overlap_tokens=18)
    _check_invariants(doc, chunks, 40)
    assert all(c.text.endswith("。") for c in chunks)
    assert chunks[0].text == sentence * 2
    assert chunks[1].text == sentence * 2  # starts with the overlapping sentence
    assert chunks[1].start_char == len(sentence)
    unbroken = _doc("あ" * 95)
    pieces = chunk_document(unbroken, max_tokens=40, overlap_tokens=0)
    assert [len(c.text) for c in pieces] == [40, 40, 15]


def test_chunk_spanning_two_pdf_pages_has_one_box_per_page() -> None:
    doc = parse_file("two_pages.pdf", (FIXTURES / "two_pages.pdf").read_bytes())
    chunks = chunk_document(doc, max_tokens=40, overlap_tokens=0)
    _check_invariants(doc, chunks, 40)
    spanning = [c for c in chunks if "Taxis are allowed" in c.text]
    assert len(spanning) == 1
    chunk = spanning[0]
    assert "the trip starts before six" in chunk.text  # the sentence continues on page 2
    assert chunk.page_number == 1
    assert [box.page_number for box in chunk.bboxes] == [1, 2]
    page_one, page_two = chunk.bboxes
    line_boxes = {s.bboxes[0] for s in doc.segments if s.start_char < chunk.end_char and s.end_char > chunk.start_char}
    assert page_one.y2 == max(b.y2 for b in line_boxes if b.page_number == 1)  # union of the covered lines
    assert page_two.y1 < 100  # the continuation is at the top of page 2
    assert chunks[0].page_number == 1 and chunks[0].bboxes[0].y1 < 100


def test_boxes_are_merged_per_page() -> None:
    text = "Line one here. Line two here. Line three here."
    segments = (
        Segment(0, 14, page_number=3, bboxes=(BBox(3, 10, 10, 100, 20, 600, 800),)),
        Segment(15, 29, page_number=3, bboxes=(BBox(3, 20, 25, 90, 35, 600, 800),)),
        Segment(30, 46, page_number=4, bboxes=(BBox(4, 5, 5, 50, 15, 600, 800),)),
    )
    (chunk,) = chunk_document(_doc(text, segments=segments))
    assert chunk.page_number == 3
    assert chunk.bboxes == (BBox(3, 10, 10, 100, 35, 600, 800), BBox(4, 5, 5, 50, 15, 600, 800))
    (first,) = chunk_document(_doc("Line one here.", segments=segments[:1]))
    assert first.bboxes == segments[0].bboxes


def test_transcripts_chunk_by_cue_with_first_and_last_cue_times() -> None:
    cues = [f"Cue {i} says something useful about the VPN" for i in range(6)]  # 8 tokens each, no full stop
    text = "\n".join(cues)
    segments = []
    offset = 0
    for i, cue in enumerate(cues):
        segments.append(Segment(offset, offset + len(cue), start_time=float(i * 5), end_time=float(i * 5 + 4)))
        offset += len(cue) + 1
    doc = _doc(text, segments=tuple(segments), modality="video_transcript")
    chunks = chunk_document(doc, max_tokens=16, overlap_tokens=8)
    _check_invariants(doc, chunks, 16)
    assert [c.text for c in chunks] == ["\n".join(cues[i : i + 2]) for i in range(5)]
    assert [(c.start_time, c.end_time) for c in chunks] == [(i * 5.0, i * 5.0 + 9.0) for i in range(5)]
    assert all(c.page_number is None and c.bboxes == () for c in chunks)


def test_long_cue_is_split_and_keeps_its_times() -> None:
    text = "One two three four five six. Seven eight nine ten eleven twelve."
    doc = _doc(text, segments=(Segment(0, len(text), start_time=12.0, end_time=20.0),), modality="audio_transcript")
    chunks = chunk_document(doc, max_tokens=6, overlap_tokens=0)
    assert [c.text for c in chunks] == ["One two three four five six.", "Seven eight nine ten eleven twelve."]
    assert all((c.start_time, c.end_time) == (12.0, 20.0) for c in chunks)


def test_vtt_fixture_end_to_end() -> None:
    doc = parse_file("meeting.vtt", (FIXTURES / "meeting.vtt").read_bytes())
    (chunk,) = chunk_document(doc)
    assert (chunk.start_time, chunk.end_time) == (1.0, 3602.0)


@pytest.mark.parametrize(("max_tokens", "overlap"), [(0, 0), (10, 10), (10, -1)])
def test_rejects_bad_limits(max_tokens: int, overlap: int) -> None:
    with pytest.raises(ValueError):
        chunk_document(_doc("text"), max_tokens=max_tokens, overlap_tokens=overlap)


_ALPHABET = st.sampled_from(list("abcXYZ  \n\t.!?。、経費精算パスワードé«»") + ["e.g. ", " ?", "\n\n", "word "])
_TEXT = st.lists(_ALPHABET, max_size=400).map("".join)


@settings(max_examples=150, deadline=None)
@given(text=_TEXT, max_tokens=st.integers(1, 30), overlap_ratio=st.floats(0, 0.9))
def test_invariants_on_random_text(text: str, max_tokens: int, overlap_ratio: float) -> None:
    overlap = min(max_tokens - 1, int(max_tokens * overlap_ratio))
    doc = _doc(text)
    chunks = chunk_document(doc, max_tokens=max_tokens, overlap_tokens=overlap)
    _check_invariants(doc, chunks, max_tokens)


@settings(max_examples=60, deadline=None)
@given(cues=st.lists(_TEXT, min_size=1, max_size=8), max_tokens=st.integers(2, 20))
def test_invariants_on_random_transcripts(cues: list[str], max_tokens: int) -> None:
    text = "\n".join(cues)
    segments = []
    offset = 0
    for i, cue in enumerate(cues):
        if cue.strip():
            segments.append(Segment(offset, offset + len(cue), start_time=float(i), end_time=float(i) + 0.5))
        offset += len(cue) + 1
    doc = _doc(text, segments=tuple(segments), modality="video_transcript")
    chunks = chunk_document(doc, max_tokens=max_tokens, overlap_tokens=max_tokens // 3)
    _check_invariants(doc, chunks, max_tokens)
    for chunk in chunks:
        assert chunk.start_time is not None and chunk.end_time is not None
        assert chunk.start_time <= chunk.end_time
