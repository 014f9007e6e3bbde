"""Feature vectors of the pre- and post-generation filters.

The training scripts (``filters_models/train_*.py``) and the runtime call the same two functions, so a model
always sees features computed exactly as they were at training time. Each function returns a float32 vector
whose layout is named by :data:`PRE_FEATURES` / :data:`POST_FEATURES`; the ONNX files record the layout
version (:data:`PRE_VERSION` / :data:`POST_VERSION`) and the runtime refuses a model trained on another one.

Invariant: the number of characters sent to the sentence encoder per call is bounded
(:data:`EMBED_CHAR_BUDGET`), whatever the size of the snippets.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from . import frozen_text as tx
from . import lanes
from .encoder import SentenceEncoder

BASE_PRE_VERSION = 3  # layout of :func:`base_pre_features` alone (the training scripts cache it by this)
PRE_VERSION = 5
POST_VERSION = 2
EMBED_CHAR_BUDGET = 1000
POST_EMBED_CHAR_BUDGET = 600
MAX_ANSWER_SENTENCES = 6

BASE_PRE_FEATURES: tuple[str, ...] = (
    "cos_max",
    "cos_top3",
    "cos_lex_best",
    "cov_any",
    "cov_any_w",
    "cov_sent_max",
    "cov_sent_max_w",
    "cov_win_max",
    "bigram_any",
    "num_in_query",
    "num_cov",
    "qlen_log",
    "qtype_when",
    "qtype_number",
    "qtype_who",
    "qtype_where",
    "type_cue_best",
    "snip_mean_cos_max",
    "first_cos_max",
    "cov_cos_best",
)
# From the cross-encoder (``cross.py``): logits of the best and second-best window it read, their mean over
# the windows read, the logit of the window that shares the most words with the query, and the share of
# CJK characters (its WordPiece vocabulary is weaker on Japanese).
CROSS_FEATURES: tuple[str, ...] = ("ce_max", "ce_second", "ce_mean", "ce_first", "cjk_share")
# From multilingual-e5-small (the default embedder's model): the cosine of the query with the window the
# cross-encoder reads first. A dense retrieval model's similarity tells an answering passage from one of the
# same page that only shares its topic, in every language it knows (the cross-encoder knows English).
DENSE_FEATURES: tuple[str, ...] = ("e5_win",)
PRE_FEATURES: tuple[str, ...] = BASE_PRE_FEATURES + CROSS_FEATURES + DENSE_FEATURES
POST_FEATURES: tuple[str, ...] = (
    "sup_cos_min",
    "sup_cos_mean",
    "sup_lex_min",
    "sup_lex_mean",
    "tok_prec",
    "bigram_prec_min",
    "trigram_prec_min",
    "num_in_answer",
    "num_missing",
    "name_missing",
    "neg_mismatch",
    "ans_query_cos",
    "query_cov_answer",
    "ans_len_log",
    "pre_cos_max",
    "pre_cov_sent_max",
)


@dataclass(frozen=True)
class _Sentence:
    text: str
    snippet: int
    toks: frozenset[str]


def _sentences(snippets: Sequence[str]) -> list[_Sentence]:
    out: list[_Sentence] = []
    for i, snip in enumerate(snippets):
        for s in tx.split_sentences(snip):
            out.append(_Sentence(s, i, frozenset(tx.content_tokens(s))))
    return out


def _weighted_cov(terms: Sequence[str], found: frozenset[str] | set[str]) -> float:
    """Coverage where a term weighs its length (long words and CJK bigrams of names are rarer)."""
    if not terms:
        return 1.0
    w = [min(len(t), 8) for t in terms]
    return sum(wi for t, wi in zip(terms, w, strict=True) if t in found) / sum(w)


def _select(sentences: list[_Sentence], scores: Sequence[float], budget: int, first: bool = False) -> list[int]:
    """Indices of the best-scoring sentences (ties: earlier first) within ``budget`` characters; with
    ``first``, the first sentence of every snippet is appended after them whatever the budget."""
    order = sorted(range(len(sentences)), key=lambda i: (-scores[i], i))
    chosen: list[int] = []
    used = 0
    if first:
        heads = [i for i, s in enumerate(sentences) if i == 0 or sentences[i - 1].snippet != s.snippet]
        budget -= sum(len(sentences[i].text) for i in heads)
    for i in order:
        if first and i in heads:
            continue
        n = len(sentences[i].text)
        if chosen and used + n > budget:
            continue
        chosen.append(i)
        used += n
    if first:
        chosen += [i for i in heads if i not in chosen]
    return chosen


class CrossScorer(Protocol):
    """What the pre-filter needs of the cross-encoder: (snippet index, probability) of each passage window
    it chose to read, and the text of the first of them."""

    def window_probs(self, query: str, snippets: Sequence[str]) -> list[tuple[int, float]]: ...

    def first_window(self, query: str, snippets: Sequence[str]) -> str | None: ...


@runtime_checkable
class SecondLook(Protocol):
    """A cross-encoder that can read more windows than the first (:meth:`~.cross.CrossEncoder.confident`)."""

    def confident(self, query: str, snippets: Sequence[str]) -> list[tuple[int, float]]: ...


class DenseScorer(Protocol):
    """Cosine similarity of a query and a passage under a dense retrieval model (query and passage roles)."""

    def similarity(self, query: str, passage: str) -> float: ...


@runtime_checkable
class KeepsQueries(Protocol):
    """A dense scorer that can compute a query's vector ahead of :meth:`DenseScorer.similarity` and keep it
    (:meth:`~.onnx_filters.EmbedderSimilarity.keep_query`)."""

    def keep_query(self, query: str) -> None: ...


def _logit(p: float) -> float:
    """log(p / (1 - p)), bounded to [-8, 8] so one saturated window does not dominate a mean."""
    p = min(max(p, 3.4e-4), 1 - 3.4e-4)
    return math.log(p / (1 - p))


def _clean(query: str, snippets: Sequence[str]) -> tuple[str, list[str]]:
    return tx.clip(query, tx.MAX_QUERY_CHARS), tx.clean_snippets(snippets)


def cross_features(query: str, snippets: Sequence[str], cross: CrossScorer) -> np.ndarray | None:
    """The :data:`CROSS_FEATURES` of (query, snippets); ``None`` when there is nothing to score."""
    return _cross_features(*_clean(query, snippets), cross)


def second_look(query: str, snippets: Sequence[str], cross: CrossScorer) -> list[tuple[int, float]]:
    """(index in ``snippets``, probability) of the snippets that a window after the first one read answers
    with confidence (:meth:`~.cross.CrossEncoder.confident`), best first; empty when the cross-encoder cannot
    look again or nothing is left to read. Not a feature: the combiner never sees it."""
    if not isinstance(cross, SecondLook):
        return []
    q, snips = _clean(query, snippets)
    if not q or not snips:
        return []
    # clean_snippets drops empty snippets: map its indices back to the caller's
    kept = [i for i, s in enumerate(list(snippets)[: tx.MAX_SNIPPETS]) if tx.clip(s, tx.MAX_SNIPPET_CHARS)]
    return [(kept[si], p) for si, p in cross.confident(q, snips)]


def _cross_features(q: str, snips: list[str], cross: CrossScorer) -> np.ndarray | None:
    if not q or not snips:
        return None
    read = [_logit(p) for _, p in cross.window_probs(q, snips)] or [_logit(0.0)]
    logits = sorted(read, reverse=True)
    head = (q + " " + " ".join(snips))[:2000]
    cjk = sum(1 for ch in head if tx.is_cjk(ch)) / max(1, sum(1 for ch in head if not ch.isspace()))
    second = logits[1] if len(logits) > 1 else logits[0]  # one window read: no second opinion
    # read[0] is the window sharing the most words with the query
    return np.asarray([logits[0], second, float(np.mean(logits)), read[0], cjk], dtype=np.float32)


def dense_features(query: str, snippets: Sequence[str], cross: CrossScorer, dense: DenseScorer) -> np.ndarray | None:
    """The :data:`DENSE_FEATURES` of (query, snippets); ``None`` when there is nothing to score."""
    return _dense_features(*_clean(query, snippets), cross, dense)


def _dense_features(q: str, snips: list[str], cross: CrossScorer, dense: DenseScorer) -> np.ndarray | None:
    if not q or not snips:
        return None
    window = cross.first_window(q, snips)
    return np.asarray([dense.similarity(q, window) if window else 0.0], dtype=np.float32)


def pre_features(
    query: str,
    snippets: Sequence[str],
    encoder: SentenceEncoder,
    cross: CrossScorer,
    dense: DenseScorer,
    concurrent: bool = False,
) -> np.ndarray | None:
    """Features of (query, snippets) in the :data:`PRE_FEATURES` layout; ``None`` when there is nothing to
    score (empty query or snippets).

    :param concurrent: compute the dense similarity (the window choice, then the dense model's call on it) in
        one more thread while this one computes the sentence features and then the cross-encoder's
        (:func:`~.lanes.side_by_side`, so one after the other on a one-core machine). onnxruntime
        and numpy release the GIL, so on two cores the turn waits for about half the sum; with two threads for
        the three parts, the longest chain (choose the window, embed it) has a core to itself instead of a share
        of two among three. That chain is the longer one, so this thread then computes the query's dense vector
        (:class:`KeepsQueries`), which the chain reads last. The vector is the same either way.
    """
    q, snips = _clean(query, snippets)  # once for every part
    if not q or not snips:
        return None
    if concurrent:

        def own() -> list[np.ndarray | None]:
            with lanes.occupied():  # the dense chain has the other core
                found = [_base_pre_features(q, snips, encoder), _cross_features(q, snips, cross)]
            if isinstance(dense, KeepsQueries) and found[0] is not None:
                dense.keep_query(q)
            return found

        def dense_chain() -> list[np.ndarray | None]:
            return [_dense_features(q, snips, cross, dense)]

        (base, ce), (de,) = lanes.side_by_side([own, dense_chain], "prefilter")
    else:
        base = _base_pre_features(q, snips, encoder)
        ce = None if base is None else _cross_features(q, snips, cross)
        de = None if base is None else _dense_features(q, snips, cross, dense)
    if base is None or ce is None or de is None:
        return None
    return np.concatenate([base, ce, de])


def base_pre_features(query: str, snippets: Sequence[str], encoder: SentenceEncoder) -> np.ndarray | None:
    """The :data:`BASE_PRE_FEATURES` of (query, snippets); ``None`` when there is nothing to score."""
    return _base_pre_features(*_clean(query, snippets), encoder)


def _base_pre_features(q: str, snips: list[str], encoder: SentenceEncoder) -> np.ndarray | None:
    sents = _sentences(snips)
    if not q or not sents:
        return None
    q_terms = list(dict.fromkeys(tx.content_tokens(q)))
    all_toks = frozenset().union(*(s.toks for s in sents))
    lex = [_weighted_cov(q_terms, s.toks) for s in sents]

    win = 0.0
    for i in range(len(sents)):
        group = [s for s in sents[i : i + 3] if s.snippet == sents[i].snippet]
        win = max(win, tx.overlap(q_terms, frozenset().union(*(s.toks for s in group))))

    chosen = _select(sents, lex, EMBED_CHAR_BUDGET, first=True)
    vecs = encoder.encode([q] + [sents[i].text for i in chosen])
    qv, sv = vecs[0], vecs[1:]
    cos = np.clip(sv @ qv, -1.0, 1.0)
    by_cos = np.argsort(-cos)
    snip_of = np.array([sents[i].snippet for i in chosen])
    snip_cos = []
    for k in set(snip_of.tolist()):
        m = sv[snip_of == k].mean(axis=0)
        snip_cos.append(float(m @ qv) / max(float(np.linalg.norm(m)), 1e-6))
    heads = [c for c, i in zip(cos, chosen, strict=True) if i == 0 or sents[i - 1].snippet != sents[i].snippet]
    top3 = np.sort(cos)[::-1][:3]
    top3 = np.pad(top3, (0, 3 - len(top3)), mode="edge") if len(top3) < 3 else top3
    lex_best = int(np.argmax(lex))  # always among the chosen sentences

    q_full = tx.tokens(q)
    q_bi = [b for b in tx.ngrams(q_full, 2) if not all(t in tx.STOPWORDS for t in b)]
    snip_bi: set[tuple[str, ...]] = set()
    for snip in snips:
        snip_bi.update(tx.ngrams(tx.tokens(snip), 2))
    q_nums = tx.numbers(q)
    snip_nums = set().union(*(tx.numbers(s) for s in snips))

    qtype = tx.question_type(q)
    # the lexical best, then the closest (once when they are one): in a set, their order, and so whether the
    # second one's first word stands after a full stop (tx.has_name), changed with the process's hash seed
    best_texts = " ".join(dict.fromkeys([sents[lex_best].text, sents[chosen[int(by_cos[0])]].text]))
    if qtype == "when":
        cue = tx.has_date(best_texts)
    elif qtype == "number":
        cue = tx.has_number(best_texts)
    elif qtype in ("who", "where"):
        cue = tx.has_name(best_texts, q)
    else:
        cue = False
    feats = [
        float(cos[by_cos[0]]),
        float(top3.mean()),
        float(cos[chosen.index(lex_best)]),
        tx.overlap(q_terms, all_toks),
        _weighted_cov(q_terms, all_toks),
        max(tx.overlap(q_terms, s.toks) for s in sents),
        max(lex),
        win,
        tx.overlap(q_bi, snip_bi),
        float(bool(q_nums)),
        tx.overlap(q_nums, snip_nums),
        math.log1p(len(q_terms)),
        float(qtype == "when"),
        float(qtype == "number"),
        float(qtype == "who"),
        float(qtype == "where"),
        float(cue),
        max(snip_cos),
        float(max(heads)),
        tx.overlap(q_terms, sents[chosen[int(by_cos[0])]].toks),
    ]
    return np.asarray(feats, dtype=np.float32)


def post_features(query: str, snippets: Sequence[str], answer: str, encoder: SentenceEncoder) -> np.ndarray | None:
    """Features of (query, snippets, answer); ``None`` when the answer or the snippets are empty."""
    q = tx.clip(query, tx.MAX_QUERY_CHARS)
    a = tx.clip(answer, tx.MAX_ANSWER_CHARS)
    snips = tx.clean_snippets(snippets)
    sents = _sentences(snips)
    a_sents = tx.split_sentences(a)[:MAX_ANSWER_SENTENCES]
    if not a_sents or not sents:
        return None
    a_terms = [list(dict.fromkeys(tx.content_tokens(s))) for s in a_sents]

    # Lexical support of each answer sentence by its best snippet sentence.
    best_idx: list[int] = []
    sup_lex: list[float] = []
    for terms in a_terms:
        scores = [_weighted_cov(terms, s.toks) for s in sents]
        j = int(np.argmax(scores))
        best_idx.append(j)
        sup_lex.append(scores[j])

    # Encode the answer sentences, the query and the snippet sentences most similar to the answer.
    lex_any = [max(_weighted_cov(t, s.toks) for t in a_terms) for s in sents]
    for j in best_idx:  # each answer sentence's closest snippet sentence is always encoded
        lex_any[j] = 2.0
    chosen = _select(sents, lex_any, POST_EMBED_CHAR_BUDGET)
    vecs = encoder.encode(a_sents + [q or " "] + [sents[i].text for i in chosen])
    av, qv, sv = vecs[: len(a_sents)], vecs[len(a_sents)], vecs[len(a_sents) + 1 :]
    sup_cos = np.clip(av @ sv.T, -1.0, 1.0).max(axis=1)
    pre_cos_max = float(np.clip(sv @ qv, -1.0, 1.0).max())
    a_mean = av.mean(axis=0)
    ans_q = float(a_mean @ qv) / max(float(np.linalg.norm(a_mean)), 1e-6)

    snip_toks_all = [tx.tokens(s) for s in snips]
    snip_uni = set().union(*(set(t) for t in snip_toks_all))
    snip_bi: set[tuple[str, ...]] = set()
    snip_tri: set[tuple[str, ...]] = set()
    for toks in snip_toks_all:
        snip_bi.update(tx.ngrams(toks, 2))
        snip_tri.update(tx.ngrams(toks, 3))
    a_toks = tx.tokens(a)
    a_content = tx.content_tokens(a)
    # n-grams are taken within each answer sentence: an extract of non-adjacent sentences is still verbatim
    sent_toks = [tx.tokens(s) for s in a_sents]
    bi_min = min(tx.overlap(tx.ngrams(t, 2), snip_bi) for t in sent_toks)
    tri_min = min(tx.overlap(tx.ngrams(t, 3), snip_tri) for t in sent_toks)

    snip_text = " ".join(snips)
    snip_lower = snip_text.lower()
    a_nums = tx.numbers(a)
    missing_nums = [n for n in a_nums if n not in tx.numbers(snip_text)]
    names = tx.capitalised(a) | tx.katakana_and_kanji_runs(a)
    missing_names = [n for n in names if n.lower() not in snip_lower]
    neg = max(
        float((tx.negation_count(s) > 0) != (tx.negation_count(sents[j].text) > 0))
        for s, j in zip(a_sents, best_idx, strict=True)
    )
    q_terms = list(dict.fromkeys(tx.content_tokens(q)))
    feats = [
        float(sup_cos.min()),
        float(sup_cos.mean()),
        min(sup_lex),
        float(np.mean(sup_lex)),
        tx.overlap(a_content, snip_uni),
        bi_min,
        tri_min,
        float(bool(a_nums)),
        len(missing_nums) / max(len(a_nums), 1),
        len(missing_names) / max(len(names), 1),
        neg,
        float(ans_q),
        tx.overlap(q_terms, frozenset(a_content)),
        math.log1p(len(a_toks)),
        pre_cos_max,
        max(_weighted_cov(q_terms, s.toks) for s in sents),
    ]
    return np.asarray(feats, dtype=np.float32)
