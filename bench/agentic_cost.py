"""What an agentic retrieval costs against one dense search, through the app, in one interleaved run.

    python bench/agentic_cost.py --data ../shared/data [--passages 2000] [--questions 40] [--json out.json]

CLAPNQ passages (every gold passage of the dev questions first, then others up to ``--passages``) are ingested
with the default embedder into an embedded Milvus Lite store; then for each dev question, in alternating
order, ``POST /v1/search`` (dense) and ``POST /agenticRetrieveStream`` (the embedded planner, the
pre-generation filter as the sufficiency signal, no generation) run through the Flask app, and a second
agentic pass runs with the pre-filter's scoring caches (the cross-encoder's windows, the dense vectors) kept
empty (how every planning step scored its evidence before the caches); the first pass empties them before
each run, so only the run's own planning steps can hit them. Reported: p50/p95 of each, the ratios, and the load average.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant_bridge.domain import Ownership  # noqa: E402
from assistant_bridge.services import Services  # noqa: E402
from assistant_bridge.settings import load_settings  # noqa: E402
from assistant_bridge.web.app import create_app  # noqa: E402
from bench._common import emit, percentiles  # noqa: E402
from bench.retrieval import load_clapnq  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--work-dir", type=Path, default=Path("/tmp/ab-agentic-cost"))
    ap.add_argument("--passages", type=int, default=2000)
    ap.add_argument("--questions", type=int, default=40)
    ap.add_argument("--no-generate", action="store_true", help="retrieval only (generateResponse false)")
    ap.add_argument("--json")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("grpc._server").setLevel(logging.CRITICAL)
    corpus, questions, qrels = load_clapnq(args.data)
    gold = {p for ps in qrels.values() for p in ps}
    rows = [r for r in corpus if r["_id"] in gold] + [r for r in corpus if r["_id"] not in gold]
    rows = rows[: args.passages]
    settings = load_settings(
        env={}, overrides={"data_dir": str(args.work_dir / "data"), "auth": {"failed_logins_per_minute": 0}}
    )
    svc = Services.from_settings(settings)
    svc.warm_up()
    if svc.backend.count() < len(rows):
        t = time.perf_counter()
        for i, row in enumerate(rows):
            svc.ingestor.ingest_text(row["text"], title=row.get("title") or row["_id"], ownership=Ownership())
            if i % 200 == 0:
                print(f"  ingested {i}/{len(rows)} ({time.perf_counter() - t:.0f} s)", file=sys.stderr, flush=True)
    app = create_app(settings, svc)
    client = app.test_client()
    qids = [q for q in questions if q in qrels][: args.questions]

    def search(q: str) -> float:
        t = time.perf_counter()
        r = client.post("/v1/search", json={"query": q, "metadata": {"mode": "dense", "limit": 10}})
        assert r.status_code == 200, r.get_data(as_text=True)
        return (time.perf_counter() - t) * 1000

    def agentic(q: str) -> float:
        body = {
            "messages": [{"role": "user", "content": {"text": q}}],
            "generateResponse": not args.no_generate,
            "retrievers": [{"configuration": {"knowledgeBase": {"knowledgeBaseId": "default"}}}],
        }
        t = time.perf_counter()
        r = client.post("/agenticRetrieveStream", json=body)
        data = r.get_data(as_text=True)
        assert r.status_code == 200 and "event: result" in data, data[:500]
        return (time.perf_counter() - t) * 1000

    def scoring_caches() -> list[Any]:
        """The pre-filter's caches of evidence scores: the cross-encoder's windows, the dense vectors."""
        from assistant_bridge.filters.cross import CrossEncoder
        from assistant_bridge.filters.onnx_filters import EmbedderSimilarity

        seen: list[Any] = []

        def walk(obj: Any, depth: int = 0) -> None:
            if depth > 4 or obj is None:
                return
            if isinstance(obj, (CrossEncoder, EmbedderSimilarity)):
                if not any(obj is x for x in seen):
                    seen.append(obj)
                return
            for v in vars(obj).values() if hasattr(obj, "__dict__") else ():
                walk(v, depth + 1)
            if isinstance(obj, (list, tuple, dict)):
                for v in obj.values() if isinstance(obj, dict) else obj:
                    walk(v, depth + 1)

        walk(svc.components())
        return seen

    agentic(questions[qids[0]])  # loads the planner, the filters and the cross-encoder
    ce = scoring_caches()
    times: dict[str, list[float]] = {"search": [], "agentic": [], "agentic_uncached": []}
    loads = []
    for i, qid in enumerate(qids):
        q = questions[qid]
        order = ["search", "agentic", "agentic_uncached"]
        if i % 2:
            order.reverse()
        for name in order:
            if name == "search":
                times[name].append(search(q))
            elif name == "agentic":
                times[name].append(_timed_cached(agentic, q, ce))
            else:
                times[name].append(_timed_uncached(agentic, q, ce))
        loads.append(os.getloadavg()[0])
    report: dict[str, Any] = {
        "chunks": svc.backend.count(),
        "questions": len(qids),
        "generate": not args.no_generate,
        **{k: percentiles(v) for k, v in times.items()},
    }
    s50 = statistics.median(times["search"])
    report["agentic_over_search_p50"] = round(statistics.median(times["agentic"]) / s50, 2)
    report["uncached_agentic_over_search_p50"] = round(statistics.median(times["agentic_uncached"]) / s50, 2)
    report["load_average"] = [round(min(loads), 2), round(max(loads), 2)]
    report["caches_found"] = sorted(type(c).__name__ for c in ce)
    svc.backend.close()
    emit(report, args.json)
    return 0


def _timed_cached(run: Any, q: str, caches: list[Any]) -> float:
    """One agentic run with the scoring caches as the service keeps them (emptied first, so earlier questions'
    windows and vectors do not help: only the run's own planning steps can hit them)."""
    for c in caches:
        c._cache.clear()
    out: float = run(q)
    return out


def _timed_uncached(run: Any, q: str, caches: list[Any]) -> float:
    """One agentic run that scores every planning step afresh: the caches hold nothing across steps."""
    sizes = [c._cache.size for c in caches]
    for c in caches:
        c._cache.clear()
        c._cache.size = 0
    try:
        out: float = run(q)
    finally:
        for c, size in zip(caches, sizes, strict=True):
            c._cache.size = size
    return out


if __name__ == "__main__":
    raise SystemExit(main())
