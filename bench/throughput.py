"""Search throughput of ``serve --workers 2`` against a minimal Flask + pymilvus server on the same data, at
8 concurrent clients, in one interleaved run.

    python bench/throughput.py --data-dir /tmp/ab-lat/milvus-lite-hashing-10000 --config /tmp/ab-lat/e5-small.toml
                               [--clients 8] [--seconds 15] [--rounds 3] [--modes lexical,dense] [--json out.json]

Both servers read the same data directory (one made by ``bench/search_latency.py``): the service runs as
configured (``--config``); the minimal server (:func:`minimal_app`, below: one route that embeds the query
with the same model and calls ``MilvusClient.search``, nothing else) runs under gunicorn with the same
workers and threads against the service's own ``milvus-lite server`` side process. Each round gives each
server ``--seconds`` of closed-loop load per mode (every client sends its next query when the previous one
has answered), the order of the servers alternating between rounds. Reported: requests/s per server and
mode (median over rounds), the ratio, errors, and the load average.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402

from bench._common import emit, run_clients, start_serve, wait_ready  # noqa: E402

QUERIES = [
    "who wrote the declaration of independence",
    "what is the capital of australia",
    "how do vaccines work",
    "when did the first world war end",
    "what causes the seasons",
    "how many moons does jupiter have",
    "what is photosynthesis",
    "who painted the mona lisa",
    "what is the speed of light",
    "how does a bill become law",
    "what is inflation",
    "where is mount kilimanjaro",
]


def minimal_app() -> Any:
    """The minimal server: Flask + pymilvus, what a hand-written integration would do."""
    from flask import Flask, jsonify, request
    from pymilvus import MilvusClient

    from assistant_bridge.embedders.factory import make_embedder

    app = Flask("minimal")
    client = MilvusClient(uri=os.environ["MINIMAL_MILVUS_URI"])
    collection = os.environ.get("MINIMAL_COLLECTION", "chunks")
    client.load_collection(collection)
    embedder = make_embedder(os.environ.get("MINIMAL_EMBEDDER", "e5-small"))
    embedder.warm_up()
    fields = ["id", "title", "text", "url"]

    @app.post("/search")
    def search() -> Any:
        body = request.get_json()
        if body.get("mode") == "lexical":
            from assistant_bridge.core.textnorm import lexical_form

            res = client.search(
                collection,
                data=[lexical_form(body["query"])],
                anns_field="sparse",
                limit=10,
                output_fields=fields,
                search_params={"metric_type": "BM25"},
            )
        else:
            vec = embedder.embed_queries([body["query"]])[0].tolist()
            res = client.search(
                collection,
                data=[vec],
                anns_field="vector",
                limit=10,
                output_fields=fields,
                search_params={"metric_type": "COSINE"},
            )
        return jsonify({"results": [{"title": h["entity"]["title"], "body": h["entity"]["text"]} for h in res[0]]})

    return app


def load(url: str, body_of: Any, clients: int, seconds: float) -> tuple[float, int]:
    done = [0] * clients
    errors = [0] * clients
    stop = time.monotonic() + seconds

    def run(i: int) -> None:
        with httpx.Client(timeout=30) as http:
            k = i
            while time.monotonic() < stop:
                try:
                    r = http.post(url, json=body_of(QUERIES[k % len(QUERIES)]))
                    if r.status_code == 200:
                        done[i] += 1
                    else:
                        errors[i] += 1
                except httpx.HTTPError:
                    errors[i] += 1
                k += clients

    elapsed = run_clients(run, clients)
    return sum(done) / elapsed, sum(errors)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--config", type=Path, required=True)
    ap.add_argument("--collection", default="")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=15)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--modes", default="lexical,dense")
    ap.add_argument("--json")
    args = ap.parse_args()
    from assistant_bridge.backends.lite_server import free_port, running_uri
    from assistant_bridge.settings import load_settings

    settings = load_settings(path=str(args.config), env={})
    collection = args.collection or settings.backend.collection
    port, mport = free_port(), free_port()
    env = {
        **os.environ,
        "ASSISTANT_BRIDGE_BACKEND__LITE_PORT": str(free_port()),
        "ASSISTANT_BRIDGE_LOG_LEVEL": "WARNING",
    }
    svc = start_serve(["--config", str(args.config), "--port", str(port), "--workers", str(args.workers)], env=env)
    minimal = None
    try:
        wait_ready(f"http://127.0.0.1:{port}/readyz", svc)
        uri = running_uri(args.data_dir)
        if not uri:
            raise SystemExit(f"no milvus-lite side process serves {args.data_dir}: is it the data_dir of --config?")
        menv = {
            **os.environ,
            "MINIMAL_MILVUS_URI": uri or "",
            "MINIMAL_COLLECTION": collection,
            "MINIMAL_EMBEDDER": settings.embedder.kind,
        }
        minimal = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "-w",
                str(args.workers),
                "--threads",
                str(args.threads),
                "-b",
                f"127.0.0.1:{mport}",
                "bench.throughput:minimal_app()",
            ],
            env=menv,
            cwd=str(Path(__file__).resolve().parents[1]),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        wait_ready(f"http://127.0.0.1:{mport}/", minimal)
        servers = {
            "service": (
                f"http://127.0.0.1:{port}/v1/search",
                lambda mode: lambda q: {"query": q, "metadata": {"mode": mode, "limit": 10}},
            ),
            "minimal": (f"http://127.0.0.1:{mport}/search", lambda mode: lambda q: {"query": q, "mode": mode}),
        }
        rates: dict[str, dict[str, list[float]]] = {s: {m: [] for m in args.modes.split(",")} for s in servers}
        errors: dict[str, int] = {s: 0 for s in servers}
        loads = []
        for r in range(args.rounds):
            order = list(servers) if r % 2 == 0 else list(reversed(servers))
            for mode in args.modes.split(","):
                for name in order:
                    url, body = servers[name]
                    load(url, body(mode), args.clients, 2)  # warm
                    rate, errs = load(url, body(mode), args.clients, args.seconds)
                    rates[name][mode].append(rate)
                    errors[name] += errs
                    print(
                        f"round {r + 1} {mode:8s} {name:8s} {rate:7.1f} req/s ({errs} errors)",
                        file=sys.stderr,
                        flush=True,
                    )
            loads.append(os.getloadavg()[0])
        report: dict[str, Any] = {
            "clients": args.clients,
            "workers": args.workers,
            "threads": args.threads,
            "seconds": args.seconds,
            "rounds": args.rounds,
            "errors": errors,
        }
        for mode in args.modes.split(","):
            s = statistics.median(rates["service"][mode])
            m = statistics.median(rates["minimal"][mode])
            report[mode] = {
                "service_rps": round(s, 1),
                "minimal_rps": round(m, 1),
                "ratio": round(s / m, 2),
                "service_rounds": [round(x, 1) for x in rates["service"][mode]],
                "minimal_rounds": [round(x, 1) for x in rates["minimal"][mode]],
            }
        report["load_average"] = [round(min(loads), 2), round(max(loads), 2)]
    finally:
        for p in (minimal, svc):
            if p is not None:
                os.killpg(p.pid, signal.SIGTERM)
                p.wait(60)
    emit(report, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
