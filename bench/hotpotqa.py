"""Agentic retrieval versus single-pass retrieval on HotpotQA (multi-hop questions).

    python bench/hotpotqa.py --data /work/shared/data [--limit N] [--work-dir DIR] [--mode lexical,dense]
                             [--backend milvus-lite] [--iterations 3] [--prefilter none|onnx] [--json out.json]

Corpus: ``hotpotqa/derived/hotpot_dev500_pooled_corpus.jsonl`` (4,858 Wikipedia paragraphs, the pooled
distractor paragraphs of 500 dev questions), queries ``hotpot_dev500_queries.jsonl`` (261 questions whose two
supporting paragraphs are both in the pool) and ``hotpot_dev500_qrels.tsv`` (the two supporting paragraphs).

For each question, through the product's own paths (``Services.search`` on the configured backend, and
:class:`~assistant_bridge.agentic.runtime.AgenticRuntime` bindings for the agentic run):

* **single-pass**: one search with the question, top 5;
* **agentic**: :class:`~assistant_bridge.agentic.loop.AgenticRun` with the embedded planner (speculative
  retrieval, planning, up to ``--iterations`` rounds), final top 5.

Reported per pipeline: Recall@5 (share of the two supporting paragraphs in the top 5), Both@5 (both in the
top 5), answer EM / F1 (SQuAD normalisation) and answer-contains-gold of the generated answer (the
extractive generator by default: it answers with whole sentences, so EM stays near 0 and
answer-contains-gold is the telling figure), p50 / p95 retrieval latency (agentic: planning and retrieval,
until its last trace event), p50 end-to-end latency with the answer, and the mean number of retrieval calls.

``--mode lexical`` indexes with the hashing embedder (its vectors are unused; BM25 does the work) and takes
seconds; ``--mode dense`` embeds the corpus with the default multilingual-e5-small once (about 20 minutes on
two cores; vectors are cached by content hash in the work dir).
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import string
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant_bridge.agentic.answer import answer_snippets  # noqa: E402
from assistant_bridge.agentic.events import ResultEvent, ResultItem, TraceEvent  # noqa: E402
from assistant_bridge.agentic.request import AgenticRequest, RetrieverRequest  # noqa: E402
from assistant_bridge.agentic.runtime import AgenticRuntime  # noqa: E402
from assistant_bridge.domain import Principal, Scope  # noqa: E402
from assistant_bridge.services import Services  # noqa: E402
from assistant_bridge.settings import load_settings  # noqa: E402
from assistant_bridge.store import SQLiteStore  # noqa: E402
from bench._common import bulk_load, passages_to_chunks, percentiles, read_jsonl  # noqa: E402

K = 5


def load_hotpot(data: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, set[str]]]:
    base = data / "hotpotqa" / "derived"
    corpus = list(read_jsonl(base / "hotpot_dev500_pooled_corpus.jsonl"))
    queries = list(read_jsonl(base / "hotpot_dev500_queries.jsonl"))
    qrels: dict[str, set[str]] = {}
    for line in (base / "hotpot_dev500_qrels.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        qid, pid, score = line.split("\t")[:3]
        if int(score) > 0:
            qrels.setdefault(qid, set()).add(pid)
    return corpus, [q for q in queries if q["_id"] in qrels], qrels


def normalize_answer(s: str) -> str:
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def em_f1(prediction: str, golds: list[str]) -> tuple[float, float, float]:
    """Exact match, token F1 (best over the gold answers) and whether a gold answer occurs in the prediction."""
    pred = normalize_answer(prediction)
    em = f1 = contains = 0.0
    for gold in golds:
        g = normalize_answer(gold)
        em = max(em, float(pred == g))
        contains = max(contains, float(bool(g) and f" {g} " in f" {pred} "))
        common = Counter(pred.split()) & Counter(g.split())
        same = sum(common.values())
        if same:
            p, r = same / len(pred.split()), same / len(g.split())
            f1 = max(f1, 2 * p * r / (p + r))
    return em, f1, contains


def pid_of(metadata: dict[str, Any]) -> str:
    url = str(metadata.get("url") or "")
    return url.split(":", 1)[1] if url.startswith("bench:") else ""


def make_services(args: argparse.Namespace, mode: str, n: int) -> Services:
    embedder = "hashing" if mode == "lexical" else "e5-small"
    settings = load_settings(
        env={},
        overrides={
            "data_dir": str(args.work_dir / f"hotpot-{args.backend}-{embedder}"),
            "backend": {"kind": args.backend, "collection": f"hotpot_{n}", "default_mode": mode},
            "embedder": {"kind": embedder},
            "agentic": {
                "default_max_iterations": args.iterations,
                "results_per_query": args.per_query,
                # the embedded planner reads the pre-filter's score only when told to (agentic.sufficiency)
                "sufficiency": "prefilter" if args.prefilter == "onnx" else "auto",
            },
        },
    )
    store = SQLiteStore(args.work_dir / "embedding-cache.sqlite3")
    return Services.from_settings(settings, store=store)


def prefilter(kind: str) -> tuple[Any, float | None]:
    if kind == "none":
        return None, None
    from assistant_bridge.filters import load_filters, load_thresholds

    pre, _post = load_filters()
    pre.warm_up()
    return pre, load_thresholds("less_often").pre_gen


def run_mode(
    args: argparse.Namespace,
    mode: str,
    corpus: list[dict[str, Any]],
    queries: list[dict[str, Any]],
    qrels: dict[str, set[str]],
    generator: Any,
    pre: Any,
    threshold: float | None,
) -> dict[str, Any]:
    svc = make_services(args, mode, len(corpus))
    svc.warm_up()
    chunks = passages_to_chunks(corpus)
    load_s = 0.0
    if svc.backend.count() < len(chunks):
        print(f"[{mode}] loading {len(chunks)} paragraphs into {args.backend}", flush=True)
        load_s = bulk_load(svc, chunks)
    runtime = AgenticRuntime(svc, generator=generator, prefilter=pre, threshold=threshold)
    scope = Scope(Principal("bench", admin=True))
    rows: dict[str, dict[str, list[float]]] = {"single": {}, "agentic": {}}

    def note(pipe: str, key: str, value: float) -> None:
        rows[pipe].setdefault(key, []).append(value)

    for i, q in enumerate(queries):
        gold, text = qrels[q["_id"]], q["text"]
        t0 = time.perf_counter()
        hits = svc.search(text, scope, mode=mode, limit=K)
        t1 = time.perf_counter()
        items = [ResultItem(h.chunk.text, "default", {"title": h.chunk.title, "url": h.chunk.url}) for h in hits]
        answer = generator.generate(text, answer_snippets(items, K)).text if args.generate else ""
        t2 = time.perf_counter()
        single = [pid_of(it.metadata) for it in items]
        note("single", "latency_ms", (t1 - t0) * 1000)
        note("single", "e2e_ms", (t2 - t0) * 1000)
        note("single", "calls", 1)
        _score(note, "single", single, gold, answer, q["answers"], args.generate)

        request = AgenticRequest(
            question=text,
            retrievers=(RetrieverRequest("default"),),
            generate=args.generate,
            max_iterations=args.iterations,
        )
        run = runtime.build_run(request, scope, run_id=f"q{i}")
        t0 = time.perf_counter()
        retrieval_done = None
        result: ResultEvent | None = None
        for event in run.events():
            if isinstance(event, TraceEvent):
                retrieval_done = time.perf_counter()  # planning and retrieval end with the last trace
            if isinstance(event, ResultEvent):
                result = event
        t2 = time.perf_counter()
        assert result is not None
        ranked = [pid_of(dict(r.metadata)) for r in result.results]
        note("agentic", "latency_ms", ((retrieval_done or t2) - t0) * 1000)
        note("agentic", "e2e_ms", (t2 - t0) * 1000)
        note("agentic", "calls", run.stats.retrieval_calls)
        note("agentic", "iterations", run.stats.iterations)
        _score(note, "agentic", ranked, gold, result.answer or "", q["answers"], args.generate)
        if (i + 1) % 50 == 0:
            print(f"[{mode}] {i + 1}/{len(queries)}", flush=True)
    svc.backend.close()
    report: dict[str, Any] = {"load_seconds": round(load_s, 1)}
    for pipe, m in rows.items():
        mean = lambda key, m=m: round(sum(m[key]) / len(m[key]), 4) if m.get(key) else None  # noqa: E731
        report[pipe] = {
            "recall@5": mean("recall"),
            "both@5": mean("both"),
            "em": mean("em"),
            "f1": mean("f1"),
            "answer_contains_gold": mean("contains"),
            "mean_retrieval_calls": mean("calls"),
            "mean_iterations": mean("iterations"),
            "retrieval_latency_ms": {
                k: round(v, 1) for k, v in percentiles(m["latency_ms"]).items() if k in ("p50", "p95")
            },
            "e2e_latency_ms_p50": round(percentiles(m["e2e_ms"])["p50"], 1),
        }
    return report


def _score(
    note: Any, pipe: str, ranked: list[str], gold: set[str], answer: str, answers: list[str], generate: bool
) -> None:
    found = len(set(ranked[:K]) & gold)
    note(pipe, "recall", found / len(gold))
    note(pipe, "both", float(found == len(gold)))
    if generate:
        em, f1, contains = em_f1(answer, answers)
        note(pipe, "em", em)
        note(pipe, "f1", f1)
        note(pipe, "contains", contains)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--limit", type=int, default=0, help="first N questions only")
    ap.add_argument("--work-dir", type=Path, default=Path("/tmp/assistant-bridge-bench"))
    ap.add_argument("--mode", default="lexical", help="comma list of lexical, dense, hybrid")
    ap.add_argument("--backend", default="milvus-lite")
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--per-query", type=int, default=5, help="results per search (maxNumberOfResults)")
    ap.add_argument(
        "--prefilter",
        choices=("none", "onnx"),
        default="none",
        help="onnx: the embedded planner reads the pre-generation filter's score (agentic.sufficiency = prefilter)",
    )
    ap.add_argument("--generator", default="extractive", help="extractive, or 'none' to skip answers")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    args.generate = args.generator != "none"
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("grpc._server").setLevel(logging.CRITICAL)
    args.work_dir.mkdir(parents=True, exist_ok=True)

    corpus, queries, qrels = load_hotpot(args.data)
    if args.limit:
        queries = queries[: args.limit]
    generator = None
    if args.generate:
        from assistant_bridge.generators import make_generator

        options: dict[str, Any] = {}
        if args.generator == "extractive":
            from assistant_bridge.generators.sentence_embedder import UseSentenceEmbedder

            # no sentence cache: the pipeline that runs second must not reuse the first one's vectors
            options["embedder"] = UseSentenceEmbedder(cache_size=0)
        generator = make_generator(args.generator, **options)
        generator.warm_up()
    pre, threshold = prefilter(args.prefilter)
    report: dict[str, Any] = {
        "questions": len(queries),
        "paragraphs": len(corpus),
        "backend": args.backend,
        "iterations": args.iterations,
        "per_query": args.per_query,
        "prefilter": args.prefilter,
        "generator": args.generator,
    }
    for mode in args.mode.split(","):
        report[mode] = run_mode(args, mode, corpus, queries, qrels, generator, pre, threshold)
        s, a = report[mode]["single"], report[mode]["agentic"]
        print(
            f"[{mode}] single  R@5={s['recall@5']:.3f} both@5={s['both@5']:.3f} F1={s['f1']} "
            f"contains={s['answer_contains_gold']} p50={s['retrieval_latency_ms']['p50']} ms",
            flush=True,
        )
        print(
            f"[{mode}] agentic R@5={a['recall@5']:.3f} both@5={a['both@5']:.3f} F1={a['f1']} "
            f"contains={a['answer_contains_gold']} p50={a['retrieval_latency_ms']['p50']} ms "
            f"calls={a['mean_retrieval_calls']}",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
