"""Labelled (query, snippets) pairs for the pre-generation filter.

Label 1: the snippets hold the answer. Label 0: they do not. ``kind`` says how an example was made:

* ``gold``            the question's own passage (answerable);
* ``squad_unans``     SQuAD 2.0 unanswerable question on its own paragraph (adversarially written);
* ``same_article``    the question with another paragraph of its own article;
* ``other_article``   the question with a paragraph of another article (the constructed negatives of PIAF / JSQuAD);
* ``same_doc``        CLAPNQ-train question with another chunk of its Wikipedia document (mimics CLAPNQ unanswerables);
* ``distractor``      HotpotQA question with two of its distractor paragraphs;
* ``spliced``         (label 1) the ``same_doc`` chunk with the sentences of the CLAPNQ-train reference answer
  spliced in, for questions whose gold chunk is not in the corpus (a matched pair with ``same_doc``);
* ``clapnq_unans`` / ``gold`` on CLAPNQ dev: the evaluation set.

``multi`` examples add 1 to 4 passages of other articles as extra snippets (the loop sends up to five).
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

from datasets import (
    QA,
    PreExample,
    load_clapnq_dev,
    load_clapnq_train_pairs,
    load_hotpot,
    load_jsquad,
    load_piaf,
    load_squad2,
    rng_for,
    split_of,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from assistant_bridge.filters.frozen_text import split_sentences  # noqa: E402

MULTI_SHARE = 0.3


def _by_group(items: list[QA]) -> dict[str, list[QA]]:
    g: dict[str, list[QA]] = defaultdict(list)
    for q in items:
        g[q.group].append(q)
    return g


def _add_distractors(snips: list[str], pool: list[str], key: str) -> tuple[tuple[str, ...], str]:
    r = rng_for("multi", key)
    if r.random() >= MULTI_SHARE or not pool:
        return tuple(snips), ""
    extra = r.sample(pool, min(len(pool), r.randint(1, 4)))
    out = snips + extra
    r.shuffle(out)
    return tuple(out), "+multi"


def squad_like_examples(items: list[QA], source: str, lang: str) -> list[PreExample]:
    """Own paragraph (1), another article's paragraph (0) for every question; another paragraph of the same
    article (0) for one question in three; SQuAD 2.0 unanswerables on their own paragraph (0)."""
    groups = _by_group(items)
    names = sorted(groups)
    out: list[PreExample] = []
    for name in names:
        split = split_of(name)
        own = sorted({q.context for q in groups[name]})
        other_names = [n for n in names if n != name and split_of(n) == split]
        pool = sorted({q.context for n in other_names for q in groups[n]})
        for q in groups[name]:
            r = rng_for(source, q.qid)
            label = int(q.answerable)
            snips, tag = _add_distractors([q.context], pool, q.qid)
            out.append(
                PreExample(q.question, snips, label, source, lang, ("gold" if label else "squad_unans") + tag, split)
            )
            if not q.answerable:
                continue
            if pool:
                neg = r.choice(pool)
                snips, tag = _add_distractors([neg], pool, q.qid + "o")
                out.append(PreExample(q.question, snips, 0, source, lang, "other_article" + tag, split))
            others = [c for c in own if c != q.context and (not q.answer or q.answer not in c)]
            if others and r.random() < 1 / 3:
                out.append(PreExample(q.question, (r.choice(others),), 0, source, lang, "same_article", split))
    return out


def hotpot_examples(data: Path) -> list[PreExample]:
    out: list[PreExample] = []
    for qa, sup, dis in load_hotpot(data):
        split = split_of(qa.group)
        r = rng_for("hotpot", qa.qid)
        out.append(PreExample(qa.question, tuple(sup), 1, "hotpotqa", "en", "gold", split))
        if len(dis) >= 2:
            out.append(PreExample(qa.question, tuple(r.sample(dis, 2)), 0, "hotpotqa", "en", "distractor", split))
    return out


def clapnq_train_examples(data: Path) -> list[PreExample]:
    out: list[PreExample] = []
    for qa, others in load_clapnq_train_pairs(data):
        r = rng_for("clapnq_train", qa.qid)
        split = split_of(qa.group)
        if qa.answerable:
            out.append(PreExample(qa.question, (qa.context,), 1, "clapnq_train", "en", "gold", split))
        if others:
            chunk = r.choice(others)
            out.append(PreExample(qa.question, (chunk,), 0, "clapnq_train", "en", "same_doc", split))
            if qa.reference and not qa.answerable:
                # the same chunk with the reference answer's sentences spliced in: a passage of the right
                # document that does hold the answer (the gold chunk itself is not in the corpus)
                sents = split_sentences(chunk)
                at = r.randint(0, len(sents))
                spliced = " ".join(sents[:at] + split_sentences(qa.reference) + sents[at:])
                out.append(PreExample(qa.question, (spliced,), 1, "clapnq_train", "en", "spliced", split))
    return out


def clapnq_dev_examples(data: Path) -> list[PreExample]:
    return [
        PreExample(
            q.question,
            (q.context,),
            int(q.answerable),
            "clapnq_dev",
            "en",
            "gold" if q.answerable else "clapnq_unans",
            "eval",
        )
        for q in load_clapnq_dev(data)
    ]


def build(data: Path) -> list[PreExample]:
    """Every pre-filter example except CLAPNQ dev (use :func:`clapnq_dev_examples` for that)."""
    out: list[PreExample] = []
    out += squad_like_examples(load_squad2(data), "squad2", "en")
    out += squad_like_examples(load_piaf(data), "piaf", "fr")
    out += squad_like_examples(load_jsquad(data), "jsquad", "ja")
    out += hotpot_examples(data)
    out += clapnq_train_examples(data)
    return out
