"""Latency of one ``POST .../message`` turn and of each of its stages, on the shipped sample corpus with the
embedded defaults (Milvus Lite, multilingual-e5-small, the ONNX filters, the extractive generator).

    python bench/message_latency.py [--turns 60] [--work-dir /tmp/assistant-bridge-message]
                                    [--gunicorn [--workers 2]] [--assistant default] [--json out.json]
                                    [--omp-wait-policy PASSIVE]

Without ``--gunicorn`` the turns go through the Flask test client in this process (no HTTP); with it, the
script starts ``assistant-bridge serve --sample`` (gunicorn, the managed Milvus Lite side process) on a free
loopback port and sends the turns over HTTP. The first run ingests the sample corpus into the work dir (the
embedding cache makes later runs fast). Three warm-up turns are not counted. Turns are sequential.

``--omp-wait-policy PASSIVE`` sets ``OMP_WAIT_POLICY`` before any model loads (and for the served workers):
the e5 embedder's OpenMP threads then sleep instead of spinning between calls, which otherwise starves the
numpy threads of the sentence encoder on a small machine (measured here: query embedding 25-150 ms instead
of 100-1400 ms on 2 busy cores).

Stage times come from ``output.debug`` (``input.options.debug``): search (embedding + backend), pre-filter,
generation, post-filter; ``wall`` is the client-side time of the whole request.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant_bridge.backends.lite_server import free_port  # noqa: E402
from bench._common import percentiles, start_serve, wait_ready  # noqa: E402

QUERIES = [
    "How do I reset my password?",
    "What do I do if I lose my phone used for multi-factor authentication?",
    "How many days a week can I work from home?",
    "How do I connect to the VPN from home?",
    "Who do I tell about a phishing email?",
    "Comment me faire rembourser une note de frais ?",
    "Quels sont les jours fériés en 2026 ?",
    "Comment signaler un incident de sécurité ?",
    "経費精算の締め切りはいつですか？",
    "パスワードを忘れた場合はどうすればいいですか？",
    "年末年始の休暇はいつからですか？",
    "What is the capital of Australia?",  # not in the corpus: should end in "I don't know" or no results
]
STAGES = ("search", "pre_filter", "generation", "post_filter")


def _body(query: str) -> dict[str, Any]:
    return {"input": {"message_type": "text", "text": query, "options": {"debug": True}}}


def in_process(work_dir: Path, path: str) -> tuple[Callable[[str], dict[str, Any]], Callable[[], None]]:
    from assistant_bridge.domain import Ownership
    from assistant_bridge.ingest import sample_corpus_files
    from assistant_bridge.services import Services
    from assistant_bridge.settings import load_settings
    from assistant_bridge.web.app import create_app

    settings = load_settings(env={}, overrides={"data_dir": str(work_dir)})
    services = Services.from_settings(settings)
    services.warm_up()
    if services.backend.count() == 0:
        print("ingesting the sample corpus (first run only)...", flush=True)
        for p in sample_corpus_files():
            services.ingestor.ingest_bytes(p.name, p.read_bytes(), Ownership())
    app = create_app(settings, services)
    client = app.test_client()

    def send(query: str) -> dict[str, Any]:
        resp = client.post(path, json=_body(query))
        if resp.status_code != 200:
            raise SystemExit(f"/message answered {resp.status_code}: {resp.get_data(as_text=True)[:300]}")
        return dict(resp.get_json())

    return send, services.backend.close


def over_gunicorn(
    work_dir: Path, path: str, workers: int
) -> tuple[Callable[[str], dict[str, Any]], Callable[[], None]]:
    import httpx

    port = free_port()
    proc = start_serve(
        ["--sample", "--data-dir", str(work_dir), "--port", str(port), "--workers", str(workers)],
        env={**os.environ, "ASSISTANT_BRIDGE_LOG_LEVEL": "WARNING"},
    )
    base = f"http://127.0.0.1:{port}"
    client = httpx.Client(base_url=base, timeout=120)
    wait_ready(f"{base}/readyz", proc, timeout=600)

    def send(query: str) -> dict[str, Any]:
        resp = client.post(path, json=_body(query))
        if resp.status_code != 200:
            raise SystemExit(f"/message answered {resp.status_code}: {resp.text[:300]}")
        return dict(resp.json())

    def stop() -> None:
        client.close()
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(60)

    return send, stop


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=60)
    ap.add_argument("--work-dir", type=Path, default=Path("/tmp/assistant-bridge-message"))
    ap.add_argument("--gunicorn", action="store_true", help="send the turns to `assistant-bridge serve` over HTTP")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--assistant", default="default")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--omp-wait-policy", choices=("PASSIVE", "ACTIVE"))
    args = ap.parse_args()
    if args.omp_wait_policy:
        os.environ["OMP_WAIT_POLICY"] = args.omp_wait_policy  # read by OpenMP when the embedder loads
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("grpc._server").setLevel(logging.CRITICAL)
    path = f"/v2/assistants/{args.assistant}/environments/default/message?version=2024-08-25"
    t0 = time.perf_counter()
    if args.gunicorn:
        send, stop = over_gunicorn(args.work_dir, path, args.workers)
    else:
        send, stop = in_process(args.work_dir, path)
    print(f"ready in {time.perf_counter() - t0:.1f} s", flush=True)
    try:
        for q in QUERIES[:3]:
            send(q)
        wall: list[float] = []
        stages: dict[str, list[float]] = {s: [] for s in (*STAGES, "total")}
        outcomes: Counter[str] = Counter()
        for i in range(args.turns):
            start = time.perf_counter()
            body = send(QUERIES[i % len(QUERIES)])
            wall.append((time.perf_counter() - start) * 1000)
            ev = body["output"]["debug"]["turn_events"][0]
            outcomes[ev["outcome"]] += 1
            times = ev["metrics"]["stage_times_ms"]
            for s in STAGES:
                if s in times:
                    stages[s].append(times[s])
            stages["total"].append(ev["metrics"]["total_time_ms"])
    finally:
        stop()
    report = {
        "mode": "gunicorn" if args.gunicorn else "flask-test-client",
        "turns": args.turns,
        "outcomes": dict(outcomes),
        "wall_ms": percentiles(wall),
        "stages_ms": {s: percentiles(v) for s, v in stages.items()},
    }
    print(f"{'stage':<12} {'n':>4} {'p50 ms':>9} {'p95 ms':>9}")
    for name, p in [("wall", report["wall_ms"]), *report["stages_ms"].items()]:
        print(f"{name:<12} {p['n']:>4} {p['p50']:>9.1f} {p['p95']:>9.1f}")
    print("outcomes:", dict(outcomes))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
