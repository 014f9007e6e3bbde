"""How soon a newly uploaded document can be found: by its words (lexical) and by meaning (dense).

    python bench/ingest_searchable.py [--chunks 1000] [--port 8093] [--work-dir DIR] [--json out.json]

Starts ``assistant-bridge serve`` on an empty data directory with the defaults (the embedded Milvus Lite store,
multilingual-e5-small, the ``ingest-worker`` process beside gunicorn), posts one document of about ``--chunks``
chunks (``POST /v1/documents?wait=false``; new text every run, so the embedding cache does not help) with a
made-up word in its middle, then every 0.25 s asks ``/v1/search`` for that word in ``lexical`` mode and for
the sentence that holds it in ``dense`` mode, and reads the job and the document. Reported, in seconds after
the upload: when the job first said ``searchable: lexical`` and the document ``status: processing``, when a
lexical search first found the document, when a dense search first did, and when the job was ``done``; with
the load average.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import emit, start_serve, wait_ready  # noqa: E402


def document(chunks: int, marker: str) -> tuple[str, str]:
    """About ``chunks`` chunks of handbook text (new every run) and the sentence, in its middle, that holds
    ``marker``."""
    run = int(time.time())
    sentences = [
        f"Clause {i} of the {run} warehouse handbook: pallets in aisle {i % 97} are checked every "
        f"{i % 13 + 1} days, and the audit of bay {i % 31} is logged in register {i % 7}."
        for i in range(chunks * 6)
    ]
    needle = f"The {marker} forklift is charged overnight in the north bay."
    sentences.insert(len(sentences) // 2, needle)
    return " ".join(sentences), needle


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=1000)
    ap.add_argument("--port", type=int, default=8093)
    ap.add_argument("--work-dir", type=Path, default=Path("/tmp/assistant-bridge-ingest-searchable"))
    ap.add_argument("--json")
    args = ap.parse_args()
    import httpx

    shutil.rmtree(args.work_dir, ignore_errors=True)
    args.work_dir.mkdir(parents=True)
    base = f"http://127.0.0.1:{args.port}"
    with open(args.work_dir / "serve.log", "wb") as log:
        proc = start_serve(["--port", str(args.port), "--data-dir", str(args.work_dir / "data")], log=log)
        try:
            wait_ready(f"{base}/readyz", proc)
            report = measure(httpx.Client(timeout=60), base, args.chunks)
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(60)
    report["load_average"] = [round(x, 2) for x in os.getloadavg()]
    emit(report, args.json)
    return 0


def measure(http: Any, base: str, chunks: int) -> dict[str, Any]:
    marker = f"quokka{int(time.time()) % 100000}"
    text, needle = document(chunks, marker)
    started = time.perf_counter()
    r = http.post(f"{base}/v1/documents?wait=false", json={"title": "Warehouse handbook", "text": text})
    assert r.status_code == 202, r.text
    location = r.headers["Location"]
    seen: dict[str, float] = {}
    job: dict[str, Any] = {}

    def found(query: str, mode: str) -> bool:
        res = http.post(f"{base}/v1/search", json={"query": query, "metadata": {"mode": mode, "limit": 3}})
        assert res.status_code == 200, res.text
        return any(marker in (h.get("body") or "") for h in res.json()["search_results"])

    while time.perf_counter() - started < 1800:
        t = round(time.perf_counter() - started, 2)
        job = http.get(f"{base}{location}").json()
        if job.get("searchable") in ("lexical", "all"):
            seen.setdefault("job_says_lexical", t)
        if "document_says_processing" not in seen and job.get("document_id"):
            doc = http.get(f"{base}/v1/documents/{job['document_id']}")
            if doc.status_code == 200 and doc.json().get("status") == "processing":
                seen["document_says_processing"] = t
        if "lexical_search_finds_it" not in seen and found(marker, "lexical"):
            seen["lexical_search_finds_it"] = t
        if "dense_search_finds_it" not in seen and found(needle, "dense"):
            seen["dense_search_finds_it"] = t
        if job["status"] not in ("queued", "running"):
            seen["job_done"] = t
            if {"lexical_search_finds_it", "dense_search_finds_it"} <= set(seen):
                break
        time.sleep(0.25)
    return {
        "chunks": (job.get("progress") or {}).get("chunks_total"),
        "status": job.get("status"),
        "seconds_after_upload": seen,
    }


if __name__ == "__main__":
    raise SystemExit(main())
