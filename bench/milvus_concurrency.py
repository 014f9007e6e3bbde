"""Concurrent searches through ``MilvusBackend`` against a Milvus Lite side process, with and without the
per-worker lock that used to wrap every read (now held only for an embedded Milvus Lite file), side by side
in one interleaved run.

    python bench/milvus_concurrency.py [--chunks 10000] [--threads 8] [--seconds 10] [--rounds 3] [--json out.json]

The index holds ``--chunks`` synthetic chunks (hashing embedder, 384-d, lexical and dense fields) in a
temporary data directory; each round runs ``--threads`` threads for ``--seconds`` per variant, alternating
lexical and dense searches of varied queries. Reported: searches per second of each variant per round, the
ratio, and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant_bridge.backends.lite_server import LiteServer  # noqa: E402
from assistant_bridge.backends.milvus import MilvusBackend  # noqa: E402
from assistant_bridge.domain import Chunk, Principal, Scope, SearchQuery  # noqa: E402
from assistant_bridge.embedders.base import HashingEmbedder  # noqa: E402
from bench._common import emit, run_clients  # noqa: E402

WORDS = (
    "password reset portal vpn client expense report travel holiday leave badge laptop printer "
    "invoice contract payroll benefit training security incident phishing network office"
).split()


def _text(i: int) -> str:
    return " ".join(WORDS[(i * k + k * k) % len(WORDS)] for k in range(1, 40))


def run(backend: MilvusBackend, emb: HashingEmbedder, threads: int, seconds: float) -> float:
    scope = Scope(principal=Principal("bench", admin=True))
    queries = [(f"{WORDS[i % len(WORDS)]} {WORDS[(i * 7) % len(WORDS)]}") for i in range(64)]
    vectors = [tuple(float(x) for x in v) for v in emb.embed_queries(queries)]
    done = [0] * threads
    deadline = time.perf_counter() + seconds

    def worker(n: int) -> None:
        i = n
        while time.perf_counter() < deadline:
            q = i % len(queries)
            mode = "lexical" if i % 2 else "dense"
            backend.search(SearchQuery(text=queries[q], scope=scope, mode=mode, limit=10, vector=vectors[q]))  # type: ignore[arg-type]
            done[n] += 1
            i += threads

    elapsed = run_clients(worker, threads)
    return sum(done) / elapsed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=10_000)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        lite = LiteServer(Path(tmp), 19650)
        uri = lite.start()
        try:
            emb = HashingEmbedder(384)
            backend = MilvusBackend(uri, "bench", 384)
            backend.warm_up()
            t = time.perf_counter()
            for start in range(0, args.chunks, 500):
                chunks = [
                    Chunk(id=f"c{i}", document_id=f"d{i // 10}", title=f"Doc {i // 10}", text=_text(i), position=i % 10)
                    for i in range(start, min(start + 500, args.chunks))
                ]
                backend.upsert(chunks, emb.embed_passages([c.text for c in chunks]))
            print(f"indexed {backend.count()} chunks in {time.perf_counter() - t:.0f} s", file=sys.stderr)
            rounds = []
            for _r in range(args.rounds):
                row = {}
                for name, remote in (("read_lock", False), ("no_read_lock", True)):
                    backend._remote = remote  # False: every read holds the lock, as before
                    row[name] = round(run(backend, emb, args.threads, args.seconds), 1)
                row["ratio"] = round(row["no_read_lock"] / row["read_lock"], 2)
                row["load_average"] = [round(x, 2) for x in os.getloadavg()]
                print(json.dumps(row), file=sys.stderr)
                rounds.append(row)
            backend.close()
        finally:
            lite.stop()
    out = {"chunks": args.chunks, "threads": args.threads, "seconds": args.seconds, "rounds": rounds}
    emit(out, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
