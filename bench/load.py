"""Load test of the real service on loopback: throughput, latency percentiles and errors at increasing
concurrency, with documents ingested and deleted while the load runs.

    python bench/load.py [--levels 1,2,4,8] [--duration 20] [--workers 2] [--json out.json]

It starts ``assistant-bridge serve --sample`` (gunicorn, ``--workers`` workers, the embedded defaults: Milvus
Lite side process, multilingual-e5-small, extractive generator and ONNX answer filters) in a temporary data
directory, then runs three phases, each at every concurrency level for ``--duration`` seconds with that many
closed-loop clients (each sends its next request when the previous one has answered):

1. ``search``: ``POST /v1/search`` only;
2. ``message``: full ``/message`` turns only (``/v2/assistants/default/environments/default/message``);
3. ``mixed``: 50 % search, 30 % ``/message``, 20 % ``rag_search`` (``POST /v1/tools/rag_search/execute``),
   while one more client ingests small documents (``POST /v1/documents``) and deletes every third one.

Afterwards every ingested document must be found by a lexical search on its unique word and by id, and every
deleted one must be gone. The report gives, per phase and level, requests/s, p50/p95/p99 (ms) and errors,
the best sustained rate of each single-route phase with its p99, and the resident memory of each worker.
The load generator runs on the same machine: on two cores it takes CPU from the service it measures.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout: python bench/load.py

from assistant_bridge.backends.lite_server import free_port  # noqa: E402
from bench._common import run_clients, start_serve  # noqa: E402

QUESTIONS = [
    "How do I reset my password?",
    "How do I set up the VPN?",
    "How many days can I work from home?",
    "How do I report a security incident?",
    "Comment me faire rembourser mes frais ?",
    "Comment signaler un incident de sécurité ?",
    "Quels sont les jours fériés en 2026 ?",
    "経費精算の締め切りはいつですか",
    "パスワードを忘れた場合はどうすればいいですか",
    "年末年始の休暇はいつからですか",
    "Which multi-factor authentication apps are supported?",
    "Can I expense a taxi to the airport?",
]
SYLLABLES = ["ka", "lo", "mi", "ru", "te", "zo", "vi", "ne", "pa", "su", "do", "gi"]
MESSAGE = "/v2/assistants/default/environments/default/message"


def percentile(values: list[float], q: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, int(round(q * (len(v) - 1))))] if v else float("nan")


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def children(pid: int) -> dict[int, str]:
    out: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    out[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except (OSError, ValueError, IndexError):
                continue
    return out


# --- requests ------------------------------------------------------------------------------------------------
def do_search(c: httpx.Client, rng: random.Random) -> httpx.Response:
    return c.post("/v1/search", json={"query": rng.choice(QUESTIONS), "metadata": {"limit": 5}})


def do_message(c: httpx.Client, rng: random.Random) -> httpx.Response:
    return c.post(MESSAGE, json={"input": {"message_type": "text", "text": rng.choice(QUESTIONS)}})


def do_rag(c: httpx.Client, rng: random.Random) -> httpx.Response:
    return c.post("/v1/tools/rag_search/execute", json={"inputs": {"query": rng.choice(QUESTIONS)}})


MIXES: dict[str, list[tuple[str, float, Callable[[httpx.Client, random.Random], httpx.Response]]]] = {
    "search": [("search", 1.0, do_search)],
    "message": [("message", 1.0, do_message)],
    "mixed": [("search", 0.5, do_search), ("message", 0.3, do_message), ("rag_search", 0.2, do_rag)],
}


@dataclass
class Tally:
    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: dict[str, dict[str, int]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, route: str, seconds: float, error: str | None) -> None:
        with self.lock:
            if error is None:
                self.latencies.setdefault(route, []).append(seconds)
            else:
                errs = self.errors.setdefault(route, {})
                errs[error] = errs.get(error, 0) + 1


def run_level(base: str, mix: str, clients: int, duration: float, seed: int) -> dict[str, Any]:
    tally = Tally()
    stop = time.monotonic() + duration
    routes = MIXES[mix]

    def client_loop(n: int) -> None:
        rng = random.Random(seed * 1000 + n)
        with httpx.Client(base_url=base, timeout=120) as c:
            while time.monotonic() < stop:
                name, _, fn = rng.choices(routes, weights=[w for _, w, _ in routes])[0]
                t0 = time.perf_counter()
                try:
                    resp = fn(c, rng)
                    error = None if resp.status_code == 200 else f"HTTP {resp.status_code}"
                except httpx.HTTPError as exc:
                    error = type(exc).__name__
                tally.add(name, time.perf_counter() - t0, error)

    elapsed = run_clients(client_loop, clients)
    out: dict[str, Any] = {"clients": clients, "seconds": round(elapsed, 1), "routes": {}}
    total = 0
    for name, _, _ in routes:
        lat = tally.latencies.get(name, [])
        total += len(lat)
        out["routes"][name] = {
            "rps": round(len(lat) / elapsed, 2),
            "ok": len(lat),
            "errors": tally.errors.get(name, {}),
            "p50_ms": round(percentile(lat, 0.50) * 1000, 1),
            "p95_ms": round(percentile(lat, 0.95) * 1000, 1),
            "p99_ms": round(percentile(lat, 0.99) * 1000, 1),
        }
    out["rps"] = round(total / elapsed, 2)
    return out


# --- ingestion during the load -------------------------------------------------------------------------------
class Ingester(threading.Thread):
    """Ingests ``count`` small documents, each with a unique nonsense word, and deletes every third one."""

    def __init__(self, base: str, count: int, pause: float) -> None:
        super().__init__(daemon=True)
        self.base, self.count, self.pause = base, count, pause
        self.kept: dict[str, str] = {}  # word -> document id
        self.deleted: dict[str, str] = {}
        self.errors: list[str] = []

    @staticmethod
    def word(i: int) -> str:
        return "".join(SYLLABLES[(i * 7 + k * 5) % len(SYLLABLES)] for k in range(4)) + f"q{i:03d}"

    def run(self) -> None:
        with httpx.Client(base_url=self.base, timeout=300) as c:
            for i in range(self.count):
                word = self.word(i)
                body = {
                    "title": f"Load note {i}",
                    "text": f"Facility note {i}: the {word} badge reader on floor "
                    f"{i % 7} is replaced next week. Contact the facilities desk for a temporary {word} pass.",
                }
                try:
                    resp = c.post("/v1/documents", json=body)
                    if resp.status_code not in (200, 201):
                        self.errors.append(f"ingest {i}: HTTP {resp.status_code}")
                        continue
                    doc_id = resp.json()["document"]["id"]
                    if i % 3 == 2:
                        gone = c.delete(f"/v1/documents/{doc_id}")
                        if gone.status_code != 200:
                            self.errors.append(f"delete {i}: HTTP {gone.status_code}")
                            self.kept[word] = doc_id
                        else:
                            self.deleted[word] = doc_id
                    else:
                        self.kept[word] = doc_id
                except httpx.HTTPError as exc:
                    self.errors.append(f"{i}: {type(exc).__name__}")
                time.sleep(self.pause)

    def verify(self) -> dict[str, Any]:
        lost, resurrected = [], []
        with httpx.Client(base_url=self.base, timeout=60) as c:
            for word, doc_id in self.kept.items():
                hits = c.post("/v1/search", json={"query": word, "metadata": {"mode": "lexical", "limit": 3}}).json()
                found = any(h["result_metadata"].get("document_id") == doc_id for h in hits["search_results"])
                if not found or c.get(f"/v1/documents/{doc_id}").status_code != 200:
                    lost.append(word)
            for word, doc_id in self.deleted.items():
                hits = c.post("/v1/search", json={"query": word, "metadata": {"mode": "lexical", "limit": 3}}).json()
                if (
                    any(h["result_metadata"].get("document_id") == doc_id for h in hits["search_results"])
                    or c.get(f"/v1/documents/{doc_id}").status_code != 404
                ):
                    resurrected.append(word)
        return {
            "ingested": len(self.kept) + len(self.deleted),
            "kept": len(self.kept),
            "deleted": len(self.deleted),
            "lost": lost,
            "still_visible_after_delete": resurrected,
            "errors": self.errors,
        }


# --- the service ---------------------------------------------------------------------------------------------
def start_service(work: Path, workers: int) -> tuple[subprocess.Popen[bytes], str, Any]:
    port = free_port()
    env = {**os.environ, "ASSISTANT_BRIDGE_BACKEND__LITE_PORT": str(free_port())}
    log = open(work / "serve.log", "wb")
    proc = start_serve(
        ["--sample", "--workers", str(workers), "--port", str(port), "--data-dir", str(work / "data")],
        env=env,
        log=log,
        cwd=ROOT,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit("serve exited: " + (work / "serve.log").read_text()[-3000:])
        try:
            if httpx.get(base + "/readyz", timeout=5).status_code == 200:
                return proc, base, log
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit("serve did not become ready")


def memory(proc: subprocess.Popen[bytes]) -> dict[str, float]:
    out = {}
    for pid, cmd in sorted(children(proc.pid).items()):
        out[("milvus-lite" if "milvus_lite" in cmd else "worker") + f" {pid}"] = round(rss_mb(pid), 1)
    out[f"arbiter {proc.pid}"] = round(rss_mb(proc.pid), 1)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--levels", default="1,2,4,8")
    ap.add_argument("--duration", type=float, default=20.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--phases", default="search,message,mixed")
    ap.add_argument("--documents", type=int, default=36, help="documents ingested during the mixed phase")
    ap.add_argument("--json", help="write the report here")
    args = ap.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    report: dict[str, Any] = {
        "levels": levels,
        "duration_s": args.duration,
        "workers": args.workers,
        "cpus": os.cpu_count(),
        "loadavg_at_start": os.getloadavg(),
    }
    with tempfile.TemporaryDirectory(prefix="ab-load-") as tmp:
        work = Path(tmp)
        started = time.monotonic()
        proc, base, log = start_service(work, args.workers)
        report["startup_s"] = round(time.monotonic() - started, 1)
        print(f"service ready in {report['startup_s']} s at {base} (load average {report['loadavg_at_start'][0]:.1f})")
        try:
            for c in (1, 2):  # warm both workers (first-request model loading)
                run_level(base, "mixed", c, 3, seed=0)
            report["phases"] = {}
            for phase in args.phases.split(","):
                rows = []
                ingester = None
                if phase == "mixed":
                    pause = max(0.0, args.duration * len(levels) / max(1, args.documents) - 0.5)
                    ingester = Ingester(base, args.documents, pause)
                    ingester.start()
                for level in levels:
                    row = run_level(base, phase, level, args.duration, seed=level)
                    rows.append(row)
                    routes = ", ".join(
                        f"{n} {r['rps']}/s p50 {r['p50_ms']} p95 {r['p95_ms']} p99 {r['p99_ms']} ms"
                        + (f" errors {r['errors']}" if r["errors"] else "")
                        for n, r in row["routes"].items()
                    )
                    print(f"{phase:8s} c={level:<2d} {row['rps']:7.2f} req/s | {routes}", flush=True)
                report["phases"][phase] = rows
                if ingester is not None:
                    ingester.join(600)
                    report["ingestion"] = ingester.verify()
                    print("ingestion during load:", json.dumps(report["ingestion"]))
            report["memory_mb"] = memory(proc)
            print("resident memory (MB):", json.dumps(report["memory_mb"]))
            for phase in ("search", "message"):
                rows = report["phases"].get(phase)
                if rows:
                    best = max(rows, key=lambda r: r["rps"])
                    route = best["routes"][phase]
                    report[f"max_{phase}"] = {
                        "rps": route["rps"],
                        "clients": best["clients"],
                        "p99_ms": route["p99_ms"],
                        "errors": route["errors"],
                    }
                    print(
                        f"max sustained {phase}: {route['rps']} req/s at {best['clients']} clients, "
                        f"p99 {route['p99_ms']} ms, errors {route['errors'] or 0}"
                    )
        finally:
            os.kill(proc.pid, signal.SIGTERM)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
            log.close()
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1, ensure_ascii=False))
    ing = report.get("ingestion", {})
    return 1 if ing.get("lost") or ing.get("still_visible_after_delete") else 0


if __name__ == "__main__":
    raise SystemExit(main())
