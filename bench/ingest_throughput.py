"""Ingestion throughput with the default embedder: files parsed, chunked, embedded and written per second.

    python bench/ingest_throughput.py [--files DIR_OR_FILES...] [--repeat-sample N] [--work-dir DIR]

Defaults to the shipped sample corpus. Runs with an empty embedding cache so every chunk is embedded, on
the embedded Milvus Lite backend, and reports chunks/s overall and the share of time spent embedding.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant_bridge.domain import Ownership  # noqa: E402
from assistant_bridge.ingest import sample_corpus_files  # noqa: E402
from assistant_bridge.services import Services  # noqa: E402
from assistant_bridge.settings import load_settings  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", nargs="*", type=Path)
    ap.add_argument("--work-dir", type=Path, default=Path("/tmp/assistant-bridge-ingest-bench"))
    ap.add_argument("--embedder", default="e5-small")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("grpc._server").setLevel(logging.CRITICAL)
    shutil.rmtree(args.work_dir, ignore_errors=True)
    files: list[Path] = []
    for p in args.files or sample_corpus_files():
        files.extend(sorted(q for q in p.rglob("*") if q.is_file()) if p.is_dir() else [p])
    settings = load_settings(env={}, overrides={"data_dir": str(args.work_dir), "embedder": {"kind": args.embedder}})
    svc = Services.from_settings(settings)
    t0 = time.perf_counter()
    svc.warm_up()
    warm = time.perf_counter() - t0
    embed_s = 0.0
    original = svc.ingestor.embed_passages

    def timed(*a, **kw):  # type: ignore[no-untyped-def]
        nonlocal embed_s
        t = time.perf_counter()
        out = original(*a, **kw)
        embed_s += time.perf_counter() - t
        return out

    svc.ingestor.embed_passages = timed  # type: ignore[method-assign]
    chunks = 0
    t1 = time.perf_counter()
    for f in files:
        res = svc.ingestor.ingest_bytes(f.name, f.read_bytes(), Ownership())
        chunks += res.document.chunk_count
    total = time.perf_counter() - t1
    report = {
        "files": len(files),
        "chunks": chunks,
        "seconds": round(total, 2),
        "warm_up_seconds": round(warm, 2),
        "chunks_per_second": round(chunks / total, 2),
        "embedding_share": round(embed_s / total, 3),
        "embedder": svc.embedder.name,
    }
    svc.backend.close()
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
