"""Fetch the pages of Python's library reference that ``bench/data/api_docs_questions.json`` asks about.

An API reference is a kind of documentation the real-documents corpus (``bench/real_docs.py``) lacks: Sphinx
HTML whose functions are defined by their signatures (``shutil.which(cmd, mode=os.F_OK | os.X_OK, path=None)``)
and whose tables write each cell as a paragraph. The pages come from Debian's ``python3.11-doc`` (``apt-get
download``, unpacked with ``dpkg-deb -x``: nothing is installed; a fresh machine needs ``apt-get update`` once,
as root), copied as ``python-library-<module>.html``::

    python bench/api_docs.py --out DOCS            # DOCS: a new folder, or the real-documents corpus's folder
    python bench/real_docs.py --docs DOCS --work-dir W --questions bench/data/api_docs_questions.json

The second command is the real-documents benchmark's own: it ingests the folder and reports correct / refused /
wrong and declined per split (``api-dev``, read while the reference's handling was built; ``api-held``, written
before it and read only after; see the questions file's ``about``). Put the pages in the real-documents corpus's
folder to ask them among its 192 documents, as docs/benchmarks.md reports them.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._common import unpack_deb  # noqa: E402

QUESTIONS = Path(__file__).resolve().parent / "data" / "api_docs_questions.json"
PACKAGE = "python3.11-doc"
LIBRARY = "usr/share/doc/python3.11/html/library"


def pages() -> list[str]:
    """The file names the questions name (``python-library-json.html``…), in order."""
    spec = json.loads(QUESTIONS.read_text(encoding="utf-8"))
    return sorted({item["file"] for item in spec["questions"]})


def collect(out: Path, cache: Path) -> list[str]:
    """Copy the pages into ``out`` (the package kept in ``cache``); returns what could not be fetched or found."""
    debs, root = cache / "debs", cache / "root"
    debs.mkdir(parents=True, exist_ok=True)
    if not unpack_deb(PACKAGE, debs, root):
        return [f"deb {PACKAGE} (apt-get download failed: run 'apt-get update' once?)"]
    out.mkdir(parents=True, exist_ok=True)
    missing = []
    for name in pages():
        src = root / LIBRARY / (name.removeprefix("python-library-"))
        if src.is_file():
            shutil.copyfile(src, out / name)
        else:
            missing.append(str(src))
    return missing


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True, help="the folder the pages are copied into")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/ab-api-docs"), help="where the package is kept")
    args = ap.parse_args()
    missing = collect(args.out, args.cache)
    for m in missing:
        print(f"missing: {m}", file=sys.stderr)
    print(f"{len(pages()) - len(missing)} pages in {args.out}")
    return 1 if missing else 0


if __name__ == "__main__":
    raise SystemExit(main())
