"""Question analysis and bridge-entity extraction of the embedded planner."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assistant_bridge.agentic.analysis import (
    Passage,
    about,
    analyze,
    bridge_candidates,
    junk_name,
    named_spans,
)

pytestmark = pytest.mark.unit


def test_comparison_with_or_names_each_entity() -> None:
    a = analyze("Which magazine was started first, Arthur's Magazine or First for Women?")
    assert a.kind == "comparison"
    assert a.entities == ("Arthur's Magazine", "First for Women")
    assert "started" in a.focus


def test_comparison_with_and_and_a_comparative_cue() -> None:
    a = analyze("Were Scott Derrickson and Ed Wood of the same nationality?")
    assert a.kind == "comparison"
    assert a.entities == ("Scott Derrickson", "Ed Wood")


def test_two_names_joined_by_and_without_a_cue_is_not_a_comparison() -> None:
    a = analyze('What screenwriter with credits for "Evolution" co-wrote a film starring Nicolas Cage and Téa Leoni?')
    assert a.kind == "single"
    assert {"Evolution", "Nicolas Cage", "Téa Leoni"} <= set(a.entities)


def test_conjunction_splits_into_clauses() -> None:
    a = analyze("Who was the writer of These Boots Are Made for Walkin' and who died in 2007?")
    assert a.kind == "conjunction"
    assert len(a.clauses) == 2
    assert a.clauses[0].startswith("Who was the writer of These Boots")
    assert a.clauses[1] == "who died in 2007"


def test_bridge_question_has_a_cue_and_its_named_entities() -> None:
    a = analyze("The football manager who recruited David Beckham managed Manchester United during what timeframe?")
    assert a.kind == "single" and a.bridge_cue
    assert a.entities == ("David Beckham", "Manchester United")
    assert "manager" in a.focus and "david" not in a.focus


def test_plain_question_has_no_bridge_cue() -> None:
    a = analyze("How do I reset my password?")
    assert (a.kind, a.entities, a.bridge_cue) == ("single", (), False)


@pytest.mark.parametrize(
    "q",
    [
        "Summarize the remote work policy",
        "Give me an overview of the VPN guide",
        "Résumer la politique de télétravail",
        "テレワーク規程を要約して",
    ],
)
def test_summary_requests_are_recognised(q: str) -> None:
    assert analyze(q).summary


def test_named_spans_keep_connectors_and_quotes_and_drop_a_leading_year() -> None:
    spans = [s.text for s in named_spans('In 1991 Euromarché was sold to "The Big Chain" by the Bank of France.')]
    assert spans == ["Euromarché", "The Big Chain", "Bank of France"]


def test_bridge_candidates_prefer_names_near_the_question_words() -> None:
    passage = Passage(
        "David Beckham",
        "David Robert Joseph Beckham is an English former footballer. He joined "
        "Manchester United after being recruited by Alex Ferguson in 1991. He later played for Real Madrid.",
    )
    found = bridge_candidates(
        "The football manager who recruited David Beckham managed Manchester United during what timeframe?",
        [passage],
        limit=2,
    )
    assert found[0] == "Alex Ferguson"
    assert all(n not in ("David Robert Joseph Beckham", "English", "1991", "Manchester United") for n in found)


def test_bridge_candidates_skip_names_already_searched() -> None:
    passage = Passage("X", "It was built by Alice Smith. It was sold to Bob Jones.")
    assert "Alice Smith" not in bridge_candidates("Who bought the thing?", [passage], exclude=["Alice Smith"])


@pytest.mark.parametrize("name", ["4 January 1866", "British", "South Korean", "1991", "King", "the of"])
def test_junk_names(name: str) -> None:
    assert junk_name(name)


@pytest.mark.parametrize(
    "title,name,expected",
    [
        ("Bangor, Maine", "Bangor", True),
        ("Evolution (2001 film)", "Evolution", True),
        ("George V", "King George V", True),
        ("David Beckham (footballer)", "David Beckham", True),
        ("British people", "British", False),
        ("Manchester United F.C.", "Manchester", False),
        ("", "x", False),
    ],
)
def test_about(title: str, name: str, expected: bool) -> None:
    assert about(title, name) is expected


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_analysis_never_raises(text: str) -> None:
    a = analyze(text)
    assert a.kind in ("comparison", "conjunction", "single")
    bridge_candidates(text, [Passage(text[:20], text)])
