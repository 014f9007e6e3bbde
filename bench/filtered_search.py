"""Filtered searches on the embedded default: answered in process against sent to Milvus Lite, side by side.

    python bench/filtered_search.py --data ../shared/data [--work-dir DIR] [--queries 100] [--json out.json]

Over the whole CLAPNQ mini corpus (11,282 passages, multilingual-e5-small; the index ``bench/retrieval.py``
builds and keeps in ``--work-dir``), each dev question is searched (limit 10) with four filters of different
selectivity, once through the exact index's in-process path (``ExactDenseBackend.search``) and once through
Milvus Lite (the wrapped backend, what every filtered search did before), alternating which goes first, in
``dense`` and ``lexical`` mode:

* ``title != "…"``: every passage but one article's passes;
* ``title == "…"``: only the passages of the question's gold article (a handful);
* ``position == 0``: about one passage in ten;
* ``url startswith``: a prefix of the passage ids that about one passage in ten has.

Reported per filter and mode: p50 / p95 of each path, how many searches the in-process path handed on to
Milvus (a filter too few of the best chunks pass), and in how many searches the two paths returned results of
different scores (dense only: the two BM25 implementations score differently; chunks of equal score, such as
duplicate passages, may come in either order). The query vector is computed once per
question, outside the timings.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant_bridge.core.filters import parse_filter  # noqa: E402
from assistant_bridge.domain import Principal, Scope, SearchQuery  # noqa: E402
from bench._common import emit, percentiles  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--work-dir", type=Path, default=Path("/tmp/assistant-bridge-bench/retrieval"))
    ap.add_argument("--cache", type=Path, help="embedding cache (default: in the work dir)")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--json")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("grpc._server").setLevel(logging.CRITICAL)
    from bench.retrieval import open_corpus

    svc, corpus, questions, qrels, _ = open_corpus(args.data, args.work_dir, cache=args.cache)
    svc.warm_up()
    backend: Any = svc.backend
    backend = getattr(backend, "_inner", None) or backend  # the lazily built backend
    inner = getattr(backend, "inner", None)
    if inner is None:
        raise SystemExit(f"{type(backend).__name__} is not the exact index's wrapper: nothing to compare")
    titles = {r["_id"]: r.get("title") or "" for r in corpus}
    scope = Scope(Principal("bench", admin=True))
    handed: list[SearchQuery] = []
    real = inner.search

    def spy(query: SearchQuery) -> Any:
        handed.append(query)
        return real(query)

    inner.search = spy
    report: dict[str, Any] = {"passages": len(corpus), "load_average_start": os.getloadavg(), "filters": {}}
    times: dict[str, dict[str, list[float]]] = {}
    differ: dict[str, int] = {}
    to_milvus: dict[str, int] = {}
    qids = [q for q in questions if q in qrels][: args.queries]
    for n, qid in enumerate(qids):
        text = questions[qid]
        vector = tuple(float(x) for x in svc.embedder.embed_queries([text])[0])
        gold_title = titles.get(next(iter(qrels[qid])), "")
        quoted = '"' + gold_title.replace("\\", "\\\\").replace('"', '\\"') + '"'
        filters = {
            "title != …": f"title != {quoted}",
            "title == …": f"title == {quoted}",
            "position == 0": "position == 0",
            "url prefix": 'url startswith "clapnq:8"',
        }
        for name, source in filters.items():
            flt = parse_filter(source)
            for mode in ("dense", "lexical"):
                key = f"{name} · {mode}"
                query = SearchQuery(text=text, scope=scope, mode=mode, limit=10, filter=flt, vector=vector)  # type: ignore[arg-type]
                paths = {"in process": backend.search, "milvus": real}
                order = list(paths) if n % 2 else list(reversed(paths))
                got: dict[str, list[float]] = {}
                for path in order:
                    handed.clear()
                    t0 = time.perf_counter()
                    hits = paths[path](query)
                    times.setdefault(key, {}).setdefault(path, []).append((time.perf_counter() - t0) * 1000)
                    got[path] = [h.score for h in hits]  # compared by score: tied passages may swap
                    if path == "in process" and handed:
                        to_milvus[key] = to_milvus.get(key, 0) + 1
                a, b = got["in process"], got["milvus"]
                if mode == "dense" and (len(a) != len(b) or any(abs(x - y) > 1e-4 for x, y in zip(a, b, strict=True))):
                    differ[key] = differ.get(key, 0) + 1
        if (n + 1) % 25 == 0:
            print(f"{n + 1}/{len(qids)}", file=sys.stderr, flush=True)
    for key, paths_ms in times.items():
        report["filters"][key] = {
            **{
                path: {k: round(v, 2) for k, v in percentiles(ms).items() if k in ("p50", "p95")}
                for path, ms in paths_ms.items()
            },
            "handed_to_milvus": to_milvus.get(key, 0),
            "different_results": differ.get(key, 0) if key.endswith("dense") else None,
            "searches": len(qids),
        }
    report["load_average_end"] = os.getloadavg()
    emit(report, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
