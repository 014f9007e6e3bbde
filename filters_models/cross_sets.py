"""Labelled (query, passage window) pairs for the cross-encoder of the pre-generation filter.

Windows are cut exactly as the service cuts them (:func:`assistant_bridge.filters.cross.windows`).
Label 1: the window holds the answer. Label 0: it does not. ``kind``:

* ``answer``        the window of the question's own paragraph that holds the gold answer span;
* ``same_para``     another window of that paragraph, without the answer span (one question in three);
* ``squad_unans``   SQuAD 2.0 unanswerable question: the window of its paragraph that shares the most words;
* ``same_article``  the best window of another paragraph of the same article (one question in two);
* ``other_article`` the best window of a paragraph of another article (one question in four);
* ``distractor``    HotpotQA: the best window of a distractor paragraph;
* ``clapnq_gold``   CLAPNQ train: the window of the gold chunk closest to the reference answer;
* ``same_doc``      CLAPNQ train: the best window of another chunk of the same Wikipedia document;
* ``spliced``       (label 1) that ``same_doc`` window with the reference answer's sentences spliced in.

Splits and seeds are those of :mod:`datasets` (article / document / question-id hash, 70/30); CLAPNQ dev is
never used here.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from datasets import QA, load_clapnq_train_pairs, load_hotpot, load_jsquad, load_piaf, load_squad2, rng_for, split_of

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from assistant_bridge.filters.cross import WordPiece, windows, word_share  # noqa: E402
from assistant_bridge.filters.frozen_text import content_tokens, split_sentences  # noqa: E402

MAX_QUESTIONS = {"squad2": 6000, "piaf": 3000, "jsquad": 2600}


@dataclass(frozen=True)
class Pair:
    query: str
    text: str
    label: int
    source: str
    lang: str
    kind: str
    split: str


def _best(query: str, texts: list[str]) -> str | None:
    if not texts:
        return None
    qw = set(content_tokens(query))
    return max(texts, key=lambda t: word_share(qw, t))


def squad_like(items: list[QA], source: str, lang: str, tok: WordPiece) -> list[Pair]:
    groups: dict[str, list[QA]] = defaultdict(list)
    for q in items:
        groups[q.group].append(q)
    names = sorted(groups)
    wcache: dict[str, list[str]] = {}

    def wins(text: str) -> list[str]:
        if text not in wcache:
            wcache[text] = [w for w, _ in windows(text, tok)]
        return wcache[text]

    out: list[Pair] = []
    n_questions = 0
    for name in names:
        split = split_of(name)
        other_names = [n for n in names if n != name and split_of(n) == split]
        for q in groups[name]:
            if n_questions >= MAX_QUESTIONS.get(source, 10**9):
                return out
            n_questions += 1
            r = rng_for("cross", source, q.qid)
            own = wins(q.context)
            if not q.answerable:
                w = _best(q.question, own)
                if w:
                    out.append(Pair(q.question, w, 0, source, lang, "squad_unans", split))
                continue
            with_ans = [w for w in own if q.answer and q.answer in w]
            pos = _best(q.question, with_ans)
            if pos is None:
                continue
            out.append(Pair(q.question, pos, 1, source, lang, "answer", split))
            without = [w for w in own if q.answer not in w]
            if without and r.random() < 1 / 3:
                out.append(Pair(q.question, _best(q.question, without) or "", 0, source, lang, "same_para", split))
            paras = sorted({x.context for x in groups[name] if x.context != q.context and q.answer not in x.context})
            if paras and r.random() < 1 / 2:
                w = _best(q.question, wins(r.choice(paras)))
                if w:
                    out.append(Pair(q.question, w, 0, source, lang, "same_article", split))
            if other_names and r.random() < 1 / 4:
                other = groups[r.choice(other_names)]
                w = _best(q.question, wins(r.choice(other).context))
                if w:
                    out.append(Pair(q.question, w, 0, source, lang, "other_article", split))
    return out


def hotpot(data: Path, tok: WordPiece) -> list[Pair]:
    out: list[Pair] = []
    for qa, _sup, dis in load_hotpot(data):
        split = split_of(qa.group)
        own = [w for w, _ in windows(qa.context, tok)]
        pos = _best(qa.question, [w for w in own if qa.answer and qa.answer in w])
        if pos:
            out.append(Pair(qa.question, pos, 1, "hotpotqa", "en", "answer", split))
        neg = _best(qa.question, [w for d in dis for w, _ in windows(d, tok)])
        if neg:
            out.append(Pair(qa.question, neg, 0, "hotpotqa", "en", "distractor", split))
    return out


def clapnq_train(data: Path, tok: WordPiece) -> list[Pair]:
    out: list[Pair] = []
    for qa, others in load_clapnq_train_pairs(data):
        r = rng_for("cross", "clapnq_train", qa.qid)
        split = split_of(qa.group)
        if qa.answerable:
            pos = _best(qa.reference or qa.question, [w for w, _ in windows(qa.context, tok)])
            if pos:
                out.append(Pair(qa.question, pos, 1, "clapnq_train", "en", "clapnq_gold", split))
        if not others:
            continue
        neg = _best(qa.question, [w for w, _ in windows(r.choice(others), tok)])
        if not neg:
            continue
        out.append(Pair(qa.question, neg, 0, "clapnq_train", "en", "same_doc", split))
        if qa.reference and not qa.answerable:
            sents = split_sentences(neg)
            ref = split_sentences(qa.reference)
            at = r.randint(0, min(2, len(sents)))
            spliced = " ".join(sents[:at] + ref + sents[at:])
            out.append(Pair(qa.question, spliced, 1, "clapnq_train", "en", "spliced", split))
    return out


def build(data: Path, tok: WordPiece) -> list[Pair]:
    out: list[Pair] = []
    out += squad_like(load_squad2(data), "squad2", "en", tok)
    out += squad_like(load_piaf(data), "piaf", "fr", tok)
    out += squad_like(load_jsquad(data), "jsquad", "ja", tok)
    out += hotpot(data, tok)
    out += clapnq_train(data, tok)
    return out
