"""The cross-encoder of the pre-filter: windowing (with the shipped tokenizer) and the shipped ONNX model."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assistant_bridge.filters import default_model_dir
from assistant_bridge.filters.cross import (
    CROSS_TOKENIZER_FILE,
    MAX_WINDOWS,
    QUERY_TOKENS,
    SECOND_LOOK_MIN,
    WINDOW_TOKENS,
    CrossEncoder,
    WordPiece,
    pair_ids,
    select_windows,
    windows,
)
from assistant_bridge.filters.features import second_look

pytestmark = pytest.mark.unit

MODEL_DIR = default_model_dir()
LONG = " ".join(f"Sentence number {i} talks about topic {i % 7} and nothing else." for i in range(120))


@pytest.fixture(scope="module")
def tok() -> WordPiece:
    return WordPiece(MODEL_DIR / CROSS_TOKENIZER_FILE)


@pytest.fixture(scope="module")
def cross() -> CrossEncoder:
    return CrossEncoder(MODEL_DIR)


def test_windows_cover_every_sentence_within_the_budget(tok: WordPiece) -> None:
    ws = windows(LONG, tok)
    assert len(ws) > 3
    assert all(len(ids) <= WINDOW_TOKENS for _, ids in ws)
    joined = " ".join(w for w, _ in ws)
    for i in range(120):
        assert f"Sentence number {i} " in joined
    # consecutive windows share one sentence
    assert ws[0][0].split(". ")[-1].rstrip(".") in ws[1][0]


def test_a_sentence_longer_than_the_budget_is_cut(tok: WordPiece) -> None:
    huge = "word " * 2000
    ws = windows(huge, tok)
    assert ws and all(len(ids) <= WINDOW_TOKENS for _, ids in ws)


def test_pair_ids_bound_the_query_and_window(tok: WordPiece) -> None:
    ids, types = pair_ids(list(range(5, 500)), list(range(5, 900)), tok)
    assert len(ids) == QUERY_TOKENS + WINDOW_TOKENS + 3 == len(types)
    assert ids[0] == tok.cls_id and ids[QUERY_TOKENS + 1] == tok.sep_id and ids[-1] == tok.sep_id
    assert types[: QUERY_TOKENS + 2] == [0] * (QUERY_TOKENS + 2) and set(types[QUERY_TOKENS + 2 :]) == {1}


def test_select_windows_prefers_query_words_and_keeps_each_snippet(tok: WordPiece) -> None:
    snippets = [LONG, "The reset link expires after 24 hours.", "Unrelated text about cooking pasta."]
    q = "When does the reset link expire?"
    chosen = select_windows(q, snippets, tok, limit=3)
    assert len(chosen) == 3
    assert {si for si, _, _ in chosen} == {0, 1, 2}  # each snippet's best window before any second window
    top = select_windows(q, snippets, tok, limit=1)
    assert [si for si, _, _ in top] == [1]  # the snippet that shares the most words with the query
    assert len(select_windows(q, snippets, tok)) == MAX_WINDOWS
    many = select_windows(q, [LONG], tok, limit=50)
    assert len(many) == len(windows(LONG, tok))
    every = select_windows(q, snippets, tok, limit=None)
    assert len(every) == sum(len(windows(s, tok)) for s in snippets)
    assert all(select_windows(q, snippets, tok, limit=k) == every[:k] for k in (1, 2, 3, 5, 8))  # prefixes


def test_the_model_tells_an_answering_passage_from_an_on_topic_one(cross: CrossEncoder) -> None:
    q = "How long is the password reset link valid?"
    answering = "The password reset link is valid for 24 hours after it is sent."
    on_topic = "You can reset your password from the settings page. Passwords must have twelve characters."
    off_topic = "The cafeteria serves lunch from noon to two o'clock."
    s = cross.scores(q, [answering, on_topic, off_topic])
    assert s[0] > s[1] and s[0] > s[2]
    assert s[0] > 0.5 > s[2]


@pytest.mark.parametrize(
    ("q", "good", "bad"),
    [
        (
            "Quelle est la durée de validité du lien de réinitialisation ?",
            "Le lien de réinitialisation est valable 24 heures après son envoi.",
            "La cantine sert le déjeuner de midi à quatorze heures.",
        ),
        (
            "リセットリンクの有効期限はどのくらいですか？",
            "パスワードのリセットリンクは送信後24時間有効です。",
            "社員食堂は正午から午後2時まで昼食を提供しています。",
        ),
    ],
)
def test_french_and_japanese_do_not_fall_apart(cross: CrossEncoder, q: str, good: str, bad: str) -> None:
    s = cross.scores(q, [good, bad])
    assert s[0] > s[1]


def test_a_window_scores_the_same_whatever_is_scored_with_it(cross: CrossEncoder) -> None:
    q = "How long is the password reset link valid?"
    short = "The password reset link is valid for 24 hours."
    long_ = " ".join(["You can reset your password from the settings page, which lists every option."] * 6)
    alone = cross.window_scores(q, [short])[0]
    with_longer = cross.window_scores(q, [long_, short])[1]
    assert alone == with_longer


def test_the_shipped_graph_holds_no_nan_guard_and_a_padded_batch_scores_as_its_rows_alone(
    cross: CrossEncoder, tok: WordPiece
) -> None:
    """``train_cross.py`` removes the ``Where(IsNaN(p), 0, p)`` its exporter puts after each attention softmax (a
    quarter of a window's time, and dead: no row the service builds masks every key). Without the guard, a row
    of a padded batch still gets the logit it has alone."""
    import onnx

    from assistant_bridge.filters.cross import CROSS_MODEL_FILE, batch_arrays

    graph = onnx.load(str(MODEL_DIR / CROSS_MODEL_FILE)).graph
    assert "IsNaN" not in {node.op_type for node in graph.node}
    session = cross._session.get()  # noqa: SLF001 - the raw logits of a padded batch
    q = tok.ids("How long is the password reset link valid?")
    pairs = [pair_ids(q, tok.ids(t), tok) for t in ("Valid for 24 hours.", "The link expires after a day. " * 8)]
    batch = session.run(None, batch_arrays(pairs, tok.pad_id))[0].reshape(-1)
    alone = [float(session.run(None, batch_arrays([p], tok.pad_id))[0].reshape(-1)[0]) for p in pairs]
    assert np.all(np.isfinite(batch))
    assert batch.tolist() == pytest.approx(alone, abs=0.25)  # int8 activations are quantised per call (0.08 here)


def test_windows_scored_side_by_side_score_as_one_at_a_time(
    cross: CrossEncoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second look's windows run on two threads; each still has its own call, so its score is the one it
    has alone, in the caller's order."""
    import threading

    from assistant_bridge.filters import lanes

    q = "How long is the password reset link valid?"
    texts = [f"The password reset link is valid for {h} hours, then you ask for a new one." for h in (2, 24, 48, 72)]
    threads: set[str] = set()
    real = CrossEncoder._logit

    def noting(self: CrossEncoder, pair: tuple[list[int], list[int]]) -> float:
        threads.add(threading.current_thread().name)
        return real(self, pair)

    monkeypatch.setattr(lanes, "LANES", 2)
    monkeypatch.setattr(CrossEncoder, "_logit", noting)
    fresh = CrossEncoder(MODEL_DIR)
    together = fresh.window_scores(q, texts)
    assert len(threads) == 2
    alone = [CrossEncoder(MODEL_DIR).window_scores(q, [t])[0] for t in texts]
    assert together.tolist() == alone


# the README's Japanese example: the page's introduction shares the most words with the question, the deadline
# paragraph answers it ("締め切り" against "三十日以内に申請")
JA_Q = "経費精算の締め切りはいつですか"
JA_INTRO = (
    "経費精算の手順\n\nこのページでは、出張費や交通費、会議費などの経費精算の方法を説明します。"
    "対象は正社員、契約社員、派遣社員を含むすべての従業員です。"
)
JA_DEADLINE = (
    "内容を確認して申請します。上長に承認依頼のメールが届きます。\n\n経費は、支出した日から三十日以内に申請して"
    "ください。月末締めで、承認済みの経費は翌月二十五日の給与と一緒に振り込まれます。"
)


def test_the_second_look_reads_past_the_first_window(cross: CrossEncoder) -> None:
    first = cross.window_probs(JA_Q, [JA_INTRO, JA_DEADLINE])
    assert [si for si, _ in first] == [0] and first[0][1] < 0.5  # the introduction is read first and fails
    found = cross.confident(JA_Q, [JA_INTRO, JA_DEADLINE])
    assert [si for si, _ in found] == [1] and found[0][1] >= SECOND_LOOK_MIN
    assert cross.confident(JA_Q, [JA_DEADLINE]) == []  # nothing after the first window
    assert cross.confident(JA_Q, [JA_INTRO, JA_DEADLINE], more=0) == []
    assert cross.confident("", [JA_INTRO, JA_DEADLINE]) == []


def test_the_second_look_maps_back_to_the_callers_snippets(cross: CrossEncoder) -> None:
    """Empty snippets are dropped before reading; the indices returned are the caller's."""
    p = cross.confident(JA_Q, [JA_INTRO, JA_DEADLINE])[0][1]
    assert second_look(JA_Q, ["", JA_INTRO, "  ", JA_DEADLINE], cross) == [(3, p)]
    assert second_look(JA_Q, [], cross) == [] and second_look("", [JA_DEADLINE], cross) == []


def test_empty_inputs(cross: CrossEncoder) -> None:
    assert cross.scores("", ["text"]) == [0.0]
    assert cross.scores("q", []) == []
    assert cross.scores("q", ["", "  "]) == [0.0, 0.0]
    assert cross.window_scores("q", []).shape == (0,)


@settings(max_examples=25, deadline=None)
@given(st.text(max_size=200), st.lists(st.text(max_size=600), max_size=6))
def test_never_raises_and_stays_in_range(cross: CrossEncoder, q: str, snippets: list[str]) -> None:
    s = cross.scores(q, snippets)
    assert len(s) == len(snippets)
    assert all(0.0 <= v <= 1.0 and np.isfinite(v) for v in s)
    for i, p in cross.confident(q, snippets):
        assert 0 <= i < len(snippets) and SECOND_LOOK_MIN <= p <= 1.0


def test_a_turns_window_selection_is_made_once(cross: CrossEncoder, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cross-encoder's thread and the dense similarity's choose the same window for a turn."""
    from assistant_bridge.filters import cross as module

    made: list[str] = []
    real = module.select_windows

    def counting(
        query: str, snippets: list[str], tok: WordPiece, limit: int | None = MAX_WINDOWS
    ) -> list[tuple[int, str, list[int]]]:
        made.append(query)
        return real(query, snippets, tok, limit)

    monkeypatch.setattr(module, "select_windows", counting)
    q = "a question asked once"
    probs = cross.window_probs(q, [JA_INTRO, JA_DEADLINE])
    window = cross.first_window(q, [JA_INTRO, JA_DEADLINE])
    assert made == [q] and probs and window is not None
    cross.confident(q, [JA_INTRO, JA_DEADLINE])  # the second look reads on in the same order
    assert made == [q]
    cross.window_probs(q, [JA_DEADLINE])  # other snippets: another selection
    assert len(made) == 2
