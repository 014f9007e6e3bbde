"""Fakes, thresholds record and text helpers: no model needed."""

from __future__ import annotations

import pytest

from assistant_bridge.core.loop import SecondLookLike
from assistant_bridge.errors import ConfigurationError
from assistant_bridge.filters import FakePostFilter, FakePreFilter, PostFilter, PreFilter, Thresholds
from assistant_bridge.filters import frozen_text as tx

pytestmark = pytest.mark.unit


def test_fakes_satisfy_the_protocols() -> None:
    assert isinstance(FakePreFilter(), PreFilter)
    assert isinstance(FakePostFilter(), PostFilter)
    assert isinstance(FakePreFilter(), SecondLookLike)


def test_the_fake_second_look_vouches_for_what_it_was_given_within_the_snippets() -> None:
    assert FakePreFilter(0.1).second_look("q", ["a", "b"]) == []
    pre = FakePreFilter(0.1, vouched=[(1, 0.95), (4, 0.99)])
    assert pre.second_look("q", ["a", "b"]) == [(1, 0.95)]


def test_fixed_fake_returns_its_score_and_records_calls() -> None:
    pre = FakePreFilter(0.25)
    assert pre.score("q", ["a", "b"]) == 0.25
    assert pre.calls == [("q", ("a", "b"))]
    pre.warm_up()
    assert pre.warmed


def test_lexical_fakes_prefer_overlap() -> None:
    pre, post = FakePreFilter(), FakePostFilter()
    snippets = ["Passwords are reset from Settings > Security."]
    assert pre.score("How do I reset my password?", snippets) > pre.score("What is the canteen menu?", snippets)
    assert post.score("q", snippets, "Reset passwords from Settings.") > post.score("q", snippets, "Call the CEO.")
    assert pre.score("anything", []) == 0.0
    assert post.score("q", snippets, "") == 0.0


def test_thresholds_are_validated() -> None:
    assert Thresholds(pre_gen=0.2, post_gen=0.5).pre_gen == 0.2
    with pytest.raises(ConfigurationError):
        Thresholds(pre_gen=1.5, post_gen=0.5)
    with pytest.raises(ConfigurationError):
        Thresholds(pre_gen=0.1, post_gen=-0.1)
    assert Thresholds(pre_gen=0.2, post_gen=0.5).pre_gen_low_coverage is None
    with pytest.raises(ConfigurationError):
        Thresholds(pre_gen=0.2, post_gen=0.5, pre_gen_low_coverage=2.0)


def test_tokens_use_bigrams_for_japanese() -> None:
    assert "梅雨" in tx.tokens("日本の梅雨は長い")
    assert tx.content_tokens("Quel ruisseau débute à Villejust ?") == ["ruisseau", "débute", "villejust"]


def test_sentences_split_in_three_languages_and_long_ones_are_cut() -> None:
    assert tx.split_sentences("One here. Two there! 三つ目。四つ目。") == [
        "One here.",
        "Two there!",
        "三つ目。",
        "四つ目。",
    ]
    pieces = tx.split_sentences("word " * 1000)
    assert all(len(p) <= tx.MAX_SENTENCE_CHARS for p in pieces) and len(pieces) > 5


def test_clean_snippets_bounds_and_drops_empties() -> None:
    out = tx.clean_snippets(["", "   ", "x" * 100_000, "ok\x00\x07 text"] + ["more"] * 20)
    assert len(out) <= tx.MAX_SNIPPETS
    assert all(s and len(s) <= tx.MAX_SNIPPET_CHARS for s in out)
    assert "ok text" in out


def test_question_types() -> None:
    assert tx.question_type("When did it open?") == "when"
    assert tx.question_type("Combien de salariés ?") == "number"
    assert tx.question_type("誰が発明したか。") == "who"
    assert tx.question_type("Why is the sky blue?") == "other"


def test_numbers_ignore_separators() -> None:
    assert tx.numbers("1,200 people in 2019") == {"1200", "2019"}
