"""Hybrid search: dense, lexical, reciprocal-rank fusion and weighted-score fusion side by side, per domain.

    python bench/fusion.py --data ../shared/data [--real-docs DIR] [--clapnq DIR] [--conversations DIR]
                           [--depth 50] [--weights 0.3,0.4,0.5,0.6,0.7,0.8,0.9] [--json out.json]

Each domain is read from an index another benchmark built and kept (nothing is ingested here):

* ``--real-docs``: the work directory of ``bench/real_docs.py --keep-data`` (its ``data/``); the questions
  with answer strings, split ``dev`` / ``test``; a result is relevant when it holds one of the answer strings;
* ``--clapnq``: the work directory of ``bench/retrieval.py`` (the whole 11,282-passage mini corpus, e5-small);
  the 150 answerable dev questions and their qrels;
* ``--conversations``: the work directory of ``bench/conversations.py`` (dense); every turn that has gold
  passages, searched with its **human rewrite** (a standalone question), each domain (``fiqa``, ``wiki``,
  ``gitdocs``, ``tools``) apart, relevance as that benchmark defines it;
* ``--hotpotqa``: the work directory of ``bench/hotpotqa.py`` (its dense index of the 4,858-paragraph pool,
  built here when missing: a few minutes of embedding); the 261 questions, a result relevant when it is one
  of the question's two supporting paragraphs.

For every question the product's own ``Services.search`` is run once in ``dense`` and once in ``lexical``
mode to ``--depth`` results; the fusions are computed from those two runs with the product's own functions
(``backends.base.rrf_fuse``, ``weighted_fuse``), which is exactly what a ``hybrid`` search does with
``search.hybrid_fusion`` ``rrf`` (client side) and ``weighted`` at that depth. Reported per domain and method:
success@1 (a relevant result first), success@5 and MRR@10; then the latency of ``dense`` and ``hybrid``
searches through ``Services.search`` on the largest index, interleaved, with the load average.

Tuning and reporting: the default weight is chosen on the *tuning* sets (real documents ``dev`` and CLAPNQ,
both used while the answering was tuned) by their mean MRR@10; the others (real documents ``test``, the four
conversation domains) are reported as held out.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant_bridge.backends.base import rrf_fuse, weighted_fuse  # noqa: E402
from assistant_bridge.domain import Principal, Scope, SearchHit  # noqa: E402
from assistant_bridge.services import Services  # noqa: E402
from assistant_bridge.settings import load_settings  # noqa: E402
from bench._common import emit, percentiles  # noqa: E402

SCOPE = Scope(Principal("bench", admin=True))
TUNING = ("realdocs-dev", "clapnq")
Question = tuple[str, Callable[[SearchHit], bool]]


def real_docs(work: Path) -> tuple[Services, dict[str, list[Question]]]:
    from bench.real_docs import QUESTIONS

    svc = Services.from_settings(load_settings(env={}, overrides={"data_dir": str(work / "data")}))
    spec = json.loads(QUESTIONS.read_text(encoding="utf-8"))
    sets: dict[str, list[Question]] = {"realdocs-dev": [], "realdocs-test": []}
    for item in spec["questions"]:
        if "any" not in item:
            continue
        answers = [a.lower() for a in item["any"]]
        sets[f"realdocs-{item.get('split', 'dev')}"].append(
            (item["q"], lambda h, a=answers: any(x in h.chunk.text.lower() for x in a))
        )
    return svc, sets


def clapnq(data: Path, work: Path) -> tuple[Services, dict[str, list[Question]]]:
    from bench.retrieval import open_corpus

    svc, _, questions, qrels, _ = open_corpus(data, work, cache=work / "fusion-cache.sqlite3")
    return svc, {
        "clapnq": [
            (q, lambda h, r=qrels[qid]: bool(h.chunk.url) and h.chunk.url.split(":", 1)[1] in r)
            for qid, q in questions.items()
        ]
    }


def conversation_domain(name: str, data: Path, work: Path) -> tuple[Services, dict[str, list[Question]]]:
    from bench import conversations

    dom = conversations.domain(name, data, work)
    svc = conversations.make_services(name, "dense", work, "embedded")
    questions: list[Question] = [
        (t["rewrite"], lambda h, f=t["relevant"]: f([h]) > 0)
        for c in dom["conversations"]
        for t in c["turns"]
        if t["relevant"] is not None
    ]
    return svc, {name: questions}


def hotpotqa(data: Path, work: Path) -> tuple[Services, dict[str, list[Question]]]:
    from assistant_bridge.store import SQLiteStore
    from bench._common import bulk_load, passages_to_chunks
    from bench.hotpotqa import load_hotpot, pid_of

    corpus, queries, qrels = load_hotpot(data)
    settings = load_settings(
        env={},
        overrides={
            "data_dir": str(work / "hotpot-milvus-lite-e5-small"),
            "backend": {"kind": "milvus-lite", "collection": f"hotpot_{len(corpus)}"},
            "embedder": {"kind": "e5-small"},
        },
    )
    svc = Services.from_settings(settings, store=SQLiteStore(work / "embedding-cache.sqlite3"))
    svc.warm_up()
    chunks = passages_to_chunks(corpus)
    if svc.backend.count() < len(chunks):
        print(f"hotpotqa: embedding {len(chunks)} paragraphs", file=sys.stderr, flush=True)
        bulk_load(svc, chunks)
        svc.backend.close()
        svc = Services.from_settings(settings, store=SQLiteStore(work / "embedding-cache.sqlite3"))
    return svc, {
        "hotpotqa": [(q["text"], lambda h, r=qrels[q["_id"]]: pid_of({"url": h.chunk.url}) in r) for q in queries]
    }


def metrics(ranked: Sequence[Sequence[bool]]) -> dict[str, float]:
    n = max(1, len(ranked))
    mrr = sum(next((1 / (i + 1) for i, rel in enumerate(r[:10]) if rel), 0.0) for r in ranked)
    return {
        "success@1": round(sum(bool(r and r[0]) for r in ranked) / n, 3),
        "success@5": round(sum(any(r[:5]) for r in ranked) / n, 3),
        "mrr@10": round(mrr / n, 3),
    }


def evaluate(svc: Services, questions: list[Question], depth: int, weights: Sequence[float]) -> dict[str, Any]:
    methods: dict[str, list[list[bool]]] = {}
    for text, relevant in questions:
        dense = svc.search(text, SCOPE, mode="dense", limit=depth)
        lexical = svc.search(text, SCOPE, mode="lexical", limit=depth)
        runs = {"dense": dense[:10], "lexical": lexical[:10], "rrf": rrf_fuse([dense, lexical], 10)}
        for w in weights:
            runs[f"weighted {w:.1f}"] = weighted_fuse([dense, lexical], (w, 1.0 - w), 10)
        for name, hits in runs.items():
            methods.setdefault(name, []).append([relevant(h) for h in hits])
    return {"questions": len(questions), **{name: metrics(r) for name, r in methods.items()}}


def latency(svc: Services, questions: list[Question], rounds: int = 3) -> dict[str, Any]:
    """``dense`` and ``hybrid`` (the configured fusion) through ``Services.search``, interleaved per question."""
    times: dict[str, list[float]] = {"dense": [], "hybrid": []}
    for text, _ in questions[:40] * rounds:
        for mode in times:
            t0 = time.perf_counter()
            svc.search(text, SCOPE, mode=mode)
            times[mode].append((time.perf_counter() - t0) * 1000)
    return {mode: percentiles(ms) for mode, ms in times.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True, help="the folder that holds clapnq/ and mtrag_fiqa/")
    ap.add_argument("--real-docs", type=Path, help="work directory of bench/real_docs.py --keep-data")
    ap.add_argument("--clapnq", type=Path, help="work directory of bench/retrieval.py (all 11,282 passages)")
    ap.add_argument("--conversations", type=Path, help="work directory of bench/conversations.py")
    ap.add_argument("--domains", default="fiqa,wiki,gitdocs,tools")
    ap.add_argument("--hotpotqa", type=Path, help="work directory of bench/hotpotqa.py (built when missing)")
    ap.add_argument("--depth", type=int, default=50)
    ap.add_argument("--weights", default="0.3,0.4,0.5,0.6,0.7,0.8,0.9")
    ap.add_argument("--json")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    weights = [float(w) for w in args.weights.split(",")]
    loaders: list[Callable[[], tuple[Services, dict[str, list[Question]]]]] = []
    if args.real_docs:
        loaders.append(lambda: real_docs(args.real_docs))
    if args.clapnq:
        loaders.append(lambda: clapnq(args.data, args.clapnq))
    if args.conversations:
        for name in args.domains.split(","):
            loaders.append(lambda name=name: conversation_domain(name, args.data, args.conversations))
    if args.hotpotqa:
        loaders.append(lambda: hotpotqa(args.data, args.hotpotqa))
    if not loaders:
        raise SystemExit("nothing to measure: give --real-docs, --clapnq, --conversations and/or --hotpotqa")
    report: dict[str, Any] = {"depth": args.depth, "load_average_start": os.getloadavg(), "sets": {}}
    largest: tuple[int, dict[str, Any]] = (0, {})
    for load in loaders:
        svc, sets = load()
        svc.warm_up()
        for name, questions in sets.items():
            report["sets"][name] = evaluate(svc, questions, args.depth, weights)
            print(f"{name}: {len(questions)} questions", file=sys.stderr, flush=True)
        size = svc.backend.count()
        if size > largest[0]:
            first = next(iter(sets.values()))
            largest = (size, {"chunks": size, **latency(svc, first)})
        svc.backend.close()
    report["latency_ms"] = largest[1]
    tuning = [s for s in TUNING if s in report["sets"]]
    if tuning:
        mean = {w: sum(report["sets"][s][f"weighted {w:.1f}"]["mrr@10"] for s in tuning) / len(tuning) for w in weights}
        report["chosen_weight"] = {"on": tuning, "weight": max(mean, key=lambda w: mean[w]), "mean_mrr@10": mean}
    report["load_average_end"] = os.getloadavg()
    emit(report, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
