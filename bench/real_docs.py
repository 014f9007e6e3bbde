"""Answers on real documentation: this machine's manual pages, PDF specifications, HTML manuals and Markdown.

    python bench/real_docs.py [--docs DIR] [--work-dir DIR] [--json out.json]

Without ``--docs`` the corpus is collected from this machine first (:data:`SOURCES`: 20 manual pages rendered
by ``man``, the libtasn1 manual and the shared-mime-info specification as PDF, the libffi texinfo manual,
chapters of the Rust book and the Cargo book (mdBook), two Debian HTML guides, four Markdown files) into
``<work-dir>/docs``; files that are missing here are left out and listed. The corpus is ingested with the
default settings into a fresh data directory, then each question of ``bench/data/real_docs_questions.json``
is asked as a ``/message`` turn (the default level ``less_often``, the extractive generator).

Scored: an answerable question is *correct* when the answer holds one of its answer strings, *refused* when
the turn declined, else *wrong* (and, stricter, *first sentence correct* when the answer's first cited
sentence holds it); an unanswerable one is *declined* or *answered* (invented). Also counted:
answers that carry page chrome (navigation, contents-page dot leaders, manual-page headers), and the files
ingestion reported as having no text. The questions were written after the cleaning rules were designed on
these files; nothing is tuned on them.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant_bridge.domain import Ownership, Scope  # noqa: E402
from assistant_bridge.errors import BridgeError, NoContent  # noqa: E402
from assistant_bridge.services import Services  # noqa: E402
from assistant_bridge.settings import load_settings  # noqa: E402
from bench._common import emit, render_man  # noqa: E402

QUESTIONS = Path(__file__).resolve().parent / "data" / "real_docs_questions.json"
MAN_PAGES = (
    "wc",
    "ls",
    "grep",
    "tar",
    "cp",
    "sort",
    "find",
    "chmod",
    "head",
    "tail",
    "cut",
    "ssh",
    "gzip",
    "du",
    "df",
    "ln",
    "mkdir",
    "uniq",
    "xargs",
    "date",
)
RUST = Path("/root/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/share/doc/rust/html")
BOOK = (
    "ch03-01-variables-and-mutability",
    "ch04-01-what-is-ownership",
    "ch08-01-vectors",
    "ch09-02-recoverable-errors-with-result",
    "ch11-01-writing-tests",
    "ch14-01-release-profiles",
)
SOURCES: dict[str, Path] = {
    "libtasn1.pdf": Path("/usr/share/doc/libtasn1-doc/libtasn1.pdf"),
    "shared-mime-info-spec.pdf": Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf"),
    "users-and-groups.html": Path("/usr/share/doc/base-passwd/users-and-groups.html"),
    "zlib_how.html": Path("/usr/share/doc/zlib1g-dev/examples/zlib_how.html"),
    "zstd-TESTING.md": Path("/usr/share/doc/zstd/TESTING.md"),
    "systemd-DISTRO_PORTING.md": Path("/usr/share/doc/systemd/DISTRO_PORTING.md"),
    "pyyaml-README.md": Path("/usr/share/doc/python3-yaml/README.md"),
    "systemd-UIDS-GIDS.md": Path("/usr/share/doc/systemd/UIDS-GIDS.md.gz"),
    **{f"book-{c}.html": RUST / "book" / f"{c}.html" for c in BOOK},
    **{
        f"cargo-{c}.html": RUST / "cargo" / "reference" / f"{c}.html"
        for c in ("profiles", "environment-variables", "build-cache")
    },
}
LIBFFI = Path("/usr/share/doc/libffi8/html")
CHROME = re.compile(
    r"Keyboard shortcuts|Previous: |Next: |Table of Contents|(?:\. ){5}|User Commands|"
    r"Press ← or →|\[edit\]|Up: ",
    re.IGNORECASE,
)


def collect(out: Path) -> list[str]:
    """Copy (or render) the corpus into ``out``; returns what this machine does not have."""
    out.mkdir(parents=True, exist_ok=True)
    missing: list[str] = []
    for page in MAN_PAGES:
        text = render_man(page)
        if not text.strip():
            missing.append(f"man {page}")
        else:
            (out / f"man-{page}.txt").write_text(text, encoding="utf-8")
    sources = dict(SOURCES)
    sources.update({p.name: p for p in sorted(LIBFFI.glob("*.html"))})
    for name, src in sources.items():
        if not src.exists():
            missing.append(str(src))
        elif src.suffix == ".gz":
            import gzip

            (out / name).write_bytes(gzip.decompress(src.read_bytes()))
        else:
            shutil.copyfile(src, out / name)
    return missing


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=Path, help="an already collected corpus (default: collect one)")
    ap.add_argument("--work-dir", type=Path, default=Path("/tmp/ab-real-docs"))
    ap.add_argument("--questions", type=Path, default=QUESTIONS)
    ap.add_argument("--json")
    ap.add_argument("--show", action="store_true", help="print every question with its answer")
    ap.add_argument("--mode", choices=("dense", "lexical", "hybrid"), help="search mode (default: the product's)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("grpc._server").setLevel(logging.CRITICAL)
    missing: list[str] = []
    docs = args.docs
    if docs is None:
        docs = args.work_dir / "docs"
        shutil.rmtree(docs, ignore_errors=True)
        missing = collect(docs)
    data = args.work_dir / "data"
    shutil.rmtree(data, ignore_errors=True)
    overrides: dict[str, Any] = {"data_dir": str(data)}
    if args.mode:
        overrides["backend"] = {"default_mode": args.mode}
    settings = load_settings(env={}, overrides=overrides)
    svc = Services.from_settings(settings)
    svc.warm_up()
    files = sorted(p for p in docs.iterdir() if p.is_file())
    no_text: list[str] = []
    failed: list[str] = []
    t0 = time.perf_counter()
    for path in files:
        try:
            svc.ingestor.ingest_bytes(path.name, path.read_bytes(), Ownership())
        except NoContent:
            no_text.append(path.name)
        except BridgeError as exc:
            failed.append(f"{path.name}: {exc.code}")
    ingest_s = time.perf_counter() - t0
    spec = json.loads(args.questions.read_text(encoding="utf-8"))
    rows: list[dict[str, Any]] = []
    for item in spec["questions"]:
        rows.append({**ask(svc, item["q"]), "expected": item["any"], "file": item["file"]})
    for q in spec["unanswerable"]:
        rows.append({**ask(svc, q), "expected": None})
    answerable = [r for r in rows if r["expected"] is not None]
    for r in answerable:
        hit = any(a.lower() in r["answer"].lower() for a in r["expected"])
        r["verdict"] = "refused" if r["declined"] else ("correct" if hit else "wrong")
        r["first_correct"] = not r["declined"] and any(a.lower() in r["first"].lower() for a in r["expected"])
    for r in rows:
        if r["expected"] is None:
            r["verdict"] = "declined" if r["declined"] else "answered"
        r["chrome"] = bool(not r["declined"] and CHROME.search(r["answer"]))
    n = len(answerable)
    unans = [r for r in rows if r["expected"] is None]
    report = {
        "files": len(files),
        "chunks": svc.backend.count(),
        "ingest_seconds": round(ingest_s, 1),
        "files_without_text": no_text,
        "files_failed": failed,
        "missing_sources": missing,
        "answerable": n,
        "correct": sum(r["verdict"] == "correct" for r in answerable),
        "refused": sum(r["verdict"] == "refused" for r in answerable),
        "wrong": sum(r["verdict"] == "wrong" for r in answerable),
        "unanswerable": len(unans),
        "declined": sum(r["verdict"] == "declined" for r in unans),
        "first_sentence_correct": sum(r.get("first_correct", False) for r in answerable),
        "answers_with_chrome": sum(r["chrome"] for r in rows),
        "turn_ms_p50": sorted(r["ms"] for r in rows)[len(rows) // 2],
        "mode": settings.backend.default_mode,
        "load_average": round(os.getloadavg()[0], 2),
    }
    report["correct_share"] = round(report["correct"] / max(1, n), 3)
    report["refused_share"] = round(report["refused"] / max(1, n), 3)
    report["declined_share"] = round(report["declined"] / max(1, len(unans)), 3)
    if args.show:
        for r in rows:
            print(
                f"[{r['verdict']}{' CHROME' if r['chrome'] else ''}] {r['q']}\n    -> {r['answer'][:300]!r}"
                f"\n    top: {r['top_titles'][:3]}",
                file=sys.stderr,
            )
    report["rows"] = [{k: r[k] for k in ("q", "verdict", "answer", "top_titles", "chrome")} for r in rows]
    svc.backend.close()
    emit(report, args.json)
    return 0


def ask(svc: Services, question: str) -> dict[str, Any]:
    """One ``/message`` turn, as ``assistant-bridge ask`` runs it."""
    from assistant_bridge.conversation.runtime import runtime_for
    from assistant_bridge.conversation.turn import Turn, TurnRequest
    from assistant_bridge.web.auth import ANONYMOUS

    runtime = runtime_for(svc)
    assistant = runtime.assistants.get("default", None)
    t = time.perf_counter()
    result = Turn(
        runtime, assistant, TurnRequest(message_type="text", text=question, debug=True), Scope(principal=ANONYMOUS)
    ).run()
    ms = (time.perf_counter() - t) * 1000
    item = result.generic[0] if result.generic else {}
    answer = str(item.get("text", ""))
    titles = [str(r.get("title", "")) for r in item.get("search_results", [])]
    first = str((item.get("citations") or [{}])[0].get("text", ""))
    declined = result.outcome != "answer"
    return {
        "q": question,
        "answer": answer,
        "first": first,
        "declined": declined,
        "top_titles": titles,
        "ms": round(ms, 1),
    }


if __name__ == "__main__":
    raise SystemExit(main())
