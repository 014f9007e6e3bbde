"""CLAPNQ loading and answer metrics for ``bench/clapnq.py`` (not part of the package).

Metrics follow the CLAPNQ paper and ``shared/data/README.md``:

* RougeL: ROUGE-L F1 (longest common subsequence) over lower-cased ``\\w+`` word tokens, best over the
  references. With this tokenisation the trivial baselines on the 150 dev answerable questions come out at
  40.3 (first sentence), 47.6 (first three) and 51.4 (whole passage), the published reference figures.
* R: ROUGE-1 recall against the reference (best over the references).
* RougeLp: ROUGE-L F1 of the answer against the passage (how extractive the answer is).
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    title: str
    passage: str
    references: tuple[str, ...]  # empty for unanswerable questions
    passage_id: str = ""

    @property
    def answerable(self) -> bool:
        return bool(self.references)


def tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _lcs(a: Sequence[str], b: Sequence[str]) -> int:
    if not a or not b:
        return 0
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def rouge_l(candidate: str, reference: str) -> float:
    c, r = tokens(candidate), tokens(reference)
    common = _lcs(c, r)
    if common == 0:
        return 0.0
    p, rec = common / len(c), common / len(r)
    return 2 * p * rec / (p + rec)


def rouge1_recall(candidate: str, reference: str) -> float:
    c, r = Counter(tokens(candidate)), Counter(tokens(reference))
    total = sum(r.values())
    return sum((c & r).values()) / total if total else 0.0


def best(metric, candidate: str, references: Sequence[str]) -> float:  # type: ignore[no-untyped-def]
    return max((metric(candidate, ref) for ref in references), default=0.0)


def _read_jsonl(path: Path) -> Iterator[dict]:  # type: ignore[type-arg]
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def load_dev(data_dir: Path) -> list[Question]:
    """The 150 answerable + 153 unanswerable dev questions, each with its gold (or candidate) passage."""
    base = data_dir / "clapnq" / "annotated_data" / "dev"
    out: list[Question] = []
    for name in ("clapnq_dev_answerable.jsonl", "clapnq_dev_unanswerable.jsonl"):
        for row in _read_jsonl(base / name):
            passage = row["passages"][0]
            refs = tuple(o["answer"] for o in row["output"] if o.get("answer"))
            out.append(Question(str(row["id"]), row["input"], passage["title"], passage["text"], refs))
    return out


def load_train_heldout(data_dir: Path, spans: bool = False) -> list[Question]:
    """Train answerable questions whose gold passage is in the dev mini corpus: 46 of them by id, or 158 with
    ``spans`` (the gold passage lies inside a mini-corpus passage of the same article: ``813602675_557-1132``
    inside ``813602675_0-1400``; the mini corpus cut some articles into longer passages).

    Never used to choose parameters before the ``train`` split was made; since then the ``train`` split is
    where generator weights are tuned, and dev is where they are reported.
    """
    corpus = {}
    by_article: dict[str, list[tuple[int, int, str]]] = {}
    for row in _read_jsonl(data_dir / "clapnq" / "derived" / "clapnq_dev_minicorpus.jsonl"):
        corpus[row["_id"]] = row
        m = _SPAN.match(row["_id"])
        if m:
            by_article.setdefault(m[1], []).append((int(m[2]), int(m[3]), row["_id"]))
    csv.field_size_limit(1 << 30)
    out: list[Question] = []
    path = data_dir / "clapnq" / "retrieval" / "train" / "question_train_answerable.tsv"
    with open(path, encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            doc_ids = [d for d in row["doc-id-list"].split(",") if d in corpus]
            if not doc_ids and spans:
                doc_ids = [i for d in row["doc-id-list"].split(",") for i in _containing(d, by_article)]
            if not doc_ids:
                continue
            passage = corpus[doc_ids[0]]
            refs = tuple(a.strip() for a in row["answers"].split("::") if a.strip())
            out.append(Question(row["id"], row["question"], passage["title"], passage["text"], refs, doc_ids[0]))
    return out


_SPAN = re.compile(r"(\d+)_(\d+)-(\d+)")


def _containing(passage_id: str, by_article: dict[str, list[tuple[int, int, str]]]) -> list[str]:
    """The mini-corpus passages of the same article whose character span holds ``passage_id``'s."""
    m = _SPAN.match(passage_id)
    if not m:
        return []
    start, end = int(m[2]), int(m[3])
    return [i for s, e, i in by_article.get(m[1], []) if s <= start and end <= e]


def percentiles(values: Sequence[float]) -> dict[str, float]:
    v = sorted(values)
    if not v:
        return {"p50": float("nan"), "p95": float("nan")}
    pick = lambda q: v[min(len(v) - 1, int(round(q * (len(v) - 1))))]  # noqa: E731
    return {"p50": pick(0.5), "p95": pick(0.95)}
