"""A small cross-encoder that reads the query and a passage window together (``pre_cross.onnx``).

The pre-generation filter's similarity features tell whether a passage is *on topic*; they cannot tell
whether it *says* the answer (a paragraph of the right Wikipedia page that does not hold it looks the same).
A cross-encoder sees the query and the passage in one transformer pass and learns that difference.

The model is all-MiniLM-L6-v2 (6 layers, 384 wide, Apache-2.0) fine-tuned as a binary classifier by
``filters_models/train_cross.py`` and exported to int8 ONNX; its WordPiece tokenizer ships beside it.

Cost control: a snippet is cut into windows of whole sentences of at most :data:`WINDOW_TOKENS` tokens;
only the :data:`MAX_WINDOWS` windows that share the most words with the query are scored, each in its
own onnxruntime call (see :meth:`CrossEncoder._run`). The window that shares the most words is not always the
one that answers (a page's introduction repeats the question's topic words; "締め切り" is answered by "三十日以内に
申請"): :meth:`CrossEncoder.confident` reads the next :data:`SECOND_LOOK_WINDOWS` and keeps those it is sure of.
The same windowing code builds the training pairs, so training and serving see the same inputs.

Invariants: :meth:`CrossEncoder.scores` accepts any strings and returns one probability in [0, 1] per
snippet (0.0 for an empty one); it never raises on text. A missing or corrupt model or tokenizer file
raises :class:`~assistant_bridge.errors.ModelLoadError` in the constructor.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from assistant_bridge.errors import ModelLoadError
from assistant_bridge.lru import Lru

from .frozen_text import clip, content_tokens, overlap, split_sentences
from .lanes import side_by_side
from .onnx_session import ForkSafeSession

CROSS_MODEL_FILE = "pre_cross.onnx"
CROSS_TOKENIZER_FILE = "pre_cross_tokenizer.json"
QUERY_TOKENS = 48
WINDOW_TOKENS = 160
MAX_WINDOWS = 1
# The second look (:meth:`CrossEncoder.confident`): when the first window does not answer, the next windows by
# word share that the cross-encoder reads (four: with five snippets, the first window of each), and the
# probability at which one of them vouches for its snippet.
SECOND_LOOK_WINDOWS = 4
SECOND_LOOK_MIN = 0.9
SELECTIONS_KEPT = 16


class WordPiece:
    """The BERT WordPiece tokenizer of the model (``tokenizers``), without special tokens."""

    def __init__(self, path: Path) -> None:
        from tokenizers import Tokenizer

        try:
            self._tok = Tokenizer.from_file(str(path))
        except Exception as exc:  # tokenizers raises its own untyped errors on a bad file
            raise ModelLoadError(f"tokenizer file {path.name} is missing or corrupt", path=str(path)) from exc
        self._tok.no_padding()
        self._tok.no_truncation()
        self.cls_id = self._id("[CLS]")
        self.sep_id = self._id("[SEP]")
        self.pad_id = self._id("[PAD]")

    def _id(self, token: str) -> int:
        i = self._tok.token_to_id(token)
        if i is None:
            raise ModelLoadError(f"tokenizer has no {token} token")
        return int(i)

    def ids(self, text: str) -> list[int]:
        return list(self._tok.encode(text, add_special_tokens=False).ids) if text else []

    def ids_batch(self, texts: Sequence[str]) -> list[list[int]]:
        if not texts:
            return []
        return [list(e.ids) for e in self._tok.encode_batch(list(texts), add_special_tokens=False)]


def windows(text: str, tok: WordPiece, budget: int = WINDOW_TOKENS) -> list[tuple[str, list[int]]]:
    """Cut ``text`` into windows of whole sentences of at most ``budget`` tokens (a longer sentence is
    cut); consecutive windows overlap by one sentence so an answer spread over a boundary is seen whole."""
    sents = split_sentences(text) or ([text] if text.strip() else [])
    ids = tok.ids_batch(sents)
    out: list[tuple[str, list[int]]] = []
    i = 0
    while i < len(sents):
        parts, acc = [sents[i]], list(ids[i][:budget])
        j = i + 1
        while j < len(sents) and len(acc) + len(ids[j]) <= budget:
            parts.append(sents[j])
            acc += ids[j]
            j += 1
        out.append((" ".join(parts), acc))
        if j >= len(sents):
            break
        i = j - 1 if j - 1 > i else j  # one sentence of overlap, but always move forward
    return out


def pair_ids(query_ids: Sequence[int], window_ids: Sequence[int], tok: WordPiece) -> tuple[list[int], list[int]]:
    """``[CLS] query [SEP] window [SEP]`` and its token type ids."""
    q = list(query_ids[:QUERY_TOKENS])
    w = list(window_ids[:WINDOW_TOKENS])
    ids = [tok.cls_id, *q, tok.sep_id, *w, tok.sep_id]
    types = [0] * (len(q) + 2) + [1] * (len(w) + 1)
    return ids, types


def batch_arrays(pairs: Sequence[tuple[list[int], list[int]]], pad_id: int) -> dict[str, np.ndarray]:
    width = max(len(p[0]) for p in pairs)
    ids = np.full((len(pairs), width), pad_id, dtype=np.int64)
    types = np.zeros((len(pairs), width), dtype=np.int64)
    mask = np.zeros((len(pairs), width), dtype=np.int64)
    for i, (a, t) in enumerate(pairs):
        ids[i, : len(a)] = a
        types[i, : len(t)] = t
        mask[i, : len(a)] = 1
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}


def word_share(query_words: set[str], text: str) -> float:
    """Share of the query's words found in ``text``: the window pre-selection score."""
    return overlap(query_words, frozenset(content_tokens(text)))


def select_windows(
    query: str, snippets: Sequence[str], tok: WordPiece, limit: int | None = MAX_WINDOWS
) -> list[tuple[int, str, list[int]]]:
    """The ``limit`` windows (snippet index, text, ids) that share the most words with the query (``None``:
    every window, in that order): first the best window of each snippet (best first, search order breaking
    ties), then the other windows. A smaller limit gives a prefix of the same order."""
    qw = set(content_tokens(query))
    per: list[list[tuple[float, int, str, list[int]]]] = []
    for si, s in enumerate(snippets):
        ws = [(word_share(qw, w), si, w, ids) for w, ids in windows(s, tok)]
        ws.sort(key=lambda t: -t[0])
        per.append(ws)
    if limit is None:
        limit = sum(len(ws) for ws in per)
    heads = sorted((ws[0] for ws in per if ws), key=lambda t: -t[0])  # stable: search order breaks ties
    chosen = heads[:limit]
    rest = sorted([w for ws in per for w in ws[1:]] + heads[limit:], key=lambda t: -t[0])
    chosen += rest[: max(0, limit - len(chosen))]
    return [(si, w, ids) for _, si, w, ids in chosen]


class CrossEncoder:
    """P(a passage window answers the query) from the fine-tuned MiniLM (int8 ONNX, onnxruntime)."""

    def __init__(self, model_dir: Path, threads: int = 1, cache_size: int = 8192) -> None:
        self._session = ForkSafeSession(model_dir / CROSS_MODEL_FILE, threads)
        self.path = self._session.path
        self.tok = WordPiece(model_dir / CROSS_TOKENIZER_FILE)
        self._inputs = {i.name for i in self._session.get().get_inputs()}
        # a window's logit depends on nothing but its (query, window) ids: kept, so the planning steps of an
        # agentic run and the turns of a conversation score a retrieved passage once, not at every step
        self._cache: Lru[tuple[int, ...], float] = Lru(cache_size)
        # the window selection of the last few turns: the cross-encoder's thread and the dense similarity's
        # (:meth:`first_window`) make the same one for a turn, and it tokenises every snippet
        self._selections: Lru[tuple[str, tuple[str, ...]], list[tuple[int, str, list[int]]]] = Lru(SELECTIONS_KEPT)
        self._selection_lock = threading.Lock()

    def warm_up(self) -> None:
        self.scores("warm up", ["A short passage to load the model."])

    def _logit(self, pair: tuple[list[int], list[int]]) -> float:
        feed = {k: v for k, v in batch_arrays([pair], self.tok.pad_id).items() if k in self._inputs}
        return float(np.asarray(self._session.get().run(None, feed)[0], dtype=np.float64).reshape(-1)[-1])

    def _run(self, pairs: Sequence[tuple[list[int], list[int]]]) -> np.ndarray:
        """One onnxruntime call per pair. The int8 model quantizes its activations per call, so in a padded
        batch a window's score would depend on the windows batched with it; alone, it does not (and no time is
        spent on padding). Pairs not yet scored run side by side (:func:`~.lanes.side_by_side`; a session may be
        run from several threads): the second look's four windows take about the time of two."""
        keys = [(*pair[0], -1, *pair[1]) for pair in pairs]
        found = {key: self._cache.get(key) for key in keys}
        todo = {key: pair for key, pair in zip(keys, pairs, strict=True) if found[key] is None}
        scored = side_by_side([functools.partial(self._logit, pair) for pair in todo.values()], "cross-lane")
        for key, logit in zip(todo, scored, strict=True):
            found[key] = logit
            self._cache.put(key, logit)
        logits = np.asarray([found[key] for key in keys], dtype=np.float64)
        probs = 1.0 / (1.0 + np.exp(-np.clip(logits, -40, 40)))
        return np.where(np.isfinite(probs), probs, 0.0)

    def window_scores(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """Scores of ``(query, text)`` pairs, each text cut to one window (training and evaluation)."""
        if not texts:
            return np.zeros(0)
        q = self.tok.ids(clip(query, 1000))
        return self._run([pair_ids(q, ids[:WINDOW_TOKENS], self.tok) for ids in self.tok.ids_batch(list(texts))])

    def _chosen(
        self, query: str, snippets: Sequence[str], limit: int
    ) -> tuple[list[int], list[tuple[int, str, list[int]]]]:
        """The query's ids and the windows read (:func:`select_windows` over the clipped snippets); no windows
        when the query has no tokens."""
        q = self.tok.ids(clip(query, 1000))
        if not q:
            return q, []
        key = (query, tuple(snippets or ()))
        with self._selection_lock:  # held while selecting: the other thread of the turn waits, then finds it
            found = self._selections.get(key)
            if found is None:  # every window in order, so the second look reads on from the same selection
                found = select_windows(query, [clip(s, 4000) for s in key[1]], self.tok, None)
                self._selections.put(key, found)
        return q, found[:limit]

    def window_probs(self, query: str, snippets: Sequence[str], limit: int = MAX_WINDOWS) -> list[tuple[int, float]]:
        """(snippet index, probability) of each selected window, best window selection first; empty when the
        query or every snippet is empty."""
        q, chosen = self._chosen(query, snippets, limit)
        if not chosen:
            return []
        probs = self._run([pair_ids(q, ids, self.tok) for _, _, ids in chosen])
        return [(si, float(p)) for (si, _, _), p in zip(chosen, probs, strict=True)]

    def first_window(self, query: str, snippets: Sequence[str]) -> str | None:
        """The text of the window :meth:`window_probs` reads first (the one sharing the most words with the
        query), or ``None`` when it would read none."""
        _, chosen = self._chosen(query, snippets, 1)
        return chosen[0][1] if chosen else None

    def confident(
        self,
        query: str,
        snippets: Sequence[str],
        skip: int = MAX_WINDOWS,
        more: int = SECOND_LOOK_WINDOWS,
        minimum: float = SECOND_LOOK_MIN,
    ) -> list[tuple[int, float]]:
        """(snippet index, probability) of the windows after the first ``skip`` (in :func:`select_windows`
        order), at most ``more`` of them, that answer with probability ``minimum`` or more; best first."""
        q, chosen = self._chosen(query, snippets, skip + more)
        rest = chosen[skip:]
        if not rest:
            return []
        probs = self._run([pair_ids(q, ids, self.tok) for _, _, ids in rest])
        found = [(si, float(p)) for (si, _, _), p in zip(rest, probs, strict=True) if p >= minimum]
        return sorted(found, key=lambda t: -t[1])

    def scores(self, query: str, snippets: Sequence[str], limit: int = MAX_WINDOWS) -> list[float]:
        """Per snippet, the best probability of its selected windows (0.0 when none was selected)."""
        out = [0.0] * len(list(snippets or ()))
        for si, p in self.window_probs(query, snippets, limit):
            out[si] = max(out[si], p)
        return out


__all__ = [
    "CROSS_MODEL_FILE",
    "CROSS_TOKENIZER_FILE",
    "SECOND_LOOK_MIN",
    "SECOND_LOOK_WINDOWS",
    "CrossEncoder",
    "WordPiece",
    "pair_ids",
    "select_windows",
    "windows",
]
