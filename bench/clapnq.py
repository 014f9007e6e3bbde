"""CLAPNQ benchmark of the conversational search loop: answer quality, "I don't know" rates, latency.

Usage::

    python -m bench.clapnq --data /work/shared/data                      # gold setting, dev, real filters
    python -m bench.clapnq --data ... --filters none --embedder none      # ablations
    python -m bench.clapnq --data ... --split train46                     # held-out check (46 questions)
    python -m bench.clapnq --data ... --split train                       # 158 train questions (tuning set)
    python -m bench.clapnq --data ... --setting rag --retrieval lexical   # BM25 over the 11,282 passages
    python -m bench.clapnq --data ... --setting rag --retrieval dense --max-passages 2000   # e5, cached subset
    python -m bench.clapnq --data ... --setting rag --search pkg.mod:fn   # fn(query) -> list of results
    python -m bench.clapnq --data ... --generator openai                  # uses LLM_BASE_URL/LLM_MODEL/LLM_API_KEY

Gold setting: each question's own passage is its single search result. RAG setting: the question is searched
through the product's own search path (``Services.search`` on Milvus Lite by default, as the built-in
``/message`` source does) over the CLAPNQ dev mini corpus, loaded once into ``--work-dir`` with the
benchmarks' embedding cache (``bench/retrieval.py``), and the loop runs over the top ``--top-k`` results
(the product's ``search.default_limit``, 10, by default; the loop keeps at most five snippets). ``lexical``
needs no embeddings (the index is built with the hashing embedder); ``dense`` and ``hybrid`` use e5-small,
whose passage vectors are cached only for the ``--max-passages 2000`` subset (the gold passages plus
distractors). Reported (percent): RougeL, R and
RougeLp on the answerable questions (an "I don't know" scores 0), the same on the raw generation before
the filters ("gen"), mean answer length in characters (answered answerable questions), Un-ans% (share of
unanswerable questions answered "I don't know"), false-IDK% (share of answerable ones), and p50/p95 per loop
stage in milliseconds; in the RAG setting also the share of answerable questions whose gold passage is among
the results ("gold in results"). RougeLp is measured against the gold passage in both settings.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # python bench/clapnq.py works too

from assistant_bridge.core.custom_search import result_of_hit  # noqa: E402
from assistant_bridge.core.loop import Answer, IDontKnow, run_conversational_search
from assistant_bridge.core.results import SearchResult
from assistant_bridge.core.snippets import build_snippets
from assistant_bridge.errors import ModelLoadError
from assistant_bridge.generators import make_generator
from bench._clapnq_data import (
    Question,
    best,
    load_dev,
    load_train_heldout,
    percentiles,
    rouge1_recall,
    rouge_l,
)
from bench._common import generator_params

Search = Callable[[Question], Sequence[SearchResult]]


class _PassFilter:
    """Stands in for both filters when none are loaded: always 1.0, so nothing is filtered."""

    def warm_up(self) -> None:
        return None

    def score(self, *args: Any) -> float:
        return 1.0


class _NoThresholds:
    pre_gen = 0.0
    post_gen = 0.0


def gold_search(question: Question) -> list[SearchResult]:
    return [SearchResult(title=question.title, body=question.passage, id=question.passage_id or question.id)]


def import_search(spec: str) -> Search:
    """``package.module:function`` taking the query string and returning results (JSON dicts or objects)."""
    module_name, _, attr = spec.partition(":")
    fn = getattr(importlib.import_module(module_name), attr)

    def search(question: Question) -> list[SearchResult]:
        out = fn(question.question)
        return [r if isinstance(r, SearchResult) else SearchResult.from_json(r) for r in out]

    return search


class ProductSearch:
    """The RAG setting's search: the product's ``Services.search`` over the loaded mini corpus, results shaped
    as the built-in ``/message`` source shapes them. Records which passages came back for each question."""

    def __init__(self, services: Any, mode: str, limit: int) -> None:
        from assistant_bridge.domain import Principal, Scope

        self.services = services
        self.mode = mode
        self.limit = limit or services.settings.search.default_limit
        self.scope = Scope(Principal("bench", admin=True))
        self.passages: dict[str, list[str]] = {}

    def __call__(self, question: Question) -> list[SearchResult]:
        hits = self.services.search(question.question, self.scope, mode=self.mode, limit=self.limit)
        self.passages[question.id] = [h.chunk.url.split(":", 1)[1] for h in hits if h.chunk.url]
        passage = self.services.settings.search.default_passage_chars
        return [result_of_hit(hit, question.question, passage) for hit in hits]


def open_rag_search(args: argparse.Namespace) -> tuple[ProductSearch, dict[str, set[str]], str]:
    """Load (or reopen) the mini corpus for ``--retrieval`` and return the search, the qrels and a label."""
    from bench.retrieval import open_corpus

    embedder = args.index_embedder or ("hashing" if args.retrieval == "lexical" else "e5-small")
    if embedder == "hashing" and args.retrieval != "lexical":
        raise SystemExit("--retrieval dense/hybrid needs a real embedder (--index-embedder e5-small)")
    svc, corpus, _, qrels, load_s = open_corpus(
        args.data,
        args.work_dir,
        backend=args.backend,
        embedder=embedder,
        max_passages=args.max_passages,
        cache=args.cache,
    )
    search = ProductSearch(svc, args.retrieval, args.top_k)
    label = (
        f"{args.retrieval} retrieval over {len(corpus)} passages ({args.backend}, index embedder {embedder}), "
        f"top {search.limit}" + (f", loaded in {load_s:.0f} s" if load_s else "")
    )
    return search, qrels, label


def load_filter_set(kind: str, level: str) -> tuple[Any, Any, Any, str, Any]:
    """``(pre, post, thresholds, label, sentence encoder or None)``.

    The filters' sentence encoder is returned so the extractive generator can share the loaded model and
    its cache, as a deployment should. When the post-filter model is not there, the pre-filter runs alone
    (post always passes) and the label says so.
    """
    if kind == "none":
        return _PassFilter(), _PassFilter(), _NoThresholds(), "no filter", None
    from assistant_bridge.filters import load_thresholds
    from assistant_bridge.filters import onnx_filters as of
    from assistant_bridge.filters.encoder import UseEncoder
    from assistant_bridge.generators.coverage import CoveringPreFilter

    encoder = UseEncoder(threads=1)
    thresholds = load_thresholds(level)
    try:
        loaded, post = of.load_filters(encoder=encoder)
        pre = CoveringPreFilter(loaded)  # as the service loads it: the loop's coverage rule
        label = f"filters ({level}: pre_gen>={thresholds.pre_gen}, post_gen>={thresholds.post_gen})"
    except ModelLoadError:
        model = of.OnnxClassifier(of.default_model_dir() / of.PRE_MODEL_FILE, of.PRE_FEATURES, of.PRE_VERSION)
        pre = of.OnnxPreFilter(model, encoder, of.CrossEncoder(of.default_model_dir()))
        post = _PassFilter()
        label = f"PRE filter only, post-filter model missing ({level}: pre_gen>={thresholds.pre_gen})"
    pre.warm_up()
    post.warm_up()
    return pre, post, thresholds, label, encoder


def evaluate(
    questions: Sequence[Question],
    search: Search,
    generator: Any,
    prefilter: Any,
    postfilter: Any,
    thresholds: Any,
    response_length: str = "moderate",
) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    stage_ms: dict[str, list[float]] = {}
    for q in questions:
        t0 = time.perf_counter()
        results = list(search(q))
        search_ms = (time.perf_counter() - t0) * 1000.0
        outcome = run_conversational_search(
            q.question,
            results,
            prefilter=prefilter,
            postfilter=postfilter,
            generator=generator,
            thresholds=thresholds,
            response_length=response_length,  # type: ignore[arg-type]
        )
        timings = dict(outcome.timings)
        timings["search"] = search_ms
        timings["turn"] = search_ms + timings.get("total", 0.0)
        for stage, ms in timings.items():
            stage_ms.setdefault(stage, []).append(ms)
        answered = isinstance(outcome, Answer)
        text = outcome.text if isinstance(outcome, Answer) else ""
        raw = text if answered else (outcome.generated_text if isinstance(outcome, IDontKnow) else None)
        if raw is None and q.answerable and results:
            raw = generator.generate(q.question, build_snippets(results), response_length).text
        row: dict[str, Any] = {
            "id": q.id,
            "answerable": q.answerable,
            "outcome": type(outcome).__name__,
            "reason": getattr(outcome, "reason", None),
            "text": text,
            "scores": dict(outcome.scores),
        }
        if q.answerable:
            passage = q.passage  # the gold passage, in both settings (as in the CLAPNQ paper)
            row.update(
                rougeL=best(rouge_l, text, q.references) if answered else 0.0,
                R=best(rouge1_recall, text, q.references) if answered else 0.0,
                rougeLp=rouge_l(text, passage) if answered else 0.0,
                gen_rougeL=best(rouge_l, raw or "", q.references),
                gen_R=best(rouge1_recall, raw or "", q.references),
                gen_rougeLp=rouge_l(raw or "", passage),
                gen_len=len(raw or ""),
            )
        rows.append(row)
    ans = [r for r in rows if r["answerable"]]
    unans = [r for r in rows if not r["answerable"]]
    mean = lambda xs: statistics.fmean(xs) if xs else float("nan")  # noqa: E731
    answered_lens = [len(r["text"]) for r in ans if r["outcome"] == "Answer"]
    summary = {
        "n_answerable": len(ans),
        "n_unanswerable": len(unans),
        "rougeL": 100 * mean([r["rougeL"] for r in ans]),
        "R": 100 * mean([r["R"] for r in ans]),
        "rougeLp": 100 * mean([r["rougeLp"] for r in ans]),
        "gen_rougeL": 100 * mean([r["gen_rougeL"] for r in ans]),
        "gen_R": 100 * mean([r["gen_R"] for r in ans]),
        "gen_rougeLp": 100 * mean([r["gen_rougeLp"] for r in ans]),
        "gen_len": mean([r["gen_len"] for r in ans]),
        "answer_len": mean(answered_lens),
        "unans_pct": 100 * mean([r["outcome"] != "Answer" for r in unans]),
        "false_idk_pct": 100 * mean([r["outcome"] != "Answer" for r in ans]),
        "latency_ms": {stage: percentiles(v) for stage, v in stage_ms.items()},
    }
    return {"summary": summary, "rows": rows}


def _print_table(summary: dict[str, Any], label: str) -> None:
    s = summary
    print(f"\n{label}")
    print(f"{'':14s}{'RougeL':>8s}{'R':>8s}{'RougeLp':>9s}{'len':>7s}")
    print(f"{'after filters':14s}{s['rougeL']:8.1f}{s['R']:8.1f}{s['rougeLp']:9.1f}{s['answer_len']:7.0f}")
    print(f"{'generation':14s}{s['gen_rougeL']:8.1f}{s['gen_R']:8.1f}{s['gen_rougeLp']:9.1f}{s['gen_len']:7.0f}")
    print(
        f"Un-ans% {s['unans_pct']:.1f} (n={s['n_unanswerable']})   false-IDK% {s['false_idk_pct']:.1f} "
        f"(n={s['n_answerable']})"
    )
    if "gold_in_results_pct" in s:
        print(f"gold passage in the results: {s['gold_in_results_pct']:.1f}% of the answerable questions")
    print(f"{'stage (ms)':14s}{'p50':>8s}{'p95':>8s}")
    known = [
        "search",
        "snippets",
        "pre_filter",
        "truncation",
        "generation",
        "post_filter",
        "citations",
        "total",
        "turn",
    ]
    stages = [k for k in known if k in s["latency_ms"]] + [k for k in s["latency_ms"] if k not in known]
    for stage in stages:
        p = s["latency_ms"][stage]
        print(f"{stage:14s}{p['p50']:8.2f}{p['p95']:8.2f}")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True, help="folder that holds clapnq/")
    ap.add_argument("--setting", choices=("gold", "rag"), default="gold")
    ap.add_argument(
        "--search",
        help="rag setting: package.module:function(query) -> results, instead of the "
        "product's search over the mini corpus",
    )
    ap.add_argument(
        "--retrieval",
        choices=("lexical", "dense", "hybrid"),
        default="lexical",
        help="rag setting: the product's search mode",
    )
    ap.add_argument(
        "--max-passages",
        type=int,
        default=0,
        help="rag setting: the gold passages plus distractors up to N (0 = all 11,282)",
    )
    ap.add_argument("--top-k", type=int, default=0, help="rag setting: results per question (default 10)")
    ap.add_argument(
        "--work-dir",
        type=Path,
        default=Path("/tmp/assistant-bridge-bench"),
        help="rag setting: where the loaded corpus lives",
    )
    ap.add_argument("--cache", type=Path, help="embedding cache (default <work-dir>/embedding-cache.sqlite3)")
    ap.add_argument("--backend", default="milvus-lite", help="rag setting: search backend kind")
    ap.add_argument("--index-embedder", help="rag setting: hashing (lexical default) or e5-small")
    ap.add_argument(
        "--split",
        choices=("dev", "train46", "train"),
        default="dev",
        help="dev (303 questions, where results are reported), train46 (46 answerable train questions whose "
        "passage is in the mini corpus by id) or train (158: by id or inside a longer mini-corpus passage; where "
        "generator weights are tuned)",
    )
    ap.add_argument("--limit", type=int, default=0, help="first N answerable and first N unanswerable")
    ap.add_argument("--generator", default="extractive", help="extractive | openai")
    ap.add_argument("--embedder", default="use", help="extractive sentence embedder: use | none")
    ap.add_argument("--param", action="append", default=[], help="generator option key=value (JSON value)")
    ap.add_argument("--filters", choices=("auto", "none"), default="auto")
    ap.add_argument("--level", default="less_often", help="threshold level of the filters")
    ap.add_argument("--response-length", default="moderate", choices=("concise", "moderate", "verbose"))
    ap.add_argument("--json", action="store_true", help="print the summary (and rows with --rows) as JSON")
    ap.add_argument("--rows", action="store_true")
    args = ap.parse_args(argv)

    questions = (
        load_dev(args.data) if args.split == "dev" else load_train_heldout(args.data, spans=args.split == "train")
    )
    if args.limit:
        questions = [q for q in questions if q.answerable][: args.limit] + [q for q in questions if not q.answerable][
            : args.limit
        ]
    qrels: dict[str, set[str]] = {}
    search_label = ""
    if args.setting == "gold":
        search: Search = gold_search
    elif args.search:
        search = import_search(args.search)
        search_label = f"search {args.search}"
    else:
        import logging

        logging.basicConfig(level=logging.WARNING)
        logging.getLogger("grpc._server").setLevel(logging.CRITICAL)
        search, qrels, search_label = open_rag_search(args)

    try:
        pre, post, thresholds, filter_label, encoder = load_filter_set(args.filters, args.level)
    except (ImportError, ModelLoadError) as exc:
        print(f"filters unavailable ({exc}); running WITHOUT filters", file=sys.stderr)
        pre, post, thresholds, filter_label, encoder = load_filter_set("none", args.level)
    options = generator_params(args.param, text_fallback=True)
    if args.generator == "extractive":
        # share the filters' loaded USE model and its cache when there is one
        options.setdefault("embedder", encoder if (args.embedder == "use" and encoder is not None) else args.embedder)
    elif args.generator == "openai":
        options.setdefault("base_url", os.environ.get("LLM_BASE_URL", ""))
        options.setdefault("model", os.environ.get("LLM_MODEL", ""))
        options.setdefault("api_key", os.environ.get("LLM_API_KEY") or None)
    generator = make_generator(args.generator, **options)
    generator.warm_up()

    result = evaluate(questions, search, generator, pre, post, thresholds, args.response_length)
    if isinstance(search, ProductSearch):
        answerable = [q for q in questions if q.answerable]
        gold = {q.id: qrels.get(q.id) or ({q.passage_id} if q.passage_id else set()) for q in answerable}
        found = [bool(set(search.passages.get(q.id, ())) & gold[q.id]) for q in answerable]
        result["summary"]["gold_in_results_pct"] = 100 * sum(found) / max(1, len(found))
        for row in result["rows"]:
            row["passages"] = search.passages.get(row["id"], [])
    label = (
        f"CLAPNQ {args.split} {args.setting}"
        + (f" ({search_label})" if search_label else "")
        + f", generator={getattr(generator, 'model', args.generator)}, {filter_label}, "
        f"response_length={args.response_length}"
    )
    if args.json:
        out: dict[str, Any] = {"label": label, "summary": result["summary"]}
        if args.rows:
            out["rows"] = result["rows"]
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        _print_table(result["summary"], label)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
