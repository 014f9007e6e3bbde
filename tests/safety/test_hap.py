"""The HAP word-list scorer (English, French, Japanese; obfuscations; known false positives kept out) and the
per-assistant check."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assistant_bridge.errors import ConfigurationError
from assistant_bridge.safety import FakeHapScorer, HapCheck, HapSettings, HapStage, WordListScorer
from assistant_bridge.safety.hap import latin_words
from tests.scaling import assert_linear

pytestmark = pytest.mark.unit
SCORER = WordListScorer()


def score(text: str) -> float:
    return SCORER.score(text).score


@pytest.mark.parametrize(
    "text",
    [
        "How do I reset my password?",
        "Scunthorpe United won the match",  # the classic substring false positive
        "The assessment of our class assets",  # ass inside words
        "I love cocktails and the Cockburn report",  # cock inside words
        "The fire retardant was applied",  # retard inside a word
        "Many people were killed in the war",  # violence reported, no group slur
        "Submit expense reports within 30 days.",
        "Le taux normal de TVA est de 20 %.",
        "カスタマーサポートに連絡してください",  # カス inside カスタマー
        "特定群のパッケージにフォーカスしたチーム",  # カス ending フォーカス (focus)
        "ダマスカスの歴史",
        "アーカイブ中の 0 ばかりからなるブロックを無視します。",  # ばかり: "only"
        "1 桁の数は ibase の値に関係なくその値を持ちます",  # くそ across なく and その
        "電気代は馬鹿にならない",  # an ordinary idiom
        "ばかばかしい話ですね",
        "チョンマゲの歴史",
        "このままでは死ねない",
        "",
    ],
)
def test_clean_texts_score_zero(text: str) -> None:
    assert score(text) == 0.0


@pytest.mark.parametrize(
    "text",
    [
        "This is shit",
        "sh1t happens",
        "$hit!",
        "f.u.c.k this",
        "f u c k",
        "fuuuuuck",
        "f*ck off",
        "FUCK YOU",
        "you are an idiot",
        "you're a b1tch",
        "kill yourself",
        "what a c*nt",
        "Putain, c'est nul",
        "T'es qu'un connard",
        "va te faire foutre",
        "ferme ta gueule",
        "お前はバカだ",
        "死ね",
        "ぶっ殺すぞ",
        "くたばれ",
        "immigrants are vermin",
        "Les immigrés sont de la vermine",
        "外国人は出ていけ",
    ],
)
def test_offensive_texts_reach_the_default_threshold(text: str) -> None:
    assert score(text) >= 0.5, SCORER.score(text)


def test_weights_directed_insults_and_accumulation() -> None:
    assert score("he is an idiot") < 0.5 <= score("you are an idiot")
    assert score("damn") < score("damn crap") < score("damn crap shit")
    assert score("Dick Cheney was vice president") < 0.5  # an ambiguous word alone stays under the default
    assert SCORER.score("immigrants are vermin").categories == ("hate",)
    assert SCORER.score("お前はバカだ").categories == ("abuse",)
    assert SCORER.score("shit, you idiot").categories == ("abuse", "profanity")


def test_a_phrase_counts_once() -> None:
    assert SCORER.score("va te faire foutre").matches == 1


def test_obfuscated_words_are_recovered() -> None:
    forms = latin_words("f-u-c-k sh!t @ss s h i t")
    assert "fuck" in forms[0] and "shit" in forms[1] and "ass" in forms[2] and "shit" in forms[3]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_score_is_in_range_for_any_text(text: str) -> None:
    result = SCORER.score(text)
    assert 0.0 <= result.score <= 1.0 and result.matches >= 0


def test_scoring_time_grows_linearly_with_the_text() -> None:
    sentence = "the company reported strong quarterly earnings and the share price rose, f u c k"
    assert_linear(lambda n: SCORER.score(" ".join([sentence] * n)), 30)


def test_settings_defaults_and_validation() -> None:
    default = HapSettings.from_mapping(None)
    assert default.input == HapStage(False, 0.5) and default.output == HapStage(True, 0.5)
    custom = HapSettings.from_mapping({"input": {"enabled": True, "threshold": 0.3}, "output": {"enabled": False}})
    assert custom.input == HapStage(True, 0.3) and custom.output == HapStage(False, 0.5)
    for bad in (0, -1, 1.5):
        with pytest.raises(ConfigurationError, match="hap_filtering.input.threshold"):
            HapSettings.from_mapping({"input": {"threshold": bad}})


def test_check_applies_enabled_and_threshold() -> None:
    fake = FakeHapScorer("rude", score=0.6)
    check = HapCheck(HapSettings(input=HapStage(True, 0.7), output=HapStage(True, 0.5)), fake)
    assert not check.check("input", "so rude").detected  # 0.6 < 0.7
    verdict = check.check("output", "so rude")
    assert (
        verdict.detected
        and verdict.score == 0.6
        and verdict.to_json()
        == {"enabled": True, "score": 0.6, "threshold": 0.5, "detected": True, "categories": ["abuse"]}
    )
    assert check.check("input", "so rude", threshold=0.6).detected
    off = HapCheck(HapSettings(), fake)
    calls = len(fake.texts)
    assert off.check("input", "so rude").to_json()["score"] is None and len(fake.texts) == calls
    assert not check.check("output", "polite").detected
