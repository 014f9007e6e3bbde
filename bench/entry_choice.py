"""Which option entry the search's entry step takes first, on the real-documents benchmark's option questions.

    python bench/entry_choice.py --work-dir /tmp/ab-real-docs [--questions bench/data/real_docs_questions.json]
                                 [--word-weight 0.03] [--json out.json]

Reads the index that ``bench/real_docs.py --work-dir DIR`` left in ``DIR/data`` (run it first; nothing is
ingested here). For each answerable question whose file has option entries (:func:`~assistant_bridge.text.
option_entries`) and whose answer strings name one of them (an option such as ``-S`` or ``--size``), it ranks
the file's entries as :meth:`~assistant_bridge.services.Services.with_option_entry` does: the embedder's cosine
of the question with each entry's cached vector, plus ``--word-weight`` times the share of the question's words
the entry holds (:func:`~assistant_bridge.generators.sentences.entry_word_share`). Reported per split and in
all: how many questions have the right entry first, as the product embeds entries now (their heads,
:func:`~assistant_bridge.text.entry_head`) and as whole entries (``whole``, embedded here when not cached).
The entry step runs only when the question names the page and an entry is as close as the passages found; this
measures the choice alone, as if it always ran.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant_bridge.generators.sentences import entry_word_share, terms  # noqa: E402
from assistant_bridge.services import OPTION_ENTRY_WORD_WEIGHT, Services  # noqa: E402
from assistant_bridge.settings import load_settings  # noqa: E402
from assistant_bridge.text import entry_term, manual_page_name, option_entries  # noqa: E402
from bench._common import emit  # noqa: E402


def gold_entries(answers: list[str], terms_: list[str]) -> list[int]:
    """The entries whose term names one of the options among ``answers``."""
    options = [a for a in answers if a.startswith("-")]
    return [
        i
        for i, term in enumerate(terms_)
        if any(re.search(r"(?:^|[\s,])" + re.escape(o) + r"(?:$|[\s,=\[:])", term) for o in options)
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work-dir", type=Path, required=True, help="the --work-dir of a bench/real_docs.py run")
    ap.add_argument("--questions", type=Path, default=Path(__file__).parent / "data" / "real_docs_questions.json")
    ap.add_argument("--word-weight", type=float, default=OPTION_ENTRY_WORD_WEIGHT)
    ap.add_argument("--json")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    svc = Services.from_settings(load_settings(env={}, overrides={"data_dir": str(args.work_dir / "data")}))
    by_file = {}
    for row in svc.store.list_documents():
        doc = svc.store.get_document(row.id)
        if doc is not None:
            by_file[doc.filename] = doc
    spec = json.loads(args.questions.read_text(encoding="utf-8"))
    pages: dict[str, Any] = {}
    counts: dict[str, dict[str, int]] = defaultdict(lambda: {"questions": 0, "heads": 0, "whole": 0})
    for item in spec["questions"]:
        doc = by_file.get(item.get("file"))
        spans = option_entries(doc.text) if doc is not None else []
        if doc is None or not spans:
            continue
        texts = [doc.text[a:b] for a, b in spans]
        gold = gold_entries(item["any"], [entry_term(t) for t in texts])
        if not gold:
            continue
        if doc.id not in pages:
            cached = svc.ingestor.cached_entries(doc.title, doc.text, spans)
            if len(cached) < len(spans):
                svc.ingestor.embed_entries(doc.title, doc.text, spans)
                cached = svc.ingestor.cached_entries(doc.title, doc.text, spans)
            heads = np.vstack([cached[i] for i in range(len(spans))])
            whole = svc.embedder.embed_passages([f"{doc.title}. {t}" for t in texts])
            pages[doc.id] = (heads, whole, [frozenset(terms(t)) for t in texts])
        heads, whole, held = pages[doc.id]
        query = svc.embedder.embed_queries([item["q"]])[0]
        share = entry_word_share(item["q"], manual_page_name(doc.title) or "", held)
        for split in (item["split"], "all"):
            counts[split]["questions"] += 1
            for name, vectors in (("heads", heads), ("whole", whole)):
                counts[split][name] += int(int(np.argmax(vectors @ query + args.word_weight * share)) in gold)
    emit({"word_weight": args.word_weight, "right_entry_first": dict(sorted(counts.items()))}, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
