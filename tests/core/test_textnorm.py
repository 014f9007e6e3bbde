"""lexical_form (CJK bigrams for BM25) and normalize_for_dedup."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assistant_bridge.core.textnorm import lexical_form, normalize_for_dedup

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("経費精算", "経費 費精 精算"),
        ("経", "経"),
        ("パスワード", "パス スワ ワー ード"),
        ("精算の方法", "精算 算の の方 方法"),
        ("VPNの設定", "vpn の設 設定"),
        ("経費。精算", "経費 。 精算"),
        ("ﾊﾟｽﾜｰﾄﾞ", "パス スワ ワー ード"),  # half-width Katakana is widened by NFKC
        ("ＶＰＮ　設定", "vpn 設定"),  # full-width Latin and ideographic space
        ("Remote Work Policy", "remote work policy"),
        ("Congés PAYÉS, l'été", "congés payés, l'été"),
        ("a経b", "a 経 b"),
        ("経費精\n算", "経費 費精 精算"),  # a paragraph wrapped at a fixed width: one run
        ("経費精 \r\n  算", "経費 費精 精算"),
        ("経費\n\n精算", "経費\n\n精算"),  # a blank line ends a paragraph
        ("経費\nVPN", "経費\nvpn"),
        ("", ""),
    ],
)
def test_lexical_form_examples(text: str, expected: str) -> None:
    assert lexical_form(text) == expected


def test_lexical_form_is_idempotent_on_latin_and_applies_same_to_query_and_document() -> None:
    document = lexical_form("経費精算システムにログインします")
    query = lexical_form("経費精算")
    assert all(token in document.split() for token in query.split())


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60))
def test_lexical_form_never_merges_cjk_with_neighbours(text: str) -> None:
    for token in lexical_form(text).split():
        cjk = [c for c in token if "\u3040" <= c <= "\u30ff" or "\u4e00" <= c <= "\u9fff"]
        assert not cjk or len(token) <= 2


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Reset your password.", "  reset YOUR   password "),
        ("«Les congés»", "les congés…"),
        ("…the VPN client…", "The VPN client"),
        ("ＶＰＮの設定", "VPNの設定。"),
    ],
)
def test_normalize_for_dedup_collides_near_duplicates(a: str, b: str) -> None:
    assert normalize_for_dedup(a) == normalize_for_dedup(b)


def test_normalize_for_dedup_keeps_inner_punctuation_and_distinct_texts_apart() -> None:
    assert normalize_for_dedup("Dr. Smith's e-mail, please!") == "dr. smith's e-mail, please"
    assert normalize_for_dedup("Straße") == normalize_for_dedup("STRASSE")
    assert normalize_for_dedup("reset password") != normalize_for_dedup("reset passwords")
    assert normalize_for_dedup(" ... ") == ""


def test_a_chunks_title_and_text_are_two_runs_to_the_lexical_index() -> None:
    """Every backend indexes ``indexed_text(title, text)``: a Japanese title and a text that starts in Japanese make
    no bigram across them, as a wrapped line inside the text does."""
    from assistant_bridge.core.textnorm import indexed_text

    tokens = lexical_form(indexed_text("経費", "精算は\n月末まで")).split()
    assert "費精" not in tokens and "は月" in tokens and tokens[:2] == ["経費", "精算"]
    assert lexical_form(indexed_text(None, "VPN")).split() == ["vpn"]
