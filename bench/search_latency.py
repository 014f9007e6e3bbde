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
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402

from bench._common import bulk_load, passages_to_chunks, percentiles, read_jsonl  # noqa: E402

from assistant_bridge.backends.lite_server import free_port  # noqa: E402
from assistant_bridge.domain import Principal, Scope, SearchQuery  # noqa: E402
from assistant_bridge.services import Services  # noqa: E402
from assistant_bridge.settings import load_settings  # noqa: E402



def corpus(data: Path, n: int) -> list[dict]:
    rows = list(read_jsonl(data / "clapnq" / "derived" / "clapnq_dev_minicorpus.jsonl"))
    if len(rows) < n:
        for r in read_jsonl(data / "hotpotqa" / "derived" / "hotpot_dev500_pooled_corpus.jsonl"):
            rows.append({"_id": "h" + str(r.get("_id", r.get("id", len(rows)))), "title": r.get("title", ""),
                         "text": r.get("text", "")})  # fmt: skip
            if len(rows) >= n:
                break
    return rows[:n]


def questions(data: Path, k: int) -> list[str]:
    lines = (data / "clapnq" / "retrieval" / "dev" / "question_dev_answerable.tsv").read_text().splitlines()[1:]
    return [ln.split("\t")[1] for ln in lines if "\t" in ln][:k]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--work-dir", type=Path, default=Path("/tmp/assistant-bridge-latency"))
    ap.add_argument("--passages", type=int, default=10_000)
    ap.add_argument("--embedder", default="hashing")
    ap.add_argument("--queries", type=int, default=150)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--modes", default="lexical,dense")
    ap.add_argument("--backend", default="milvus-lite", help="milvus-lite or elasticsearch")
    ap.add_argument("--es-url", default="", help="Elasticsearch URL for --backend elasticsearch")
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

    cfg_path = args.work_dir / f"{args.embedder}.toml"
    cfg_path.write_text(
        f'data_dir = "{data_dir}"\n[embedder]\nkind = "{args.embedder}"\ndim = 384\n[backend]\n'
        + "".join(f"{k} = {json.dumps(v)}\n" for k, v in backend.items())
    )
    port = free_port()
    env = {**os.environ, "ASSISTANT_BRIDGE_BACKEND__LITE_PORT": str(free_port()), "ASSISTANT_BRIDGE_LOG_LEVEL": "WARNING"}
    proc = subprocess.Popen([sys.executable, "-m", "assistant_bridge", "serve", "--config", str(cfg_path),
                             "--port", str(port), "--workers", str(args.workers)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    report: dict[str, object] = {"chunks": count, "embedder": args.embedder, "workers": args.workers,
                                 "backend": args.backend}  # fmt: skip
    try:
        for _ in range(600):
            try:
                if httpx.get(f"{base}/readyz", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        from assistant_bridge.backends.lite_server import running_uri

        direct_backend = dict(backend)
        if args.backend == "milvus-lite":
            direct_backend["uri"] = running_uri(data_dir) or ""
        direct_settings = load_settings(env={}, overrides={**base_cfg, "backend": direct_backend})
        direct = Services.from_settings(direct_settings, store=SQLiteStore(args.work_dir / "embedding-cache.sqlite3"))
        direct.warm_up()
        qs = questions(args.data, args.queries)
        scope = Scope(Principal("local", admin=True))
        with httpx.Client(timeout=30) as http:
            for mode in args.modes.split(","):
                for q in qs[:10]:  # warm both paths
                    http.post(f"{base}/v1/search", json={"query": q, "metadata": {"mode": mode}})
                    direct.search(q, scope, mode=mode, limit=10)
                h_lat, d_lat, b_lat = [], [], []
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
                hp, dp, bp = percentiles(h_lat), percentiles(d_lat), percentiles(b_lat)
                report[mode] = {
                    "http_ms": {k: round(v, 2) for k, v in hp.items()},
                    "direct_ms": {k: round(v, 2) for k, v in dp.items()},
                    "backend_only_ms": {k: round(v, 2) for k, v in bp.items()},
                    "overhead_p50": round(hp["p50"] / dp["p50"] - 1, 3),
                    "overhead_p95": round(hp["p95"] / dp["p95"] - 1, 3),
                }
                print(f"{mode:8s} http p50={hp['p50']:.1f} p95={hp['p95']:.1f} ms | direct p50={dp['p50']:.1f} "
                      f"p95={dp['p95']:.1f} ms | overhead p50 {report[mode]['overhead_p50']:+.0%}", flush=True)  # type: ignore[index]
        direct.backend.close()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(60)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
