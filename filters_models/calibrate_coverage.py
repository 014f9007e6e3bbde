"""Choose each level's ``pre_gen_low_coverage``: ``python filters_models/calibrate_coverage.py --data /work/shared/data``.

The loop asks a higher pre-generation score of snippets no sentence of which holds half the question's words
(``assistant_bridge.core.loop.LOW_COVERAGE``; the share is
``assistant_bridge.generators.sentences.asked_coverage``). Such passages are about the question's subject but
say nothing of what it asks as often as not: on CLAPNQ-train pairs, a question over another passage of its own
article holds less than half its words in one sentence 74 % of the time, over its answering passage 37 %.

For each level, the threshold is the largest pre-generation score (in steps of 0.005 from the level's
``pre_gen``) whose false "I don't know" rate on the answerable pairs, plus one standard error (there are only
about a hundred of them), stays within the level's target (the ``pre_gen`` targets of ``train_pre.py``). A
level already at its target without the rule gets none. CLAPNQ dev is never read. Run after ``train_pre.py``
(the rule starts from the ``pre_gen`` thresholds it writes); writes the ``pre_gen_low_coverage`` entries of
``thresholds.json`` and prints what they decline on the other pairs.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from datasets import load_clapnq_train_pairs  # noqa: E402
from train_pre import PRE_FALSE_IDK  # noqa: E402

from assistant_bridge.core.loop import LOW_COVERAGE  # noqa: E402
from assistant_bridge.filters.onnx_filters import load_filters  # noqa: E402
from assistant_bridge.generators.sentences import asked_coverage  # noqa: E402

STEP = 0.005
SEED = 0


def pairs(data: Path) -> list[tuple[bool, float, float]]:
    """(answerable, pre-generation score, coverage) of each question over its answering passage and over one
    other passage of its article, drawn with a fixed seed."""
    pre, _ = load_filters()
    pre.warm_up()
    rng = random.Random(SEED)
    out: list[tuple[bool, float, float]] = []
    for qa, others in load_clapnq_train_pairs(data):
        chosen = [(True, qa.context)] if qa.answerable and qa.context else []
        if others:
            chosen.append((False, rng.choice(others)))
        for answerable, text in chosen:
            out.append((answerable, float(pre.score(qa.question, [text])), asked_coverage(qa.question, [text])))
    return out


def threshold(rows: list[tuple[bool, float, float]], pre_gen: float, target: float) -> float | None:
    """The largest low-coverage threshold whose false-IDK rate plus one standard error is within ``target``."""
    answerable = [(p, c) for a, p, c in rows if a]
    found = None
    value = pre_gen
    while value < 1.0:
        refused = sum(p < pre_gen or (c < LOW_COVERAGE and p < value) for p, c in answerable) / len(answerable)
        if refused + math.sqrt(refused * (1.0 - refused) / len(answerable)) > target:
            break
        found = round(value, 3)
        value += STEP
    return found if found is not None and found > pre_gen else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True, help="folder that holds clapnq/")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "thresholds.json")
    args = ap.parse_args(argv)
    rows = pairs(args.data)
    doc = json.loads(args.out.read_text(encoding="utf-8"))
    others = [(p, c) for a, p, c in rows if not a]
    for level, target in PRE_FALSE_IDK.items():
        entry = doc["levels"][level]
        low = threshold(rows, entry["pre_gen"], target)
        entry.pop("pre_gen_low_coverage", None)
        if low is not None:
            entry["pre_gen_low_coverage"] = low
        bar = low if low is not None else entry["pre_gen"]
        before = sum(p < entry["pre_gen"] for p, _ in others) / len(others)
        after = sum(p < entry["pre_gen"] or (c < LOW_COVERAGE and p < bar) for p, c in others) / len(others)
        print(f"{level}: {low} (other passages declined {before:.1%} -> {after:.1%})")
    doc.setdefault("how_chosen", {})["pre_gen_low_coverage"] = (
        f"for a question no sentence of whose snippets holds {LOW_COVERAGE} of its words (core.loop.LOW_COVERAGE): "
        f"the largest pre-generation threshold (steps of {STEP} from the level's pre_gen) whose false-IDK rate on "
        f"CLAPNQ-train pairs (a train question over its answering passage; {sum(a for a, _, _ in rows)} of them), "
        f"plus one standard error, stays within the level's target {PRE_FALSE_IDK}; a level at its target without "
        f"the rule has none. filters_models/calibrate_coverage.py; CLAPNQ dev never used"
    )
    args.out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
