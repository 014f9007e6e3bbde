"""Query rewriting on MTRAG (FiQA domain): retrieval with the last turn alone, with the product's rewrite, and
with the human rewrite; answerability per turn.

    python bench/mtrag.py --data /work/shared/data [--limit N] [--mode lexical|dense|hybrid]
                          [--embedder hashing|e5-small|use] [--max-passages N] [--work-dir DIR]
                          [--rewriter embedded|llm] [--answerability] [--json out.json]

Data: ``mtrag_fiqa/`` (27 conversations, 180 retrieval tasks, a 14,085-passage pooled corpus, qrels). For each
retrieval task (conversation c, user turn n) the history is the reference conversation up to turn n-1 (user
questions and the reference agent answers), as in the MTRAG retrieval tasks; the product's memory of earlier
turns holds *its own* rewritten queries, as it would in production. Queries, through ``Services.search`` on
the configured backend (``--limit`` keeps the first N tasks):

* ``lastturn``: the last user turn alone (``fiqa_lastturn.jsonl``);
* ``rewrite``: :class:`~assistant_bridge.conversation.rewrite.Rewriter` in ``entire_conversation`` mode with the
  embedded rewriter (no LLM), or with ``--rewriter llm`` the LLM rewriter on the OpenAI-compatible endpoint
  named by ``LLM_BASE_URL``, ``LLM_MODEL`` and ``LLM_API_KEY``;
* ``human``: the human rewrite (``fiqa_rewrite.jsonl``), an upper reference;
* ``questions``: every user turn so far, concatenated (``fiqa_questions.jsonl``), a naive baseline.

Reported: Recall@5 and nDCG@10 (binary qrels), and the p50/p95 time the rewrite adds per turn.
``--answerability`` also runs the conversational search loop (ONNX filters, extractive
generator) on every user turn that has an answerability label other than CONVERSATIONAL, once with the last
turn and once with the rewrite, and reports the share of turns where "answer vs I don't know" matches the
label (ANSWERABLE and PARTIAL should be answered, UNANSWERABLE should not), the same share per label, and
the balanced accuracy (``--level`` picks the IDK tendency). 84 % of the turns should be answered, so
"always answer" already scores 0.93 accuracy (and 0.5 balanced).

``--mode lexical`` indexes with the hashing embedder (its vectors are unused; BM25 does the work) in about a
minute. ``--mode dense`` with the default multilingual-e5-small embeds 14,085 passages at 1-4 passages/s on
two shared cores (one to four hours; vectors are cached by content hash in the work dir, so only the first
run pays); ``--embedder use`` (USE-multilingual) is a faster dense option, and ``--max-passages N`` keeps
every passage in the qrels plus the first N minus that many others (an easier corpus, for a quick e5 run).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant_bridge.conversation.memory import MemoryTurn  # noqa: E402
from assistant_bridge.conversation.rewrite import Rewriter  # noqa: E402
from assistant_bridge.domain import Principal, Scope  # noqa: E402
from assistant_bridge.services import Services  # noqa: E402
from assistant_bridge.settings import load_settings  # noqa: E402
from assistant_bridge.store import SQLiteStore  # noqa: E402
from bench._common import bulk_load, ndcg_recall, passages_to_chunks, percentiles, read_jsonl  # noqa: E402

CONDITIONS = ("lastturn", "rewrite", "human", "questions")


def _norm(text: str) -> str:
    return " ".join(text.replace("|user|:", " ").split())


def _enrichments(message: dict[str, Any]) -> dict[str, Any]:
    e = message.get("enrichments") or {}
    if isinstance(e, str):
        import ast

        e = ast.literal_eval(e)
    return dict(e)


def load(data: Path) -> dict[str, Any]:
    base = data / "mtrag_fiqa"
    tasks = base / "retrieval_tasks"
    forms = {
        name: {r["_id"]: _norm(r["text"]) for r in read_jsonl(tasks / f"fiqa_{name}.jsonl")}
        for name in ("lastturn", "rewrite", "questions")
    }
    qrels: dict[str, set[str]] = {}
    for line in (tasks / "qrels" / "dev.tsv").read_text().splitlines()[1:]:
        qid, pid, score = line.split("\t")[:3]
        if int(score) > 0:
            qrels.setdefault(qid, set()).add(pid)
    conversations = json.loads((base / "conversations_fiqa.json").read_text())
    by_conv: dict[str, dict[int, str]] = {}
    for tid, text in forms["lastturn"].items():
        cid, n = tid.split("<::>")
        by_conv.setdefault(cid, {})[int(n)] = text
    convs: dict[str, list[dict[str, Any]]] = {}
    for conv in conversations:  # the task ids are hashes: match each conversation by its user turns
        users = [_norm(m["text"]) for m in conv["messages"] if m["speaker"] == "user"]
        best = max(
            by_conv, key=lambda c: sum(1 for n, t in by_conv[c].items() if n <= len(users) and users[n - 1] == t)
        )
        convs[best] = _turns(conv["messages"])
    return {"forms": forms, "qrels": qrels, "conversations": convs, "corpus": base / "fiqa_pooled_corpus.jsonl"}


def _turns(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """User turns with the reference agent answer that follows each, and the answerability label."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m["speaker"] == "user":
            label = (_enrichments(m).get("Answerability") or ["?"])[0]
            out.append({"question": _norm(m["text"]), "answer": "", "label": label})
        elif out:
            out[-1]["answer"] = " ".join(m["text"].split())
    return out


def rewrites(
    convs: dict[str, list[dict[str, Any]]], rewriter: Rewriter
) -> tuple[dict[str, str], list[float], Counter[str]]:
    """The product's rewrite of every user turn (keyed ``cid<::>n``), the time each took, and how many were
    judged follow-ups. Memory holds the product's own earlier queries and the reference answers."""
    out: dict[str, str] = {}
    times: list[float] = []
    stats: Counter[str] = Counter()
    for cid, turns in convs.items():
        memory: list[MemoryTurn] = []
        for n, turn in enumerate(turns, start=1):
            t0 = time.perf_counter()
            rw = rewriter.rewrite(turn["question"], memory)
            times.append((time.perf_counter() - t0) * 1000)
            stats["follow_up" if rw.follow_up else "standalone" if rw.follow_up is False else "first_turn"] += 1
            stats["changed"] += rw.rewritten
            stats["fallback"] += rw.method == "fallback"
            out[f"{cid}<::>{n}"] = rw.query
            memory.append(MemoryTurn(turn["question"], rw.query, turn["answer"], outcome="answer"))
    return out, times, stats


def make_bench_rewriter(kind: str) -> Rewriter:
    if kind == "embedded":
        return Rewriter("entire_conversation")
    import os

    from assistant_bridge.conversation.rewrite import make_rewriter

    endpoint = {
        "base_url": os.environ.get("LLM_BASE_URL", ""),
        "model": os.environ.get("LLM_MODEL", ""),
        "api_key": os.environ.get("LLM_API_KEY") or None,
        "method": "llm",
        "timeout_seconds": 30,
    }
    return make_rewriter("entire_conversation", endpoint, {})


def make_services(args: argparse.Namespace, n: int) -> Services:
    embedder = args.embedder or ("hashing" if args.mode == "lexical" else "e5-small")
    emb_opts: dict[str, Any] = {"kind": embedder}
    if embedder == "use":
        emb_opts = {"kind": "hashing"}  # replaced below
    settings = load_settings(
        env={},
        overrides={
            "data_dir": str(args.work_dir / f"mtrag-{args.backend}-{embedder}"),
            "backend": {
                "kind": args.backend,
                "collection": f"mtrag_fiqa_{embedder.replace('-', '_')}_{n}",
                "default_mode": args.mode,
            },
            "embedder": emb_opts,
        },
    )
    store = SQLiteStore(args.work_dir / "embedding-cache.sqlite3")
    if embedder == "use":
        from assistant_bridge.generators.sentence_embedder import UseSentenceEmbedder

        return Services.from_settings(settings, store=store, embedder=_UseAsEmbedder(UseSentenceEmbedder()))
    return Services.from_settings(settings, store=store)


class _UseAsEmbedder:
    """USE-multilingual behind the embedder protocol (fast on two cores; weaker than e5 on retrieval)."""

    name = "use-multilingual"
    dim = 512

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def warm_up(self) -> None:
        self._inner.warm_up()

    def embed_queries(self, texts: list[str]) -> Any:
        return self._inner.embed_queries(texts)

    def embed_passages(self, texts: list[str]) -> Any:
        return self._inner.embed_queries(texts)


def retrieval(svc: Services, mode: str, queries: dict[str, str], qrels: dict[str, set[str]]) -> dict[str, Any]:
    scope = Scope(Principal("bench", admin=True))
    r5, n10, lat = [], [], []
    for qid, q in queries.items():
        t0 = time.perf_counter()
        hits = svc.search(q, scope, mode=mode, limit=10)
        lat.append((time.perf_counter() - t0) * 1000)
        ranked = [h.chunk.url.split(":", 1)[1] for h in hits if h.chunk.url]
        n10.append(ndcg_recall(ranked, qrels[qid], 10)[0])
        r5.append(ndcg_recall(ranked, qrels[qid], 5)[1])
    return {
        "recall@5": round(sum(r5) / len(r5), 4),
        "ndcg@10": round(sum(n10) / len(n10), 4),
        "search_p50_ms": round(percentiles(lat)["p50"], 2),
        "n": len(r5),
    }


def answerability(
    svc: Services,
    mode: str,
    convs: dict[str, list[dict[str, Any]]],
    ours: dict[str, str],
    limit: int,
    level: str = "less_often",
) -> dict[str, Any]:
    from assistant_bridge.conversation.assistants import SearchConfig
    from assistant_bridge.conversation.sources import BuiltinSource
    from assistant_bridge.core.loop import Answer, run_conversational_search
    from assistant_bridge.filters import load_filters, load_thresholds
    from assistant_bridge.filters.encoder import UseEncoder
    from assistant_bridge.generators import make_generator
    from assistant_bridge.generators.coverage import CoveringPreFilter

    encoder = UseEncoder()
    loaded, post = load_filters(encoder=encoder)
    pre = CoveringPreFilter(loaded)  # as the service loads it: the loop's coverage rule
    pre.warm_up()
    post.warm_up()
    thresholds = load_thresholds(level)
    generator = make_generator("extractive", embedder=encoder)
    generator.warm_up()
    source = BuiltinSource(svc, SearchConfig(metadata={"mode": mode, "limit": 10}))
    scope = Scope(Principal("bench", admin=True))
    rows: list[dict[str, Any]] = []
    for cid, turns in convs.items():
        for n, turn in enumerate(turns, start=1):
            if turn["label"] == "CONVERSATIONAL" or (limit and len(rows) >= limit):
                continue
            row: dict[str, Any] = {"id": f"{cid}<::>{n}", "label": turn["label"]}
            for cond, query in (("lastturn", turn["question"]), ("rewrite", ours[f"{cid}<::>{n}"])):
                results = source.search(query, scope)
                outcome = run_conversational_search(
                    query, results, prefilter=pre, postfilter=post, generator=generator, thresholds=thresholds
                )
                answered = isinstance(outcome, Answer)
                row[cond] = answered == (turn["label"] in ("ANSWERABLE", "PARTIAL"))
                row[cond + "_answered"] = answered
            rows.append(row)
    should = [r for r in rows if r["label"] in ("ANSWERABLE", "PARTIAL")]
    out: dict[str, Any] = {
        "turns": len(rows),
        "labels": dict(Counter(r["label"] for r in rows)),
        "level": level,
        "always_answer_accuracy": round(len(should) / max(1, len(rows)), 4),
    }
    for cond in ("lastturn", "rewrite"):
        out[cond] = {"accuracy": round(sum(r[cond] for r in rows) / max(1, len(rows)), 4)}
        for label in ("ANSWERABLE", "PARTIAL", "UNANSWERABLE"):
            sel = [r for r in rows if r["label"] == label]
            if sel:
                out[cond][f"answered_{label.lower()}"] = round(sum(r[cond + "_answered"] for r in sel) / len(sel), 4)
        unans = [r for r in rows if r["label"] == "UNANSWERABLE"]
        if should and unans:  # the mean of the two per-class accuracies; "always answer" scores 0.5
            out[cond]["balanced_accuracy"] = round(
                (sum(r[cond] for r in should) / len(should) + sum(r[cond] for r in unans) / len(unans)) / 2, 4
            )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--limit", type=int, default=0, help="first N retrieval tasks only")
    ap.add_argument("--mode", choices=("lexical", "dense", "hybrid"), default="lexical")
    ap.add_argument("--embedder", default="", help="hashing (lexical default), e5-small (dense default) or use")
    ap.add_argument("--backend", default="milvus-lite")
    ap.add_argument("--work-dir", type=Path, default=Path("/tmp/assistant-bridge-bench"))
    ap.add_argument("--max-passages", type=int, default=0, help="every relevant passage plus others up to N")
    ap.add_argument("--rewriter", choices=("embedded", "llm"), default="embedded")
    ap.add_argument("--answerability", action="store_true")
    ap.add_argument("--level", default="less_often", help="IDK tendency for --answerability (rarely ... most_often)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("grpc._server").setLevel(logging.CRITICAL)

    data = load(args.data)
    task_ids = list(data["forms"]["lastturn"])
    if args.limit:
        task_ids = task_ids[: args.limit]
    ours, times, stats = rewrites(data["conversations"], make_bench_rewriter(args.rewriter))
    corpus = list(read_jsonl(data["corpus"]))
    if args.max_passages:
        relevant = set().union(*data["qrels"].values())
        keep = [r for r in corpus if r["_id"] in relevant]
        corpus = keep + [r for r in corpus if r["_id"] not in relevant][: max(0, args.max_passages - len(keep))]
    svc = make_services(args, len(corpus))
    svc.warm_up()
    chunks = passages_to_chunks(corpus)
    have = svc.backend.count()
    load_s = 0.0
    if have < len(chunks):
        print(f"loading {len(chunks)} passages (have {have})", flush=True)
        load_s = bulk_load(svc, chunks)
    report: dict[str, Any] = {
        "mode": args.mode,
        "embedder": svc.embedder.name,
        "backend": args.backend,
        "passages": len(chunks),
        "tasks": len(task_ids),
        "load_seconds": round(load_s, 1),
        "rewrite_ms": {k: round(v, 3) for k, v in percentiles(times).items()},
        "rewrite_stats": dict(stats),
    }
    qrels = data["qrels"]
    queries = {
        "lastturn": data["forms"]["lastturn"],
        "rewrite": ours,
        "human": data["forms"]["rewrite"],
        "questions": data["forms"]["questions"],
    }
    for cond in CONDITIONS:
        report[cond] = retrieval(svc, args.mode, {t: queries[cond][t] for t in task_ids if t in qrels}, qrels)
        print(f"{cond:10s} R@5={report[cond]['recall@5']:.4f} nDCG@10={report[cond]['ndcg@10']:.4f}", flush=True)
    report["gain_rewrite_over_lastturn"] = {
        k: round(report["rewrite"][k] - report["lastturn"][k], 4) for k in ("recall@5", "ndcg@10")
    }
    if args.answerability:
        report["answerability"] = answerability(svc, args.mode, data["conversations"], ours, args.limit, args.level)
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    svc.backend.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
