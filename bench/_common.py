"""Shared helpers for the benchmark scripts (not part of the package)."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from assistant_bridge.core.textnorm import lexical_form  # noqa: F401  (re-exported for scripts)
from assistant_bridge.domain import Chunk, Ownership


def percentiles(values: Sequence[float]) -> dict[str, float]:
    v = sorted(values)
    if not v:
        return {"p50": float("nan"), "p95": float("nan"), "n": 0}
    pick = lambda q: v[min(len(v) - 1, int(round(q * (len(v) - 1))))]  # noqa: E731
    return {"p50": pick(0.50), "p95": pick(0.95), "p99": pick(0.99), "mean": statistics.fmean(v), "n": len(v)}


def start_serve(
    args: Sequence[str], *, env: dict[str, str] | None = None, log: Any = None, cwd: Path | None = None
) -> subprocess.Popen[bytes]:
    """``python -m assistant_bridge serve *args`` in a session of its own (so a benchmark can measure or stop
    its whole process group), its output to ``log`` (nowhere by default)."""
    out = log if log is not None else subprocess.DEVNULL
    return subprocess.Popen(
        [sys.executable, "-m", "assistant_bridge", "serve", *args],
        env=env if env is not None else dict(os.environ),
        cwd=cwd,
        stdout=out,
        stderr=subprocess.STDOUT if log is not None else subprocess.DEVNULL,
        start_new_session=True,
    )


def wait_ready(url: str, proc: Any = None, timeout: float = 300) -> None:
    """Poll ``url`` until it answers below 500; fail at once if ``proc`` (a Popen) exits first."""
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise SystemExit(f"the server for {url} exited with code {proc.returncode}")
        try:
            if httpx.get(url, timeout=5).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"{url} did not come up within {timeout:.0f} s")


def wait_quiet(pgid: int, share: float = 0.1, timeout: float = 600) -> float:
    """Wait until the processes of group ``pgid`` use less than ``share`` of a core for two half-second samples
    in a row (every worker has finished warming up, not just the one that answered /readyz); returns the
    seconds waited."""
    import os

    tick = os.sysconf("SC_CLK_TCK")

    def cpu() -> float:
        total = 0
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                fields = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid:  # field 5 of stat: the process group
                total += int(fields[11]) + int(fields[12])
        return total / tick

    started = time.monotonic()
    quiet, last = 0, cpu()
    while quiet < 2 and time.monotonic() - started < timeout:
        time.sleep(0.5)
        now = cpu()
        quiet = quiet + 1 if now - last < share * 0.5 else 0
        last = now
    return time.monotonic() - started


def run_clients(worker: Callable[[int], None], clients: int) -> float:
    """Run ``worker(0)`` … ``worker(clients - 1)`` in one thread each, all at once (a closed-loop load); the
    wall-clock seconds from the first start until the last one ends."""
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - started


def emit(report: dict[str, Any], path: str | None) -> None:
    """Print a script's report as JSON, and write it to ``path`` too when one was given (``--json``)."""
    text = json.dumps(report, indent=2)
    print(text)
    if path:
        Path(path).write_text(text)


def generator_params(pairs: Sequence[str], *, text_fallback: bool = False) -> dict[str, Any]:
    """A script's ``--param KEY=VALUE`` pairs as generator settings, each value read as JSON; a value that is no
    JSON is an error, or kept as text with ``text_fallback``."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            if not text_fallback:
                raise
            out[key] = value
    return out


def render_man(page: str, utf8: bool = False) -> str:
    """A manual page rendered to plain text, 80 columns (``page``: a name, or the path of a page file);
    empty when this machine does not have it. ``utf8`` renders in a UTF-8 locale (pages in other languages)."""
    proc = subprocess.run(
        f"man {'-l ' if page.startswith('/') else ''}{page} | col -bx",
        shell=True,
        capture_output=True,
        text=True,
        env={**os.environ, "MANWIDTH": "80", **({"LC_ALL": "C.UTF-8"} if utf8 else {})},
        check=False,
    )
    return proc.stdout if proc.returncode == 0 else ""


def unpack_deb(package: str, debs: Path, root: Path) -> bool:
    """The Debian ``package`` unpacked under ``root`` (``dpkg-deb -x``, nothing is installed), its ``.deb`` fetched
    into ``debs`` with ``apt-get download`` the first time; ``False`` when it cannot be fetched (a fresh machine
    needs ``apt-get update`` once, as root)."""
    if not any(debs.glob(f"{package}_*.deb")):
        subprocess.run(["apt-get", "download", package], cwd=debs, capture_output=True, check=False)
    found = sorted(debs.glob(f"{package}_*.deb"))
    if found:
        subprocess.run(["dpkg-deb", "-x", str(found[-1]), str(root)], check=True)
    return bool(found)


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def passages_to_chunks(rows: Iterable[dict[str, Any]], id_key: str = "_id") -> list[Chunk]:
    """One chunk per passage (benchmark corpora are already passage-sized); the passage id goes in ``url``."""
    out = []
    for _i, r in enumerate(rows):
        pid = str(r[id_key])
        doc = str(uuid.uuid5(uuid.NAMESPACE_URL, f"bench/{pid}"))
        out.append(
            Chunk(
                id=doc,
                document_id=doc,
                title=r.get("title", ""),
                text=r["text"],
                position=0,
                url=f"bench:{pid}",
                end_char=len(r["text"]),
                ownership=Ownership(),
            )
        )
    return out


def bulk_load(services: Any, chunks: Sequence[Chunk], batch: int = 1000, progress: bool = True) -> float:
    """Embed (through the content-hash cache) and write chunks in large batches; returns seconds spent."""
    t0 = time.perf_counter()
    for start in range(0, len(chunks), batch):
        part = chunks[start : start + batch]
        vecs = services.ingestor.embed_chunks(part)
        services.backend.upsert(part, vecs)
        if progress:
            print(f"  loaded {start + len(part)}/{len(chunks)} ({time.perf_counter() - t0:.0f} s)", flush=True)
    settle(services)
    return time.perf_counter() - t0


def settle(services: Any) -> None:
    """After a bulk ingest, bring the backend's in-process indexes up to date before measuring (the exact
    backend rebuilds its BM25 index a few seconds after the last write; until then Milvus answers lexical
    searches), so a run that has just ingested measures what a rerun on the kept index measures."""
    settle_now = getattr(services.backend, "settle", None)
    if callable(settle_now):
        settle_now()


def ndcg_recall(ranked: Sequence[str], relevant: set[str], k: int = 10) -> tuple[float, float]:
    dcg = sum(1.0 / np.log2(i + 2) for i, d in enumerate(ranked[:k]) if d in relevant)
    ideal = sum(1.0 / np.log2(i + 2) for i in range(min(len(relevant), k)))
    recall = len(set(ranked[:k]) & relevant) / len(relevant) if relevant else 0.0
    return (dcg / ideal if ideal else 0.0), recall
