"""What an agentic retrieval costs against one dense search, through the app, in one interleaved run.

    python bench/agentic_cost.py --data ../shared/data [--passages 2000] [--questions 40] [--no-generate]
                                 [--json out.json]

CLAPNQ passages (every gold passage of the dev questions first, then others up to ``--passages``) are ingested
with the default embedder into an embedded Milvus Lite store; then for each dev question, in alternating
order, ``POST /v1/search`` (dense) and two ``POST /agenticRetrieveStream`` runs (the embedded planner, an
extractive answer unless ``--no-generate``) go through the Flask app:

* ``agentic``: the settings as shipped (``agentic.sufficiency = "auto"``: the embedded planner plans without
  the pre-generation filter's score);
* ``agentic_prefilter``: the same run with ``agentic.sufficiency = "prefilter"`` (the pre-generation filter
  scores the evidence before each plan, as every run did before ``auto``), its scoring caches (the
  cross-encoder's windows, the dense vectors) emptied before each run so that only the run's own planning
  steps can hit them.

The embedder's cache of recent query vectors is emptied before every call, so that no call finds the vector
of its question made by the call before it. Reported: p50/p95 of each, the ratios to the search, the load
average, and what each agentic variant found: the share of questions whose gold passage is the first result
and among the first five.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant_bridge.agentic.runtime import runtime_for  # noqa: E402
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

    def agentic(q: str, wanted: set[str]) -> tuple[float, list[bool]]:
        body = {
            "messages": [{"role": "user", "content": {"text": q}}],
            "generateResponse": not args.no_generate,
            "retrievers": [{"configuration": {"knowledgeBase": {"knowledgeBaseId": "default"}}}],
        }
        t = time.perf_counter()
        r = client.post("/agenticRetrieveStream", json=body)
        data = r.get_data(as_text=True)
        ms = (time.perf_counter() - t) * 1000
        assert r.status_code == 200 and "event: result" in data, data[:500]
        result = json.loads(data.split("event: result\ndata: ", 1)[1].split("\n", 1)[0])
        # a gold passage is found when a result holds its text (a passage, or a document read whole)
        found = [any(g[:200] in x["content"]["text"] for g in wanted) for x in result["results"]]
        return ms, found

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

    runtime = runtime_for(svc)
    shipped = runtime.settings
    caches: list[Any] = []

    def with_prefilter(q: str, wanted: set[str]) -> tuple[float, list[bool]]:
        runtime.settings = replace(shipped, sufficiency="prefilter")
        for c in caches:
            c._cache.clear()
        try:
            return agentic(q, wanted)
        finally:
            runtime.settings = shipped

    with_prefilter(questions[qids[0]], set())  # loads the planner, the filters and the cross-encoder
    agentic(questions[qids[0]], set())
    caches[:] = scoring_caches()
    runs = {"agentic": agentic, "agentic_prefilter": with_prefilter}
    texts = {r["_id"]: r["text"] for r in rows}
    queries = getattr(svc.embedder, "_queries", None)  # the default embedder's cache of recent query vectors
    times: dict[str, list[float]] = {"search": [], **{k: [] for k in runs}}
    found: dict[str, list[list[bool]]] = {k: [] for k in runs}
    loads = []
    for i, qid in enumerate(qids):
        q = questions[qid]
        order = ["search", *runs]
        if i % 2:
            order.reverse()
        for name in order:
            if queries is not None:
                queries.clear()  # every call embeds its question itself: none finds the vector the one before made
            if name == "search":
                times[name].append(search(q))
            else:
                ms, hits = runs[name](q, {texts[p] for p in qrels[qid] if p in texts})
                times[name].append(ms)
                found[name].append(hits)
        loads.append(os.getloadavg()[0])
    report: dict[str, Any] = {
        "chunks": svc.backend.count(),
        "questions": len(qids),
        "generate": not args.no_generate,
        **{k: percentiles(v) for k, v in times.items()},
    }
    s50 = statistics.median(times["search"])
    for name in runs:
        report[f"{name}_over_search_p50"] = round(statistics.median(times[name]) / s50, 2)
        report[f"{name}_gold_first"] = round(sum(bool(f[:1] and f[0]) for f in found[name]) / len(qids), 3)
        report[f"{name}_gold_in_5"] = round(sum(any(f[:5]) for f in found[name]) / len(qids), 3)
    report["load_average"] = [round(min(loads), 2), round(max(loads), 2)]
    report["caches_found"] = sorted(type(c).__name__ for c in caches)
    svc.backend.close()
    emit(report, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
