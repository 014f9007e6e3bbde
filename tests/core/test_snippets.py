"""build_snippets: IBM's §B.1 steps 1–3 and the choices made for OQ-6/OQ-7."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assistant_bridge.core.results import SearchResult
from assistant_bridge.core.snippets import MAX_SNIPPETS, Snippet, build_snippets

pytestmark = pytest.mark.unit


def r(title: str, body: str, highlights: list[str] | None = None) -> SearchResult:
    return SearchResult(title=title, body=body, highlight_body=None if highlights is None else tuple(highlights))


def test_body_is_the_snippet_without_highlight() -> None:
    assert build_snippets([r("T", "the body")]) == [Snippet("the body", "T", 0)]


def test_a_whole_chunk_of_the_service_knows_its_document_and_place_and_a_highlight_does_not() -> None:
    meta = {"document_id": "d1", "position": 3, "filename": "wc.1"}
    whole = SearchResult(title="T", body="the chunk", result_metadata=meta)
    assert build_snippets([whole]) == [Snippet("the chunk", "T", 0, None, "wc.1", "d1", 3)]
    piece = SearchResult(title="T", body="the chunk", highlight_body=("a passage",), result_metadata=meta)
    assert (build_snippets([piece])[0].document_id, build_snippets([piece])[0].position) == ("", None)
    other = SearchResult(title="T", body="x", result_metadata={"document_id": "d1", "position": "3"})
    assert build_snippets([other])[0].position is None  # a custom server's own keys are not read as places


def test_each_highlight_element_is_a_snippet_and_body_is_ignored() -> None:
    out = build_snippets([r("T", "full document body", ["first passage", "second passage"])])
    assert [s.text for s in out] == ["first passage", "second passage"]
    assert all(s.result_index == 0 and s.title == "T" for s in out)


def test_empty_highlight_list_falls_back_to_body() -> None:
    assert [s.text for s in build_snippets([r("T", "body text", [])])] == ["body text"]


def test_order_is_results_first_to_last_then_highlight_order() -> None:
    results = [r("A", "a body", ["a1", "a2"]), r("B", "b body"), r("C", "c body", ["c1"])]
    out = build_snippets(results)
    assert [(s.text, s.result_index) for s in out] == [("a1", 0), ("a2", 0), ("b body", 1), ("c1", 2)]


def test_stops_at_five() -> None:
    results = [r(f"T{i}", f"body {i}", [f"h{i}a", f"h{i}b"]) for i in range(4)]
    out = build_snippets(results)
    assert len(out) == MAX_SNIPPETS == 5
    assert [s.text for s in out] == ["h0a", "h0b", "h1a", "h1b", "h2a"]


def test_max_snippets_parameter_and_its_validation() -> None:
    results = [r("T", f"body {i}") for i in range(4)]
    assert len(build_snippets(results, max_snippets=2)) == 2
    with pytest.raises(ValueError):
        build_snippets(results, max_snippets=0)


def test_duplicates_dropped_after_normalisation_first_kept() -> None:
    results = [
        r("A", "x", ["Reset your password in Settings."]),
        r("B", "  reset   YOUR password in settings…  "),
        r("C", "ＲＥＳＥＴ your password in Settings"),  # full-width letters: equal after NFKC
        r("D", "Reset your account in Settings."),
    ]
    out = build_snippets(results)
    assert [(s.text, s.result_index) for s in out] == [
        ("Reset your password in Settings.", 0),
        ("Reset your account in Settings.", 3),
    ]


def test_duplicates_do_not_count_towards_five() -> None:
    results = [r("A", "same")] * 6 + [r(f"B{i}", f"other {i}") for i in range(5)]
    out = build_snippets(results)
    assert [s.text for s in out] == ["same", "other 0", "other 1", "other 2", "other 3"]
    assert out[1].result_index == 6


def test_blank_snippets_skipped() -> None:
    results = [r("A", "   "), r("B", "x", ["", " \n ", "…", "real one"]), r("C", "")]
    assert [(s.text, s.result_index) for s in build_snippets(results)] == [("real one", 1)]


def test_text_is_stripped_but_not_truncated() -> None:
    long = "word " * 2000
    out = build_snippets([r("A", "  padded  "), r("B", long)])
    assert out[0].text == "padded"
    assert out[1].text == long.strip()


def test_no_results_no_snippets() -> None:
    assert build_snippets([]) == []


@given(
    st.lists(
        st.tuples(
            st.text(max_size=20),
            st.one_of(st.none(), st.lists(st.sampled_from(["a", "A ", "b", "", "c.", "d", "e", "f"]), max_size=4)),
        ),
        max_size=8,
    )
)
def test_invariants_hold_for_any_results(items: list[tuple[str, list[str] | None]]) -> None:
    from assistant_bridge.core.textnorm import normalize_for_dedup

    results = [r("t", body, hl) for body, hl in items]
    out = build_snippets(results)
    keys = [normalize_for_dedup(s.text) for s in out]
    assert len(out) <= 5
    assert all(keys) and len(set(keys)) == len(keys)
    assert [s.result_index for s in out] == sorted(s.result_index for s in out)


def test_each_snippet_carries_its_results_dense_similarity() -> None:
    from assistant_bridge.core.custom_search import result_of_hit
    from assistant_bridge.domain import Chunk, SearchHit

    chunk = Chunk(id="c1", document_id="d1", text="Reset your password from the portal.", title="Passwords")
    hit = SearchHit(chunk=chunk, score=0.83, similarity=0.83)
    result = result_of_hit(hit, "password")
    assert result.similarity == 0.83 and result.id == "c1"
    assert "similarity" not in result.to_json()  # never on the wire
    assert SearchResult.from_json(result.to_json()).similarity is None
    with_highlights = SearchResult("T", "body", highlight_body=("one", "two"), similarity=0.7)
    assert [s.similarity for s in build_snippets([with_highlights, r("U", "three")])] == [0.7, 0.7, None]
