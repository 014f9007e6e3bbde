"""Retrieval quality on CLAPNQ: nDCG@10 and R@10 for lexical, dense and hybrid search through the
product's own search path (Services.search → backend), on any configured backend.

    python bench/retrieval.py --data ../shared/data [--work-dir /tmp/ab-bench] [--backend milvus-lite]
                              [--max-passages N] [--json out.json]

Embeddings are cached by content hash in the work dir, so a second run (or another backend) re-uses them.
``--max-passages`` keeps every relevant passage plus the first N-|relevant| others (a quick run; the
published baselines are on all 11,282 passages).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant_bridge.domain import Principal, Scope  # noqa: E402
from assistant_bridge.services import Services  # noqa: E402
from assistant_bridge.settings import load_settings  # noqa: E402
from bench._common import bulk_load, ndcg_recall, passages_to_chunks, percentiles, read_jsonl  # noqa: E402


def load_clapnq(data: Path) -> tuple[list[dict], dict[str, str], dict[str, set[str]]]:
    base = data / "clapnq"
    corpus = list(read_jsonl(base / "derived" / "clapnq_dev_minicorpus.jsonl"))
    qrels: dict[str, set[str]] = {}
    for line in (base / "derived" / "qrels_dev_answerable.tsv").read_text().splitlines()[1:]:
        qid, pid, score = line.split("\t")[:3]
        if int(score) > 0:
            qrels.setdefault(qid, set()).add(pid)
    questions: dict[str, str] = {}
    for line in (base / "retrieval" / "dev" / "question_dev_answerable.tsv").read_text().splitlines()[1:]:
        parts = line.split("\t")
        if len(parts) >= 2 and parts[0] in qrels:
            questions[parts[0]] = parts[1]
    return corpus, questions, qrels


def es_options(url: str) -> dict[str, object]:
    """Elasticsearch options; 7.x/8.x servers need plain JSON with the 9.x client."""
    return {"es_url": url, "es_compat_plain_json": True} if url else {}


def open_corpus(
    data: Path,
    work_dir: Path,
    *,
    backend: str = "milvus-lite",
    embedder: str = "e5-small",
    max_passages: int = 0,
    es_url: str = "",
    threads: int = 0,
    cache: Path | None = None,
) -> tuple[Services, list[dict], dict[str, str], dict[str, set[str]], float]:
    """The CLAPNQ dev mini corpus in a search backend, through the product's own services.

    ``max_passages`` keeps every relevant passage plus the first N-|relevant| others. The backend's data
    lives in ``work_dir/<backend>-<embedder>-<n>`` and is loaded only when it holds fewer passages than
    asked; embeddings go through the content-hash cache ``cache`` (default ``work_dir/embedding-cache.sqlite3``).

    :returns: ``(services, corpus rows, answerable questions, qrels, seconds spent loading)``.
    """
    corpus, questions, qrels = load_clapnq(data)
    if max_passages:
        rel = set().union(*qrels.values())
        keep = [r for r in corpus if r["_id"] in rel]
        keep += [r for r in corpus if r["_id"] not in rel][: max(0, max_passages - len(keep))]
        corpus = keep
    settings = load_settings(
        env={},
        overrides={
            "data_dir": str(work_dir / f"{backend}-{embedder}-{len(corpus)}"),
            "embedder": {"kind": embedder, "dim": 384, "threads": threads},
            "backend": {
                "kind": backend,
                "collection": f"clapnq_{embedder.replace('-', '_')}_{len(corpus)}_flat",
                **es_options(es_url),
            },
        },
    )
    # the embedding cache is shared between runs and backends
    from assistant_bridge.store import SQLiteStore

    store = SQLiteStore(cache or work_dir / "embedding-cache.sqlite3")
    svc = Services.from_settings(settings, store=store)
    svc.warm_up()
    chunks = passages_to_chunks(corpus)
    have = svc.backend.count()
    load_s = 0.0
    if have < len(chunks):
        with contextlib.redirect_stdout(sys.stderr):  # progress on stderr: stdout may carry a JSON report
            print(f"loading {len(chunks)} passages into {backend} (have {have})", flush=True)
            load_s = bulk_load(svc, chunks)
        # searched as after a restart: the in-process indexes are built from what was just written
        svc.backend.close()
        svc = Services.from_settings(settings, store=store)
        svc.warm_up()
    return svc, corpus, questions, qrels, load_s


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--work-dir", type=Path, default=Path("/tmp/assistant-bridge-bench"))
    ap.add_argument("--backend", default="milvus-lite")
    ap.add_argument("--max-passages", type=int, default=0)
    ap.add_argument("--modes", default="lexical,dense,hybrid")
    ap.add_argument(
        "--embedder",
        default="e5-small",
        help="e5-small (default); 'hashing' skips the slow model for lexical-only runs",
    )
    ap.add_argument("--es-url", default="", help="Elasticsearch URL for --backend elasticsearch")
    ap.add_argument("--threads", type=int, default=0, help="embedder threads while loading (0: the default)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("grpc._server").setLevel(logging.CRITICAL)

    svc, corpus, questions, qrels, load_s = open_corpus(
        args.data,
        args.work_dir,
        backend=args.backend,
        embedder=args.embedder,
        max_passages=args.max_passages,
        es_url=args.es_url,
        threads=args.threads,
    )
    chunks = corpus
    scope = Scope(Principal("bench", admin=True))
    report: dict[str, object] = {
        "passages": len(chunks),
        "queries": len(questions),
        "load_seconds": round(load_s, 1),
        "backend": args.backend,
        "embedder": svc.embedder.name,
    }
    for mode in args.modes.split(","):
        nd, rc, lat = [], [], []
        for qid, q in questions.items():
            t = time.perf_counter()
            hits = svc.search(q, scope, mode=mode, limit=10)
            lat.append((time.perf_counter() - t) * 1000)
            ranked = [h.chunk.url.split(":", 1)[1] for h in hits if h.chunk.url]
            n, r = ndcg_recall(ranked, qrels[qid])
            nd.append(n)
            rc.append(r)
        report[mode] = {
            "ndcg@10": round(sum(nd) / len(nd), 4),
            "recall@10": round(sum(rc) / len(rc), 4),
            "latency_ms": {k: round(v, 2) for k, v in percentiles(lat).items()},
        }
        print(
            f"{mode:8s} nDCG@10={report[mode]['ndcg@10']:.4f} R@10={report[mode]['recall@10']:.4f} "  # type: ignore[index]
            f"p50={percentiles(lat)['p50']:.1f} ms",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))
    svc.backend.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
