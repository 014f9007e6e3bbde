"""Labelled (query, snippets, answer) triples for the post-generation filter.

Supported answers (label 1): ``extract``, the context sentence that holds the gold answer span;
``extract2``, that sentence and the next one; ``extract_pair``, that sentence and another sentence of the
passage (as an extractive generator answers); ``reference``, a human-written CLAPNQ answer (paraphrased,
condensed). Unsupported answers (label 0) are built from a supported one:

* ``swap_entity``  the gold answer span replaced by the answer of another question (another article);
* ``swap_number``  a number in the sentence changed;
* ``negation``     the sentence negated (EN/FR/JA rules);
* ``other_sent``   a sentence of another paragraph of the same article (on topic, not in the snippets);
* ``foreign``      a sentence of another article;
* ``partial``      the supported sentence followed by an unsupported one.

``edited`` (label 1) is a supported sentence lightly rewritten the way a generator rewrites (a lead-in such as
"According to the documents,", a parenthesis or a trailing clause dropped, one or two words dropped), so
that "copied verbatim" is not the only mark of support; unsupported answers get the same lead-ins.

Split by article, as for the pre-filter; CLAPNQ dev reference answers are evaluation only.
"""

from __future__ import annotations

import random
import re
import sys
from collections import defaultdict
from pathlib import Path

from datasets import (
    QA,
    PostExample,
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

_NUM = re.compile(r"\d+(?:[.,]\d+)?")
_EN_AUX = re.compile(r"\b(is|are|was|were|has|have|had|can|could|will|would|should|does|did|do|must)\b")
_FR_AUX = re.compile(r"\b(est|sont|était|étaient|a|ont|avait|avaient|peut|peuvent|fut|sera|seront)\b")
_JA_END = (
    ("である。", "ではない。"),
    ("だった。", "ではなかった。"),
    ("した。", "しなかった。"),
    ("する。", "しない。"),
    ("いる。", "いない。"),
    ("ある。", "ない。"),
    ("れた。", "れなかった。"),
    ("った。", "らなかった。"),
    ("だ。", "ではない。"),
    ("た。", "なかった。"),
    ("る。", "らない。"),
)
_VERB_EN = re.compile(r"\b(\w+ed)\b")


def _sentence_with(context: str, start: int) -> tuple[str, str] | None:
    """The sentence holding character ``start`` and the sentence after it."""
    sents = split_sentences(context)
    pos = 0
    for i, s in enumerate(sents):
        at = context.find(s, pos)
        if at < 0:
            continue
        pos = at + len(s)
        if at <= start < pos:
            return s, (sents[i + 1] if i + 1 < len(sents) else "")
    return None


def negate(sentence: str, lang: str) -> str | None:
    if lang == "en":
        m = _EN_AUX.search(sentence)
        if m:
            return sentence[: m.end()] + " not" + sentence[m.end() :]
        m = _VERB_EN.search(sentence)
        if m:
            return sentence[: m.start()] + "did not " + m.group(1)[:-2] + sentence[m.end() :]
        return None
    if lang == "fr":
        m = _FR_AUX.search(sentence)
        if not m:
            return None
        verb = m.group(1)
        neg = ("n'" + verb) if verb[0] in "aeéiou" else ("ne " + verb)
        return sentence[: m.start()] + neg + " pas" + sentence[m.end() :]
    if lang == "ja":
        for end, neg in _JA_END:
            if sentence.endswith(end):
                return sentence[: -len(end)] + neg
        return None
    return None


def swap_number(sentence: str, r: random.Random) -> str | None:
    nums = list(_NUM.finditer(sentence))
    if not nums:
        return None
    m = r.choice(nums)
    raw = m.group()
    digits = re.sub(r"\D", "", raw)
    value = int(digits) if digits else 0
    if 1000 <= value <= 2100 and len(digits) == 4:
        new = str(value + r.choice([-30, -12, -7, -3, 2, 5, 11, 24]))
    else:
        new = str(
            max(0, value + r.choice([-5, -2, -1, 1, 2, 3, 7, 10]))
            if value < 20
            else int(value * r.choice([0.5, 0.7, 1.3, 2, 3]))
        )
    if new == digits:
        new = str(value + 1)
    return sentence[: m.start()] + new + sentence[m.end() :]


_LEAD = {
    "en": ("According to the documents, ", "Based on the passage, ", "In short: "),
    "fr": ("D'après les documents, ", "Selon le passage, ", "En bref : "),
    "ja": ("資料によると、", "文書によれば、", "要するに、"),
}


def edit(sentence: str, answer: str, lang: str, r: random.Random) -> str:
    """A light, meaning-preserving rewrite of ``sentence`` that keeps ``answer``."""
    choice = r.randrange(4)
    if choice == 0:
        lead = r.choice(_LEAD.get(lang, _LEAD["en"]))
        body = sentence[0].lower() + sentence[1:] if lang != "ja" and sentence[:2].istitle() else sentence
        return lead + body
    if choice == 1:
        out = re.sub(r"\s*[(（][^)）]*[)）]", "", sentence)
        if out != sentence and answer in out:
            return out
    if choice in (1, 2):
        sep = "、" if lang == "ja" else ", "
        parts = sentence.split(sep)
        keep = [p for i, p in enumerate(parts) if i == 0 or answer in p]
        if 1 < len(parts) and len(keep) < len(parts) and answer in sep.join(keep):
            end = "。" if lang == "ja" else "."
            return sep.join(keep).rstrip(".。") + end
    words = sentence.split(" ")
    if lang != "ja" and len(words) > 8:
        idx = [i for i, w in enumerate(words) if answer not in w and len(w) > 3][::2]
        for i in sorted(r.sample(idx, min(2, len(idx))), reverse=True):
            del words[i]
        return " ".join(words)
    return r.choice(_LEAD.get(lang, _LEAD["en"])) + sentence


def _examples_for(
    q: QA,
    snippets: tuple[str, ...],
    same_article: list[str],
    other_article: list[str],
    other_answers: list[str],
    split: str,
) -> list[PostExample]:
    found = _sentence_with(q.context, q.answer_start) if q.answer and q.answer_start >= 0 else None
    if not found:
        return []
    sent, nxt = found
    r = rng_for("post", q.source, q.qid)
    mk = lambda a, label, kind: PostExample(q.question, snippets, a, label, q.source, q.lang, kind, split)  # noqa: E731
    out = [mk(sent, 1, "extract")]
    if nxt and r.random() < 0.5:
        out.append(mk(sent + ("" if q.lang == "ja" else " ") + nxt, 1, "extract2"))
    if r.random() < 0.7:
        out.append(mk(edit(sent, q.answer, q.lang, r), 1, "edited"))
    ctx_sents = split_sentences(q.context)
    if len(ctx_sents) > 2 and r.random() < 0.5:
        # what an extractive generator returns: the answer sentence and another passage sentence, in order
        other = r.choice([s for s in ctx_sents if s not in (sent, nxt)] or [sent])
        pair = [s for s in ctx_sents if s in (sent, other)]
        out.append(mk(("" if q.lang == "ja" else " ").join(pair), 1, "extract_pair"))
    candidates: list[tuple[str, str]] = []
    alt = [a for a in other_answers if a and a != q.answer and a not in q.context]
    if alt and q.answer in sent:
        candidates.append((sent.replace(q.answer, r.choice(alt), 1), "swap_entity"))
    if (sn := swap_number(sent, r)) is not None:
        candidates.append((sn, "swap_number"))
    if (ng := negate(sent, q.lang)) is not None:
        candidates.append((ng, "negation"))
    if same_article:
        candidates.append((r.choice(same_article), "other_sent"))
    if other_article:
        foreign = r.choice(other_article)
        candidates.append((foreign, "foreign"))
        joiner = "" if q.lang == "ja" else " "
        candidates.append((sent + joiner + (r.choice(same_article) if same_article else foreign), "partial"))
    r.shuffle(candidates)
    # two or three unsupported answers per question keeps the classes near balance
    lead = _LEAD.get(q.lang, _LEAD["en"])
    out += [
        mk((r.choice(lead) + a) if r.random() < 0.2 else a, 0, kind) for a, kind in candidates[: 2 + (r.random() < 0.5)]
    ]
    return out


def squad_like_examples(items: list[QA]) -> list[PostExample]:
    groups: dict[str, list[QA]] = defaultdict(list)
    for q in items:
        groups[q.group].append(q)
    sents_of = {g: sorted({s for q in qs for s in split_sentences(q.context)}) for g, qs in groups.items()}
    out: list[PostExample] = []
    names = sorted(groups)
    for name in names:
        split = split_of(name)
        others = [n for n in names if n != name and split_of(n) == split]
        other_sents = [s for n in others[:20] for s in sents_of[n]]
        other_answers = [q.answer for n in others for q in groups[n] if q.answerable]
        for q in groups[name]:
            if not q.answerable:
                continue
            same = [s for s in sents_of[name] if s not in q.context]
            out += _examples_for(q, (q.context,), same, other_sents, other_answers, split)
    return out


def hotpot_examples(data: Path) -> list[PostExample]:
    rows = load_hotpot(data)
    out: list[PostExample] = []
    answers = [qa.answer for qa, _, _ in rows if qa.answer]
    for qa, sup, dis in rows:
        split = split_of(qa.group)
        dis_sents = [s for d in dis for s in split_sentences(d)]
        out += _examples_for(qa, tuple(sup), [], dis_sents, answers, split)
    return out


def clapnq_train_examples(data: Path) -> list[PostExample]:
    """Human-written CLAPNQ train answers on their gold chunk (supported) and on another chunk (not)."""
    out: list[PostExample] = []
    for qa, others in load_clapnq_train_pairs(data):
        if not qa.answerable or not qa.reference:
            continue
        r = rng_for("post_clapnq", qa.qid)
        split = split_of(qa.group)
        out.append(PostExample(qa.question, (qa.context,), qa.reference, 1, qa.source, "en", "reference", split))
        if others:
            out.append(
                PostExample(qa.question, (r.choice(others),), qa.reference, 0, qa.source, "en", "wrong_passage", split)
            )
        if (ng := negate(qa.reference, "en")) is not None:
            out.append(PostExample(qa.question, (qa.context,), ng, 0, qa.source, "en", "negation", split))
    return out


def clapnq_dev_examples(data: Path) -> list[PostExample]:
    """Evaluation only: CLAPNQ dev reference answers on the gold passage (1) vs on the passage of another
    dev question (0), and negated (0)."""
    items = [q for q in load_clapnq_dev(data) if q.answerable and q.reference]
    out: list[PostExample] = []
    for i, q in enumerate(items):
        other = items[(i + 1) % len(items)].context
        out.append(PostExample(q.question, (q.context,), q.reference, 1, "clapnq_dev", "en", "reference", "eval"))
        out.append(PostExample(q.question, (other,), q.reference, 0, "clapnq_dev", "en", "wrong_passage", "eval"))
        if (ng := negate(q.reference, "en")) is not None:
            out.append(PostExample(q.question, (q.context,), ng, 0, "clapnq_dev", "en", "negation", "eval"))
    return out


# Cap per (source, split), to keep feature extraction within minutes on two cores; fixed-seed sample.
MAX_PER_SOURCE = {"train": 5000, "heldout": 1500}


def _cap(items: list[PostExample]) -> list[PostExample]:
    out: list[PostExample] = []
    for split, cap in MAX_PER_SOURCE.items():
        part = [e for e in items if e.split == split]
        out += part if len(part) <= cap else rng_for("cap", split, part[0].source).sample(part, cap)
    return out


def build(data: Path) -> list[PostExample]:
    out: list[PostExample] = []
    out += _cap(squad_like_examples(load_squad2(data)))
    out += _cap(squad_like_examples(load_piaf(data)))
    out += _cap(squad_like_examples(load_jsquad(data)))
    out += hotpot_examples(data)
    out += clapnq_train_examples(data)
    return out
