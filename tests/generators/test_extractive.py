"""The extractive generator: right sentences, exact citations, lengths, languages, streaming."""

from __future__ import annotations

import pytest

from assistant_bridge.core.citations import extractiveness
from assistant_bridge.core.snippets import Snippet
from assistant_bridge.embedders.base import HashingEmbedder
from assistant_bridge.generators.extractive import ExtractiveGenerator, terms

pytestmark = pytest.mark.unit

VPN = Snippet(
    "The VPN client is available for Windows and macOS. To install it, download the installer from the IT "
    "portal. Sign in with your company SSO account after installation. The VPN must be connected before you "
    "open the finance tools. Support is available from 9 am to 5 pm.",
    "VPN setup guide",
    2,
)
EXPENSES = Snippet(
    "Expense reports must be submitted within 30 days. Receipts are required for every item above 25 euros. "
    "Managers approve reports every Friday.",
    "Expense policy",
    5,
)
LUNCH = Snippet("The canteen serves lunch from noon. The menu changes every week.", "Canteen", 7)


def gen(**kw) -> ExtractiveGenerator:  # type: ignore[no-untyped-def]
    return ExtractiveGenerator(HashingEmbedder(64), **kw)


@pytest.mark.parametrize("embedder", [None, HashingEmbedder(64)])
def test_cites_the_result_that_answers(embedder) -> None:  # type: ignore[no-untyped-def]
    g = ExtractiveGenerator(embedder)
    out = g.generate("How long do I have to submit an expense report?", [VPN, EXPENSES, LUNCH], "concise")
    assert out.text == "Expense reports must be submitted within 30 days."
    assert not out.declined and out.model.startswith("extractive")
    (citation,) = out.citations
    assert citation.search_result_index == 5 and citation.title == "Expense policy"
    assert citation.text == out.text and citation.body == EXPENSES.text


def test_every_sentence_is_cited_exactly_with_valid_exclusive_ranges() -> None:
    out = gen().generate("How do I install the VPN client and sign in?", [VPN, EXPENSES, LUNCH], "verbose")
    assert len(out.citations) >= 3
    covered = 0
    for c in out.citations:
        ((start, end),) = c.ranges
        assert 0 <= start < end <= len(out.text)
        assert out.text[start:end] == c.text  # the exact source sentence
        covered += end - start
    assert covered + len(out.citations) - 1 == len(out.text)  # sentences joined by single spaces
    assert extractiveness(out.text, [VPN.text, EXPENSES.text, LUNCH.text]) == 1.0


def test_sentences_are_in_reading_order() -> None:
    out = gen().generate("VPN install sign in SSO", [VPN], "moderate")
    positions = [VPN.text.index(c.text) for c in out.citations]
    assert positions == sorted(positions)


def test_response_length_orders_concise_moderate_verbose() -> None:
    g = gen()
    snippets = [VPN, EXPENSES, LUNCH]
    q = "What should I know about the VPN client?"
    lengths = [len(g.generate(q, snippets, rl).text) for rl in ("concise", "moderate", "verbose")]
    counts = [len(g.generate(q, snippets, rl).citations) for rl in ("concise", "moderate", "verbose")]
    assert lengths[0] < lengths[1] < lengths[2]
    assert counts == [1, 3, 5]


def test_unknown_response_length_is_rejected() -> None:
    with pytest.raises(ValueError):
        gen().generate("q", [VPN], "long")  # type: ignore[arg-type]


def test_near_duplicate_sentences_from_overlapping_chunks_are_used_once() -> None:
    a = Snippet("Expense reports must be submitted within 30 days. Receipts are required.", "Policy", 0)
    b = Snippet("Expense reports must be submitted within 30 days! Late reports are refused.", "Policy p2", 1)
    out = gen().generate("When must expense reports be submitted?", [a, b], "moderate")
    assert sum("within 30 days" in c.text for c in out.citations) == 1


def test_long_sentence_is_cut_at_a_word_boundary_and_still_cited() -> None:
    long = Snippet("Word " * 200 + "end.", "Long", 0)
    out = gen().generate("word", [long], "concise")
    assert len(out.text) <= 300 and out.text.endswith("…")
    assert out.citations[0].ranges == ((0, len(out.text)),)


def test_no_sentences_declines() -> None:
    out = gen().generate("anything", [Snippet("   ", "Empty", 0)])
    assert out.declined and out.text == "I don't know" and out.citations == ()
    assert gen().generate("anything", []).declined


def test_min_relevance_declines_off_topic_snippets() -> None:
    g = ExtractiveGenerator(None, min_relevance=0.2)
    assert g.generate("quantum chromodynamics lattice", [LUNCH]).declined
    assert not g.generate("When does the canteen serve lunch?", [LUNCH]).declined


def test_chunk_fragments_lose_to_whole_sentences() -> None:
    cut = Snippet("within 30 days for expense reports, as the policy says. Receipts are needed.", "Policy", 0)
    whole = Snippet("Expense reports are due within 30 days of the expense.", "FAQ", 1)
    out = ExtractiveGenerator(None).generate("expense reports within 30 days", [cut, whole], "concise")
    assert out.citations[0].search_result_index == 1


@pytest.mark.parametrize(
    "query, text",
    [
        ("Comment installer le VPN ?", "Le client VPN est disponible. Pour l'installer, téléchargez-le depuis le portail."),
        ("経費精算書の提出期限は？", "経費精算書は30日以内に提出しなければなりません。領収書が必要です。昼食は正午からです。"),
        ("VPN 設定", "VPNの設定はポータルから行います。Then sign in with SSO."),
        ("Как установить VPN?", "Клиент VPN доступен для Windows. Установите его с портала."),
        ("", "Some text. More text."),
        ("???", "!!! ... ???"),
    ],
)
def test_multilingual_and_odd_input_does_not_crash(query: str, text: str) -> None:
    out = gen().generate(query, [Snippet(text, "T", 0)], "moderate")
    for c in out.citations:
        ((start, end),) = c.ranges
        assert 0 <= start < end <= len(out.text)
        assert out.text[start:end] in text or out.text[start:end].endswith("…")


def test_japanese_answer_picks_the_matching_sentence_and_joins_without_spaces() -> None:
    snip = Snippet("昼食は正午からです。経費精算書は30日以内に提出しなければなりません。", "規程", 0)
    out = ExtractiveGenerator(None).generate("経費精算書の提出期限は？", [snip], "concise")
    assert out.text == "経費精算書は30日以内に提出しなければなりません。"
    both = ExtractiveGenerator(None).generate("経費精算書の提出期限は？", [snip], "moderate")
    assert both.text == snip.text


def test_terms_are_stemmed_and_cjk_bigrams() -> None:
    assert terms("Installing the installers") == ["insta", "the", "insta"]
    assert terms("経費精算") == ["経費", "費精", "精算"]
    assert terms("a 7 is") == ["7"]


def test_stream_yields_the_text_sentence_by_sentence() -> None:
    g = gen()
    stream = g.stream("How do I install the VPN?", [VPN, EXPENSES], "moderate")
    deltas = list(stream)
    result = stream.result()
    assert "".join(deltas) == result.text
    assert len(deltas) == len(result.citations)
    assert result == g.generate("How do I install the VPN?", [VPN, EXPENSES], "moderate")


def test_prompt_tokens_grow_with_snippets_and_warm_up_loads_the_embedder() -> None:
    class Spy(HashingEmbedder):
        warmed = False

        def warm_up(self) -> None:
            self.warmed = True

    spy = Spy()
    g = ExtractiveGenerator(spy)
    assert g.prompt_tokens("q", [VPN]) < g.prompt_tokens("q", [VPN, EXPENSES])
    g.warm_up()
    assert spy.warmed
