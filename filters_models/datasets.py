"""Training and evaluation sets of the filter models, built from the public data sets in ``--data``.

Splits are fixed and documented (see the model cards):

* SQuAD 2.0 (half dev), PIAF, JSQuAD: split **by article title** with a SHA-1 hash, 70 % train / 30 % held out.
* HotpotQA (500 dev questions): split by question id with the same hash.
* CLAPNQ train pairs (below): split by Wikipedia document id with the same hash.
* CLAPNQ **dev** (150 answerable + 153 unanswerable) is **evaluation only**: nothing from it is trained on.
* CLAPNQ **train** questions (``retrieval/train``) whose Wikipedia document has chunks in the MTRAG-pooled
  mini corpus give NQ-style training pairs: the chunk that is the gold passage (answerable) and other chunks
  of the same document (does not hold the answer). Documents whose title occurs in CLAPNQ dev are dropped.

Every random choice uses a ``random.Random`` seeded from the example id, so a rerun builds the same sets.
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

HELD_OUT_SHARE = 0.30


@dataclass(frozen=True)
class QA:
    """One question with its gold passage (``answer`` may be empty for unanswerable items)."""

    qid: str
    source: str
    lang: str
    group: str  # article title or question id: the unit of the train/held-out split
    question: str
    context: str
    answer: str
    answer_start: int
    answerable: bool
    title: str = ""
    reference: str = ""  # a human-written long answer, when the data set has one


@dataclass(frozen=True)
class PreExample:
    query: str
    snippets: tuple[str, ...]
    label: int
    source: str
    lang: str
    kind: str
    split: str


@dataclass(frozen=True)
class PostExample:
    query: str
    snippets: tuple[str, ...]
    answer: str
    label: int
    source: str
    lang: str
    kind: str
    split: str
    extra: dict[str, str] = field(default_factory=dict)


def split_of(group: str) -> str:
    h = int(hashlib.sha1(group.encode("utf-8")).hexdigest()[:8], 16) / 0xFFFFFFFF
    return "heldout" if h < HELD_OUT_SHARE else "train"


def combiner_part(query: str) -> str:
    """``"A"`` or ``"B"``: the half of the held-out split a question falls in. The pre-filter's combining
    classifier is fitted on part A (the cross-encoder under it was trained on the train split); figures are
    reported on part B."""
    return "A" if rng_for("combiner", query).random() < 0.5 else "B"


def rng_for(*parts: str) -> random.Random:
    return random.Random(int(hashlib.sha1("|".join(parts).encode("utf-8")).hexdigest()[:12], 16))


# --------------------------------------------------------------------------------------------- loaders


def _squad_like(path: Path, source: str, lang: str) -> Iterator[QA]:
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    for art in data:
        title = art.get("title", "")
        for para in art["paragraphs"]:
            ctx = para["context"]
            if source == "jsquad":
                ctx = ctx.split("[SEP]", 1)[-1].strip()
                offset = len(para["context"]) - len(ctx)
            else:
                offset = 0
            for qa in para["qas"]:
                impossible = bool(qa.get("is_impossible", False)) or not qa.get("answers")
                ans = {} if impossible else qa["answers"][0]
                yield QA(
                    qid=str(qa["id"]),
                    source=source,
                    lang=lang,
                    group=f"{source}:{title}",
                    question=qa["question"],
                    context=ctx,
                    answer=ans.get("text", ""),
                    answer_start=max(ans.get("answer_start", -1) - offset, -1),
                    answerable=not impossible,
                    title=title,
                )


def load_squad2(data: Path) -> list[QA]:
    return list(_squad_like(data / "squad2" / "cs224n_dev-v2.0_half_official_dev.json", "squad2", "en"))


def load_piaf(data: Path) -> list[QA]:
    return list(_squad_like(data / "piaf_fr" / "piaf-v1.0.json", "piaf", "fr"))


def load_jsquad(data: Path) -> list[QA]:
    return list(_squad_like(data / "jsquad" / "jsquad_valid-v1.3.json", "jsquad", "ja"))


def load_clapnq_dev(data: Path) -> list[QA]:
    out: list[QA] = []
    base = data / "clapnq" / "annotated_data" / "dev"
    for name, answerable in (("clapnq_dev_answerable.jsonl", True), ("clapnq_dev_unanswerable.jsonl", False)):
        for line in (base / name).read_text(encoding="utf-8").splitlines():
            d = json.loads(line)
            p = d["passages"][0]
            ref = (d.get("output") or [{}])[0].get("answer") or ""
            out.append(
                QA(
                    qid=str(d["id"]),
                    source="clapnq_dev",
                    lang="en",
                    group=str(d["id"]),
                    question=d["input"],
                    context=p["text"],
                    answer="",
                    answer_start=-1,
                    answerable=answerable,
                    title=p.get("title", ""),
                    reference=ref,
                )
            )
    return out


def load_clapnq_train_pairs(data: Path) -> list[tuple[QA, list[str]]]:
    """NQ-style pairs from CLAPNQ *train*: (answerable QA on the gold chunk, other chunks of the same document)."""
    dev_titles = {q.title for q in load_clapnq_dev(data)}
    chunks: dict[str, list[tuple[int, int, str, str]]] = defaultdict(list)
    with (data / "clapnq" / "derived" / "clapnq_dev_minicorpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            parts = re.split(r"[_-]", d["_id"])
            if len(parts) == 5 and d.get("title", "") not in dev_titles:
                chunks[parts[0]].append((int(parts[1]), int(parts[2]), d["text"], d.get("title", "")))
    out: list[tuple[QA, list[str]]] = []
    path = data / "clapnq" / "retrieval" / "train" / "question_train_answerable.tsv"
    with path.open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            doc, rng = row["doc-id-list"].split(",")[0].split("_")
            start, end = map(int, rng.split("-"))
            if doc not in chunks:
                continue
            gold = [c for c in chunks[doc] if c[0] == start and c[1] == end]
            others = [c[2] for c in chunks[doc] if c[1] <= start or c[0] >= end]
            qa = QA(
                qid=row["id"],
                source="clapnq_train",
                lang="en",
                group=f"clapnq:{doc}",
                question=row["question"],
                context=gold[0][2] if gold else "",
                answer="",
                answer_start=-1,
                answerable=bool(gold),
                title=chunks[doc][0][3],
                reference=row.get("answers", ""),
            )
            out.append((qa, others))
    return out


def load_hotpot(data: Path) -> list[tuple[QA, list[str], list[str]]]:
    """(QA on the supporting paragraph that holds the answer, both supporting paragraphs, distractors)."""
    out: list[tuple[QA, list[str], list[str]]] = []
    for line in (data / "hotpotqa" / "ircot_format_hotpotqa_dev_500.jsonl").read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        spans = [s for o in d["answers_objects"] for s in o.get("spans", []) if s]
        ans = spans[0] if spans else ""
        sup = [c for c in d["contexts"] if c["is_supporting"]]
        dis = [c["paragraph_text"] for c in d["contexts"] if not c["is_supporting"]]
        with_ans = [c for c in sup if ans and ans in c["paragraph_text"]] or sup
        if not with_ans:
            continue
        gold = with_ans[0]["paragraph_text"]
        qa = QA(
            qid=d["question_id"],
            source="hotpotqa",
            lang="en",
            group=d["question_id"],
            question=d["question_text"],
            context=gold,
            answer=ans if ans in gold else "",
            answer_start=gold.find(ans) if ans in gold else -1,
            answerable=True,
            title=with_ans[0]["title"],
        )
        out.append((qa, [c["paragraph_text"] for c in sup], dis))
    return out
