"""Short requests while many event streams are open: ``GET /healthz`` and ``POST /v1/search`` latency with
``--streams`` agentic streams held open by a slow LLM, against the same requests on the idle service.

    python bench/streams.py [--streams 50] [--llm-seconds 20] [--samples 100] [--json out.json]

The service is ``assistant-bridge serve --sample`` (2 workers × 4 threads, the defaults) with the agentic
generator pointed at a local OpenAI-compatible server that takes ``--llm-seconds`` to answer, so every
admitted ``POST /agenticRetrieveStream`` holds its thread that long. ``--streams`` clients open one stream
each at once; past ``server.max_streams`` per worker the service answers 503 ``too_many_streams`` with
``Retry-After`` (counted). Then ``--samples`` health checks and searches run sequentially while the admitted
streams are open, and again after they ended (idle). Reported: p50/p99 of both phases, the ratios, the
number of admitted and refused streams, and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402

from bench._common import emit, percentiles, start_serve, wait_ready  # noqa: E402


def slow_llm(seconds: float) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            return None

        def do_POST(self) -> None:  # noqa: N802 - the http.server API
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            time.sleep(seconds)
            answer = "The answer is in the documents [1]."
            if body.get("stream"):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                chunk = {"choices": [{"index": 0, "delta": {"content": answer}, "finish_reason": "stop"}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode())
                return
            out = json.dumps(
                {
                    "id": "x",
                    "object": "chat.completion",
                    "model": "slow",
                    "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}
                    ],
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--streams", type=int, default=50)
    ap.add_argument("--llm-seconds", type=float, default=20)
    ap.add_argument("--samples", type=int, default=100)
    ap.add_argument("--json")
    args = ap.parse_args()
    from assistant_bridge.backends.lite_server import free_port

    llm = slow_llm(args.llm_seconds)
    port = free_port()
    data = Path(tempfile.mkdtemp(prefix="ab-streams-"))
    env = {
        **os.environ,
        "ASSISTANT_BRIDGE_BACKEND__LITE_PORT": str(free_port()),
        "ASSISTANT_BRIDGE_LOG_LEVEL": "WARNING",
        "ASSISTANT_BRIDGE_AGENTIC__GENERATOR__KIND": "openai",
        "ASSISTANT_BRIDGE_AGENTIC__GENERATOR__BASE_URL": f"http://127.0.0.1:{llm.server_address[1]}/v1",
        "ASSISTANT_BRIDGE_AGENTIC__GENERATOR__MODEL": "slow",
        "ASSISTANT_BRIDGE_AGENTIC__GENERATOR__TIMEOUT": str(args.llm_seconds * 3),
    }
    proc = start_serve(["--sample", "--port", str(port), "--data-dir", str(data)], env=env)
    base = f"http://127.0.0.1:{port}"
    report: dict[str, Any] = {"streams_asked": args.streams, "llm_seconds": args.llm_seconds}
    try:
        wait_ready(f"{base}/readyz", proc)
        http = httpx.Client(timeout=30)

        def sample() -> tuple[list[float], list[float]]:
            hz, se = [], []
            for i in range(args.samples):
                t = time.perf_counter()
                assert http.get(f"{base}/healthz").status_code == 200
                hz.append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                r = http.post(f"{base}/v1/search", json={"query": ["password reset", "expense claims", "VPN"][i % 3]})
                assert r.status_code == 200, r.text
                se.append((time.perf_counter() - t) * 1000)
            return hz, se

        sample()  # warm
        statuses: list[int] = []
        lock = threading.Lock()

        def stream() -> None:
            body = {
                "messages": [{"role": "user", "content": {"text": "How do I reset my password?"}}],
                "retrievers": [{"configuration": {"knowledgeBase": {"knowledgeBaseId": "default"}}}],
            }
            try:
                with (
                    httpx.Client(timeout=args.llm_seconds * 4) as c,
                    c.stream("POST", f"{base}/agenticRetrieveStream", json=body) as r,
                ):
                    with lock:
                        statuses.append(r.status_code)
                    for _ in r.iter_bytes():
                        pass
            except httpx.HTTPError:
                with lock:
                    statuses.append(-1)

        threads = [threading.Thread(target=stream, daemon=True) for _ in range(args.streams)]
        for t in threads:
            t.start()
        time.sleep(2)  # every stream admitted or refused
        t0 = time.monotonic()
        busy_hz, busy_se = sample()
        report["busy_seconds"] = round(time.monotonic() - t0, 1)
        report["streams_still_open_after_sampling"] = sum(t.is_alive() for t in threads)
        for t in threads:
            t.join(args.llm_seconds * 4)
        idle_hz, idle_se = sample()
        report["admitted"] = statuses.count(200)
        report["refused_503"] = statuses.count(503)
        report["other"] = len(statuses) - report["admitted"] - report["refused_503"]
        for name, values in (
            ("healthz_busy", busy_hz),
            ("healthz_idle", idle_hz),
            ("search_busy", busy_se),
            ("search_idle", idle_se),
        ):
            report[name] = {k: round(v, 2) for k, v in percentiles(values).items()}
        report["search_busy_over_idle_p50"] = round(report["search_busy"]["p50"] / report["search_idle"]["p50"], 2)
        report["load_average"] = [round(x, 2) for x in os.getloadavg()]
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(60)
        llm.shutdown()
    emit(report, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
