"""Citations: ranges, [n] markers (batch and streamed), extractiveness, sentence spans."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assistant_bridge.core.citations import (
    Citation,
    MarkerStripper,
    citations_from_markers,
    extractiveness,
    strip_markers,
    word_tokens,
)
from assistant_bridge.core.snippets import Snippet
from assistant_bridge.text import sentence_spans, split_sentences

pytestmark = pytest.mark.unit

SNIPPETS = [
    Snippet("Paris is the capital of France.", "France", 0),
    Snippet("It has 2 million people.", "Paris", 3),
    Snippet("The Seine flows through it.", "Seine", 4),
]


def assert_valid(text: str, citations: tuple[Citation, ...]) -> None:
    for c in citations:
        for start, end in c.ranges:
            assert 0 <= start < end <= len(text)
            assert text[start:end] == text[start:end].strip()


def test_markers_are_stripped_and_each_sentence_cited() -> None:
    text, cits = citations_from_markers(
        "Paris is the capital [1]. It is big.[2][3] The river is the Seine [1, 3].", SNIPPETS
    )
    assert text == "Paris is the capital. It is big. The river is the Seine."
    assert_valid(text, cits)
    pairs = [(text[c.ranges[0][0] : c.ranges[0][1]], c.search_result_index) for c in cits]
    assert pairs == [
        ("Paris is the capital.", 0),
        ("It is big.", 3),
        ("It is big.", 4),
        ("The river is the Seine.", 0),
        ("The river is the Seine.", 4),
    ]
    assert cits[0].title == "France" and cits[0].text == SNIPPETS[0].text


def test_end_is_exclusive() -> None:
    text, cits = citations_from_markers("Only one sentence [2]", SNIPPETS)
    assert text == "Only one sentence"
    assert cits[0].ranges == ((0, len(text)),)
    assert cits[0].to_json()["ranges"] == [{"start": 0, "end": 17}]


def test_out_of_range_and_zero_markers_are_removed_but_not_cited() -> None:
    text, cits = citations_from_markers("A claim [0]. Another [9]. Fine [2].", SNIPPETS)
    assert text == "A claim. Another. Fine."
    assert [c.search_result_index for c in cits] == [3]


def test_marker_ranges_and_semicolons() -> None:
    text, cits = citations_from_markers("Everything [1-3]. Some [1; 2].", SNIPPETS)
    assert text == "Everything. Some."
    assert sorted(c.search_result_index for c in cits if c.ranges[0][0] == 0) == [0, 3, 4]
    assert sorted(c.search_result_index for c in cits if c.ranges[0][0] > 0) == [0, 3]


def test_no_markers_no_citations_and_text_unchanged() -> None:
    assert citations_from_markers("Plain answer with [brackets] kept.", SNIPPETS) == (
        "Plain answer with [brackets] kept.",
        (),
    )


def test_leading_marker_cites_first_sentence_and_repeats_are_merged() -> None:
    text, cits = citations_from_markers("[1] Paris.[1] Second one.", SNIPPETS)
    assert text == "Paris. Second one."
    assert len(cits) == 1 and cits[0].ranges == ((0, 6),)


def test_strip_markers_offsets() -> None:
    text, markers = strip_markers("ab [1] cd[2]")
    assert text == "ab cd"
    assert markers == [(2, [1]), (5, [2])]


@given(st.text(alphabet="ab .[]1,2-\n", max_size=40), st.data())
def test_streamed_stripping_equals_batch(text: str, data: st.DataObject) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=6)))
    parts = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=False)]
    stripper = MarkerStripper()
    streamed = "".join(stripper.feed(p) for p in parts) + stripper.flush()
    assert streamed == strip_markers(text)[0]


def test_stripper_holds_back_a_partial_marker() -> None:
    s = MarkerStripper()
    assert s.feed("Paris is big [") == "Paris is big"
    assert s.feed("1") == ""
    assert s.feed("]. Next") == ". Next"
    assert s.flush() == ""


def test_extractiveness_copied_sentence_is_one() -> None:
    source = "The Eiffel Tower was completed in 1889 for the World's Fair."
    assert extractiveness("The Eiffel Tower was completed in 1889 for the World's Fair.", [source]) == 1.0
    assert extractiveness("the eiffel tower WAS completed in 1889", ["x", source]) == 1.0


def test_extractiveness_unrelated_is_zero_and_partial_in_between() -> None:
    source = "The Eiffel Tower was completed in 1889 for the World's Fair."
    assert extractiveness("Bananas grow on large herbaceous flowering plants.", [source]) == 0.0
    partial = extractiveness("The Eiffel Tower was completed in 1889 but bananas are yellow fruit.", [source])
    assert 0.3 < partial < 0.8
    assert extractiveness("", [source]) == 0.0
    assert extractiveness("anything at all", []) == 0.0


def test_extractiveness_short_answers_need_a_whole_match() -> None:
    assert extractiveness("in 1889", ["completed in 1889 ."]) == 1.0
    assert extractiveness("1889 in", ["completed in 1889 ."]) == 0.0


def test_extractiveness_sequences_do_not_span_sources() -> None:
    assert extractiveness("alpha beta gamma", ["alpha beta", "gamma delta"]) == 0.0


def test_extractiveness_is_cjk_aware() -> None:
    source = "経費精算書は30日以内に提出しなければなりません。"
    assert extractiveness("経費精算書は30日以内に提出", [source]) == 1.0
    assert extractiveness("今日はとても良い天気です", [source]) == 0.0
    assert word_tokens("VPNの設定")[:2] == ["vpn", "の"]


def test_sentence_spans_common_cases() -> None:
    text = "Dr. Smith arrived at 3.5 p.m. today. J. K. Rowling wrote it! Did she? Yes.\n\nNew para 東京です。京都です。"
    assert split_sentences(text) == [
        "Dr. Smith arrived at 3.5 p.m. today.",
        "J. K. Rowling wrote it!",
        "Did she?",
        "Yes.",
        "New para 東京です。",
        "京都です。",
    ]
    for start, end in sentence_spans(text):
        assert text[start:end] == text[start:end].strip()


def test_a_dotted_abbreviation_does_not_end_a_sentence() -> None:
    """A dotted "i.e." or "e.g." before a number or a capital goes on with the sentence: "The size of a SHA224 digest, i.e.
    28." is one sentence (its number is the answer); initials and other dotted words are as before."""
    assert split_sentences("The size of a SHA224 digest, i.e. 28. Use a tool, e.g. Grep. The U.S. Army won.") == [
        "The size of a SHA224 digest, i.e. 28.",
        "Use a tool, e.g. Grep.",
        "The U.S. Army won.",
    ]
    assert split_sentences("It ends at 5 p.m. Then we leave.") == ["It ends at 5 p.m.", "Then we leave."]


def test_an_entry_term_with_one_word_goes_on_with_the_next_sentence() -> None:
    """An Info manual's entry names what it does in one word first ("--test, -t: Test. Check the compressed file
    integrity."): that word is no sentence of its own, and the entry keeps what it does."""
    assert split_sentences("--test, -t: Test. Check the compressed file integrity. It is fast.") == [
        "--test, -t: Test. Check the compressed file integrity.",
        "It is fast.",
    ]
    assert split_sentences("Note: see below. Then go on.") == ["Note: see below.", "Then go on."]


def test_sentence_spans_lower_case_continuation_and_long_lists() -> None:
    assert split_sentences("It costs approx. five dollars. e.g. not split. Next one.") == [
        "It costs approx. five dollars. e.g. not split.",
        "Next one.",
    ]
    listing = "\n".join(f"item number {i} has a long description without full stops" for i in range(12))
    parts = split_sentences(listing)
    assert len(parts) == 12 and all(len(p) < 400 for p in parts)


def test_indentation_does_not_count_towards_a_long_sentence() -> None:
    code = "menuentry 'Debian' {\n" + "".join(f"        insmod module_{i}\n" for i in range(20)) + "}"
    assert len(code) > 400 and len(split_sentences(code)) == 1  # 20 short lines: one block, as without indentation


def test_a_footnote_mark_after_a_full_stop_ends_the_sentence_with_it() -> None:
    text = "Il ne construit que les paquets de l'architecture.⁴ Cette distinction compte. It is O(N²) at worst."
    assert split_sentences(text) == [
        "Il ne construit que les paquets de l'architecture.⁴",
        "Cette distinction compte.",
        "It is O(N²) at worst.",
    ]


def test_sentence_spans_empty() -> None:
    assert sentence_spans("") == [] and sentence_spans("   \n ") == []
