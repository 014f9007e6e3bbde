"""Latency of ``POST /v1/search`` through gunicorn versus the same query issued directly to the backend,
in the same run, on a corpus of at least 10,000 chunks.

    python bench/search_latency.py --data ../shared/data [--passages 10000] [--embedder hashing|e5-small]
                                   [--queries 200] [--workers 2] [--json out.json]

The corpus is CLAPNQ passages (padded with HotpotQA paragraphs when more are asked for). With
``--embedder hashing`` (default) the vectors are 384-d bag-of-words hashes: fast to build, and the vector
index does the same work as with a real model, so the *ratio* HTTP/direct is what this measures. With
``--embedder e5-small`` the real model embeds every passage (slow: ~4 passages/s on 2 cores; cached by
content hash in the work dir).

Direct = the embedder plus the backend search call in this process against the same ``milvus-lite
server`` side process the service uses; HTTP = the whole request through gunicorn (auth, validation,
embedding, search, response building). Requests are sequential, loopback only, bounded in number.

The physical limit (``limit_ms``, dense only) is the query embedding plus an exact numpy top-10 over a matrix
of the same vectors, one BLAS thread, in this process. ``--query-embedder e5-small`` serves with the real
model while the corpus keeps hashing vectors of the same dimension: the timings are those of real queries
(the results mean nothing, and recall is not what this measures). Past the CLAPNQ and HotpotQA passages,
``--passages`` is reached with numbered copies of them. ``first_ms`` is the first search of each mode after
the service reported ready (a restart), before any warming.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402
import numpy as np  # noqa: E402

from assistant_bridge.backends.lite_server import free_port  # noqa: E402
from assistant_bridge.domain import Principal, Scope, SearchQuery  # noqa: E402
from assistant_bridge.services import Services  # noqa: E402
from assistant_bridge.settings import load_settings  # noqa: E402
from bench._common import (  # noqa: E402
    bulk_load,
    passages_to_chunks,
    percentiles,
    read_jsonl,
    start_serve,
    wait_quiet,
    wait_ready,
)


def corpus(data: Path, n: int) -> list[dict]:
    rows = list(read_jsonl(data / "clapnq" / "derived" / "clapnq_dev_minicorpus.jsonl"))
    if len(rows) < n:
        for r in read_jsonl(data / "hotpotqa" / "derived" / "hotpot_dev500_pooled_corpus.jsonl"):
            rows.append(
                {
                    "_id": "h" + str(r.get("_id", r.get("id", len(rows)))),
                    "title": r.get("title", ""),
                    "text": r.get("text", ""),
                }
            )
            if len(rows) >= n:
                break
    base = list(rows)
    copy = 0
    while len(rows) < n:
        copy += 1
        rows.extend(
            {"_id": f"{r['_id']}~{copy}", "title": r.get("title", ""), "text": f"{r['text']} (copy {copy})"}
            for r in base[: n - len(rows)]
        )
    return rows[:n]


def _matrix(data_dir: Path) -> np.ndarray | None:
    """Every chunk vector of the store (the exact index's rows), for the physical-limit reference."""
    import sqlite3

    path = data_dir / "exact-index.sqlite3"
    if not path.exists():
        return None
    rows = sqlite3.connect(str(path)).execute("SELECT vector FROM rows").fetchall()
    return np.vstack([np.frombuffer(b, dtype=np.float32) for (b,) in rows]) if rows else None


def during_ingest(http: httpx.Client, base: str, qs: list[str], chunks: int) -> dict[str, object]:
    """Dense search latency while the ingest-worker embeds a document of about ``chunks`` chunks, against the
    same searches just before (idle), sequential, in this one run."""

    def one(q: str) -> float:
        t = time.perf_counter()
        r = http.post(f"{base}/v1/search", json={"query": q, "metadata": {"mode": "dense", "limit": 10}})
        assert r.status_code == 200, r.text
        return (time.perf_counter() - t) * 1000

    idle = [one(q) for q in qs]
    run = int(time.time())  # new text every run: the embedding cache would otherwise skip the embedding
    text = " ".join(
        f"Clause {i} of the {run} warehouse handbook: pallets in aisle {i % 97} are checked every "
        f"{i % 13 + 1} days, and the audit of bay {i % 31} is logged in register {i % 7}."
        for i in range(chunks * 6)
    )
    r = http.post(f"{base}/v1/documents?wait=false", json={"title": "Warehouse handbook", "text": text})
    assert r.status_code == 202, r.text
    location = r.headers["Location"]
    busy: list[float] = []
    started = time.perf_counter()
    job: dict[str, object] = {}
    i = 0
    while time.perf_counter() - started < 1800:
        busy.append(one(qs[i % len(qs)]))
        i += 1
        if i % 10 == 0:
            job = http.get(f"{base}{location}").json()
            if job["status"] not in ("queued", "running"):
                break
    ip, bp = percentiles(idle), percentiles(busy)
    return {
        "chunks": (job.get("progress") or {}).get("chunks_total"),
        "status": job.get("status"),  # type: ignore[union-attr]
        "ingest_seconds": round(time.perf_counter() - started, 1),
        "idle_ms": {k: round(v, 2) for k, v in ip.items()},
        "busy_ms": {k: round(v, 2) for k, v in bp.items()},
        "busy_over_idle_p95": round(bp["p95"] / ip["p95"], 2),
        "searches_during": len(busy),
    }


def questions(data: Path, k: int) -> list[str]:
    lines = (data / "clapnq" / "retrieval" / "dev" / "question_dev_answerable.tsv").read_text().splitlines()[1:]
    return [ln.split("\t")[1] for ln in lines if "\t" in ln][:k]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--work-dir", type=Path, default=Path("/tmp/assistant-bridge-latency"))
    ap.add_argument("--passages", type=int, default=10_000)
    ap.add_argument("--embedder", default="hashing")
    ap.add_argument("--query-embedder", default="", help="the embedder the service runs (default: --embedder)")
    ap.add_argument("--queries", type=int, default=150)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--modes", default="lexical,dense")
    ap.add_argument("--backend", default="milvus-lite", help="milvus-lite or elasticsearch")
    ap.add_argument("--es-url", default="", help="Elasticsearch URL for --backend elasticsearch")
    ap.add_argument(
        "--ingest-chunks",
        type=int,
        default=0,
        help="then upload a document of about this many "
        "chunks (queued to the ingest-worker) and measure dense searches until it is ingested",
    )
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("grpc._server").setLevel(logging.CRITICAL)

    data_dir = args.work_dir / f"{args.backend}-{args.embedder}-{args.passages}"
    emb = {"kind": args.embedder, "dim": 384}
    backend: dict[str, object] = {"kind": args.backend, "collection": f"latency_{args.passages}"}
    if args.backend == "elasticsearch":
        backend.update(es_url=args.es_url, es_compat_plain_json=True)
    base_cfg = {"data_dir": str(data_dir), "embedder": emb, "backend": backend}
    settings = load_settings(env={}, overrides=base_cfg)
    from assistant_bridge.store import SQLiteStore

    svc = Services.from_settings(settings, store=SQLiteStore(args.work_dir / "embedding-cache.sqlite3"))
    svc.warm_up()
    rows = corpus(args.data, args.passages)
    if svc.backend.count() < len(rows):
        print(f"loading {len(rows)} passages", flush=True)
        bulk_load(svc, passages_to_chunks(rows))
    count = svc.backend.count()
    svc.backend.close()

    qemb = args.query_embedder or args.embedder
    cfg_path = args.work_dir / f"{qemb}.toml"
    cfg_path.write_text(
        f'data_dir = "{data_dir}"\n[embedder]\nkind = "{qemb}"\ndim = 384\n[backend]\n'
        + "".join(f"{k} = {json.dumps(v)}\n" for k, v in backend.items())
    )
    port = free_port()
    env = {
        **os.environ,
        "ASSISTANT_BRIDGE_BACKEND__LITE_PORT": str(free_port()),
        "ASSISTANT_BRIDGE_LOG_LEVEL": "WARNING",
    }
    proc = start_serve(["--config", str(cfg_path), "--port", str(port), "--workers", str(args.workers)], env=env)
    base = f"http://127.0.0.1:{port}"
    report: dict[str, object] = {
        "chunks": count,
        "embedder": args.embedder,
        "query_embedder": qemb,
        "workers": args.workers,
        "backend": args.backend,
    }
    try:
        wait_ready(f"{base}/readyz", proc)
        report["settle_seconds"] = round(wait_quiet(proc.pid), 1)  # every worker warm, not just the first
        from assistant_bridge.backends.lite_server import running_uri

        direct_backend = dict(backend)
        if args.backend == "milvus-lite":
            direct_backend["uri"] = running_uri(data_dir) or ""
        direct_settings = load_settings(
            env={}, overrides={**base_cfg, "backend": direct_backend, "embedder": {"kind": qemb, "dim": 384}}
        )
        direct = Services.from_settings(direct_settings, store=SQLiteStore(args.work_dir / "embedding-cache.sqlite3"))
        direct.warm_up()
        qs = questions(args.data, args.queries)
        scope = Scope(Principal("local", admin=True))
        matrix = _matrix(data_dir)
        from threadpoolctl import threadpool_limits

        with httpx.Client(timeout=30) as http:
            http.get(f"{base}/healthz")  # the connection is open before the first search is timed
            for mode in args.modes.split(","):
                t = time.perf_counter()
                http.post(f"{base}/v1/search", json={"query": qs[-1], "metadata": {"mode": mode}})
                report[f"{mode}_first_ms"] = round((time.perf_counter() - t) * 1000, 1)
                for q in qs[:10]:  # warm both paths
                    http.post(f"{base}/v1/search", json={"query": q, "metadata": {"mode": mode}})
                    direct.search(q, scope, mode=mode, limit=10)
                h_lat, d_lat, b_lat, l_lat = [], [], [], []
                for q in qs:  # interleaved, so both paths see the same machine load
                    t = time.perf_counter()
                    r = http.post(f"{base}/v1/search", json={"query": q, "metadata": {"mode": mode, "limit": 10}})
                    h_lat.append((time.perf_counter() - t) * 1000)
                    assert r.status_code == 200, r.text
                    t = time.perf_counter()
                    vec = None
                    if mode != "lexical":
                        vec = tuple(float(x) for x in direct.embedder.embed_queries([q])[0])
                    t_b = time.perf_counter()
                    direct.backend.search(SearchQuery(text=q, scope=scope, mode=mode, limit=10, vector=vec))  # type: ignore[arg-type]
                    end = time.perf_counter()
                    d_lat.append((end - t) * 1000)
                    b_lat.append((end - t_b) * 1000)
                    if mode == "dense" and matrix is not None:
                        t = time.perf_counter()
                        qv = direct.embedder.embed_queries([q])[0]
                        with threadpool_limits(1):
                            sc = matrix @ qv
                            top = np.argpartition(-sc, 10)[:10]
                            top[np.argsort(-sc[top])]
                        l_lat.append((time.perf_counter() - t) * 1000)
                hp, dp, bp = percentiles(h_lat), percentiles(d_lat), percentiles(b_lat)
                if l_lat:
                    lp = percentiles(l_lat)
                    report["dense_limit_ms"] = {k: round(v, 2) for k, v in lp.items()}
                    report["dense_http_over_limit_p50"] = round(hp["p50"] / lp["p50"], 2)
                report[mode] = {
                    "http_ms": {k: round(v, 2) for k, v in hp.items()},
                    "direct_ms": {k: round(v, 2) for k, v in dp.items()},
                    "backend_only_ms": {k: round(v, 2) for k, v in bp.items()},
                    "overhead_p50": round(hp["p50"] / dp["p50"] - 1, 3),
                    "overhead_p95": round(hp["p95"] / dp["p95"] - 1, 3),
                }
                print(
                    f"{mode:8s} http p50={hp['p50']:.1f} p95={hp['p95']:.1f} ms | direct p50={dp['p50']:.1f} "
                    f"p95={dp['p95']:.1f} ms | overhead p50 {report[mode]['overhead_p50']:+.0%}",
                    flush=True,
                )  # type: ignore[index]
            if args.ingest_chunks:
                report["during_ingest"] = during_ingest(http, base, qs, args.ingest_chunks)
        direct.backend.close()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(60)
    report["load_average"] = [round(x, 2) for x in os.getloadavg()]
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
