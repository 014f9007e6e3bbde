"""Feature vectors and the encoder cache, with the hashing stand-in encoder (no model)."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import pytest

from assistant_bridge.filters.encoder import HashingEncoder, UseEncoder
from assistant_bridge.filters.features import (
    CROSS_FEATURES,
    DENSE_FEATURES,
    EMBED_CHAR_BUDGET,
    POST_EMBED_CHAR_BUDGET,
    POST_FEATURES,
    PRE_FEATURES,
    cross_features,
    dense_features,
    post_features,
    pre_features,
    second_look,
)

pytestmark = pytest.mark.unit

DOC = "The reset link expires after 24 hours. It is sent by email to the address on file."


class CountingEncoder(HashingEncoder):
    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        return super().encode(texts)


class FixedCross:
    """Stands in for the cross-encoder: one given probability per snippet, in order."""

    def __init__(self, *probs: float) -> None:
        self.probs = probs
        self.calls: list[tuple[str, list[str]]] = []

    def window_probs(self, query: str, snippets: Sequence[str]) -> list[tuple[int, float]]:
        self.calls.append((query, list(snippets)))
        return [(i, self.probs[i % len(self.probs)]) for i in range(len(snippets))]

    def first_window(self, query: str, snippets: Sequence[str]) -> str | None:
        return snippets[0][:600] if snippets else None


class WordDense:
    """Stands in for the dense model: the share of the query's words found in the passage."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def similarity(self, query: str, passage: str) -> float:
        self.calls.append((query, passage))
        words = set(query.lower().split())
        return len(words & set(passage.lower().split())) / max(1, len(words))


def test_feature_vectors_have_the_named_layout() -> None:
    enc = HashingEncoder()
    pre = pre_features("When does the reset link expire?", [DOC], enc, FixedCross(0.9), WordDense())
    post = post_features("When does the link expire?", [DOC], "The link expires after 24 hours.", enc)
    assert pre is not None and pre.shape == (len(PRE_FEATURES),) and np.isfinite(pre).all()
    assert post is not None and post.shape == (len(POST_FEATURES),) and np.isfinite(post).all()


def test_nothing_to_score_gives_none() -> None:
    enc = HashingEncoder()
    assert pre_features("q", [], enc, FixedCross(0.5), WordDense()) is None
    assert pre_features("   ", [DOC], enc, FixedCross(0.5), WordDense()) is None
    assert cross_features("q", ["", "  "], FixedCross(0.5)) is None
    assert post_features("q", [DOC], " ", enc) is None


def test_a_cross_scorer_without_a_second_look_vouches_for_nothing() -> None:
    assert second_look("When does the reset link expire?", [DOC], FixedCross(0.99)) == []


def test_concurrent_pre_features_equal_the_sequential_ones() -> None:
    snippets = [DOC, "Passwords are changed under Settings > Security.", "リンクは24時間有効です。"]
    for query in ("When does the reset link expire?", "パスワード", "x"):
        seq = pre_features(query, snippets, HashingEncoder(), FixedCross(0.2, 0.7), WordDense())
        par = pre_features(query, snippets, HashingEncoder(), FixedCross(0.2, 0.7), WordDense(), concurrent=True)
        assert seq is not None and par is not None
        assert np.array_equal(seq, par)
    assert pre_features("q", [], HashingEncoder(), FixedCross(0.5), WordDense(), concurrent=True) is None


class HandshakeDense(WordDense):
    """Scores only once the encoder has started: completes only if both run at the same time."""

    def __init__(self, started: threading.Event) -> None:
        super().__init__()
        self.started = started
        self.thread = ""

    def similarity(self, query: str, passage: str) -> float:
        self.thread = threading.current_thread().name
        assert self.started.wait(timeout=5), "the encoder never ran while the dense similarity was computed"
        return super().similarity(query, passage)


class SignallingEncoder(HashingEncoder):
    def __init__(self, started: threading.Event) -> None:
        super().__init__()
        self.started = started

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.started.set()
        return super().encode(texts)


def test_concurrent_pre_features_overlap_the_dense_similarity_and_the_encoder(monkeypatch: pytest.MonkeyPatch) -> None:
    """The chain that takes longest (choose the window, embed it) runs on a thread of its own while this one
    computes the sentence features and the cross-encoder's (on a machine with two cores or more)."""
    from assistant_bridge.filters import lanes

    monkeypatch.setattr(lanes, "LANES", 2)
    started = threading.Event()
    dense = HandshakeDense(started)
    x = pre_features(
        "When does the reset link expire?", [DOC], SignallingEncoder(started), FixedCross(0.8), dense, concurrent=True
    )
    assert x is not None and dense.thread not in ("", threading.current_thread().name)


def test_concurrent_pre_features_have_the_query_vector_kept_by_the_calling_thread() -> None:
    """The dense chain is the longer one: the calling thread, once done with its own parts, computes the query's
    dense vector that the chain reads last; the features are those of the sequential order."""

    class Keeping(WordDense):
        def __init__(self) -> None:
            super().__init__()
            self.kept: list[tuple[str, str]] = []

        def keep_query(self, query: str) -> None:
            self.kept.append((query, threading.current_thread().name))

    dense = Keeping()
    query = "When does the reset link expire?"
    par = pre_features(query, [DOC], HashingEncoder(), FixedCross(0.8), dense, concurrent=True)
    assert dense.kept == [(query, threading.current_thread().name)]
    assert np.array_equal(par, pre_features(query, [DOC], HashingEncoder(), FixedCross(0.8), WordDense()))


def test_a_dense_model_error_reaches_the_caller() -> None:
    class Broken(WordDense):
        def similarity(self, query: str, passage: str) -> float:
            raise RuntimeError("embedding failed")

    with pytest.raises(RuntimeError, match="embedding failed"):
        pre_features("When does the reset link expire?", [DOC], HashingEncoder(), FixedCross(0.5), Broken(), True)


def test_a_cross_encoder_error_reaches_the_caller() -> None:
    class Broken(FixedCross):
        def window_probs(self, query: str, snippets: Sequence[str]) -> list[tuple[int, float]]:
            raise RuntimeError("onnxruntime failed")

    with pytest.raises(RuntimeError, match="onnxruntime failed"):
        pre_features(
            "When does the reset link expire?", [DOC], HashingEncoder(), Broken(0.5), WordDense(), concurrent=True
        )


def test_the_dense_feature_scores_the_window_the_cross_encoder_reads_first() -> None:
    dense = WordDense()
    f = dense_features("When does the reset link expire?", [DOC, "Other text."], FixedCross(0.5), dense)
    assert f is not None and f.shape == (len(DENSE_FEATURES),)
    assert dense.calls == [("When does the reset link expire?", DOC[:600])]
    assert dense_features("q", [], FixedCross(0.5), dense) is None


def test_cross_features_order_the_snippet_scores() -> None:
    names = list(CROSS_FEATURES)
    f = cross_features("When does the link expire?", [DOC, "Other text.", "More text."], FixedCross(0.2, 0.9, 0.5))
    assert f is not None
    assert f[names.index("ce_max")] > f[names.index("ce_second")] > f[names.index("ce_mean")] - 1.0
    assert abs(f[names.index("ce_max")] - np.log(0.9 / 0.1)) < 1e-4
    assert abs(f[names.index("ce_second")] - 0.0) < 1e-4  # logit of 0.5
    assert f[names.index("cjk_share")] == 0.0
    ja = cross_features("リンクの有効期限は？", ["リンクは24時間有効です。"], FixedCross(0.9))
    assert ja is not None and ja[names.index("cjk_share")] > 0.5


def test_post_features_see_a_changed_number_and_a_negation() -> None:
    enc = HashingEncoder()
    names = list(POST_FEATURES)
    good = post_features("q", [DOC], "The reset link expires after 24 hours.", enc)
    wrong_number = post_features("q", [DOC], "The reset link expires after 48 hours.", enc)
    negated = post_features("q", [DOC], "The reset link does not expire after 24 hours.", enc)
    assert good is not None and wrong_number is not None and negated is not None
    assert good[names.index("num_missing")] == 0.0 and wrong_number[names.index("num_missing")] == 1.0
    assert good[names.index("neg_mismatch")] == 0.0 and negated[names.index("neg_mismatch")] == 1.0


def test_encoded_text_is_bounded_whatever_the_snippet_size() -> None:
    big = " ".join(f"The reset link sentence number {i} is here." for i in range(5000))
    heads = 8 * 60  # the first sentence of each of the (at most 8) snippets read
    pre_enc, post_enc = CountingEncoder(), CountingEncoder()
    cross = FixedCross(0.5)
    pre_features("reset link", [big] * 10, pre_enc, cross, WordDense())
    assert len(cross.calls[0][1]) == 8 and all(len(s) <= 4000 for s in cross.calls[0][1])
    post_features("reset link", [big] * 10, big, post_enc)
    assert sum(len(t) for t in pre_enc.texts) <= EMBED_CHAR_BUDGET + heads + len("reset link")
    answer_sentences = 6 * 400
    closest = 6 * 400  # the closest snippet sentence of each answer sentence
    assert sum(len(t) for t in post_enc.texts) <= POST_EMBED_CHAR_BUDGET + answer_sentences + closest + 10


class StubModel:
    def __init__(self) -> None:
        self.calls = 0

    def encode(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        return np.ones((len(texts), UseEncoder.dim), dtype=np.float32)


def test_use_encoder_caches_and_evicts() -> None:
    enc = UseEncoder(cache_size=2)
    stub = StubModel()
    enc._model = stub  # noqa: SLF001 - no weights needed to test the cache
    enc.encode(["a", "b"])
    enc.encode(["a", "b"])
    assert stub.calls == 1
    enc.encode(["c"])
    assert len(enc._cache) == 2 and "a" not in enc._cache  # noqa: SLF001
    assert enc.encode([]).shape == (0, UseEncoder.dim)


_SEEDED = """
import sys
sys.path.insert(0, {root!r})
import numpy as np
from assistant_bridge.filters.encoder import HashingEncoder
from assistant_bridge.filters.features import pre_features

class Encoder(HashingEncoder):  # the question and "Nothing…" point one way, the rest the other
    def encode(self, texts):
        return np.array([[1.0, 0.0] if t.startswith(("Who", "Nothing")) else [0.0, 1.0] for t in texts], "float32")

class Cross:
    def window_probs(self, query, snippets):
        return [(i, 0.5) for i in range(len(snippets))]

    def first_window(self, query, snippets):
        return snippets[0][:600] if snippets else None

class Dense:
    def similarity(self, query, passage):
        return 0.5

# the lexical best ends without a full stop, the closest starts with a capital: joined one way, "Nothing" is a
# name in the middle of a sentence; the other way round, nothing is
snippets = ["Abell wrote lsof", "Nothing else here."]
print(pre_features("Who wrote lsof?", snippets, Encoder(), Cross(), Dense()).tolist())
"""


def test_the_features_do_not_change_with_the_hash_seed() -> None:
    """The two best sentences were joined as a set, so whether a name stood after a full stop, and a "who"
    question's cue, changed with ``PYTHONHASHSEED``: one process answered and another refused the same turn."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    code = _SEEDED.format(root=str(Path(__file__).resolve().parents[2]))
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in range(6)
    }
    assert len(outs) == 1
