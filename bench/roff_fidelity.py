"""How close the built-in reading of manual page sources is to ``man``'s own rendering.

    python bench/roff_fidelity.py /usr/share/man/man1/*.gz [--sample 300] [--json out.json]

For each page (a roff source, gzip-compressed or not), the text the service indexes when it reads the source
itself (:func:`assistant_bridge.ingest.parsers.parse_file`) is compared with the text it indexes from the
same page rendered by ``man -l page | col -bx`` (80 columns, a UTF-8 locale; ``man-db`` and ``groff`` must be
installed): the share of words (CJK: characters) in common (multiset overlap over the union, 1.0 = the same words), and the
number of paragraphs of each. Pages that ``man`` cannot render (it prints nothing) are counted apart.
Reported: the mean and the 10th percentile of the overlap, and the pages with the lowest.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import re
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant_bridge.errors import BridgeError  # noqa: E402
from assistant_bridge.ingest.manpage import is_man_page, man_to_text  # noqa: E402
from assistant_bridge.ingest.parsers import parse_file  # noqa: E402
from bench._common import emit  # noqa: E402

# words; each CJK character alone (a rendered Japanese page has spaces where its lines were wrapped)
_WORD = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]|[^\W\u3040-\u30ff\u3400-\u9fff]+")


def overlap(a: str, b: str) -> float:
    wa, wb = collections.Counter(_WORD.findall(a)), collections.Counter(_WORD.findall(b))
    return sum((wa & wb).values()) / max(1, sum((wa | wb).values()))


def rendered(page: Path) -> str:
    proc = subprocess.run(
        f"man -l '{page}' | col -bx",
        shell=True,
        capture_output=True,
        text=True,
        env={**os.environ, "MANWIDTH": "80", "LC_ALL": "C.UTF-8"},
        check=False,
        timeout=60,
    )
    return proc.stdout if proc.returncode == 0 else ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pages", nargs="+", type=Path)
    ap.add_argument("--sample", type=int, default=0, help="a random sample of this many pages (fixed seed)")
    ap.add_argument("--json")
    args = ap.parse_args()
    pages = sorted(args.pages)
    if args.sample and len(pages) > args.sample:
        pages = sorted(random.Random(7).sample(pages, args.sample))
    rows: list[dict[str, Any]] = []
    man_failed: list[str] = []
    unreadable: list[str] = []
    for page in pages:
        try:
            ours = parse_file(page.name, page.read_bytes()).text
        except BridgeError as exc:
            unreadable.append(f"{page}: {exc}")
            continue
        ref = rendered(page)
        if not is_man_page(ref):
            man_failed.append(str(page))
            continue
        theirs = man_to_text(ref)[0]
        rows.append(
            {
                "page": str(page),
                "overlap": round(overlap(ours, theirs), 4),
                "paragraphs": len(ours.split("\n\n")),
                "paragraphs_man": len(theirs.split("\n\n")),
            }
        )
    scores = sorted(r["overlap"] for r in rows)
    report = {
        "pages": len(pages),
        "compared": len(rows),
        "man_rendered_nothing": len(man_failed),
        "unreadable": unreadable,
        "overlap_mean": round(statistics.fmean(scores), 4) if scores else None,
        "overlap_p10": scores[len(scores) // 10] if scores else None,
        "lowest": sorted(rows, key=lambda r: r["overlap"])[:10],
    }
    emit(report, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
