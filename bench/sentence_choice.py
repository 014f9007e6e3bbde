"""Which sentences the extractive generator answers with, on reading-comprehension sets in three languages.

    python bench/sentence_choice.py --data ../shared/data [--questions 1500] [--seed 0] [--param k=v ...]
                                    [--kind all|time|quantity] [--json out.json]

For each answerable question of SQuAD 2.0 (English, ``squad2/``), PIAF (French, ``piaf_fr/``) and JSQuAD
(Japanese, ``jsquad/``), up to ``--questions`` per set in a seeded random order, the generator gets five
snippets: the question's paragraph and up to four other paragraphs of the same article, all under the
article's title. They share the article's subject and words, as the passages a search returns for a question
do. The question's paragraph comes first in 60 % of the questions, second in 20 % and third to fifth
otherwise, roughly where dense search puts the answering passage.

The answer is the product's own :meth:`~assistant_bridge.generators.extractive.ExtractiveGenerator.generate`
(its default settings and the USE sentence encoder; ``--param key=value`` overrides one
setting, the value read as JSON; ``--kind time`` or ``quantity`` keeps only the questions that ask when or for a
number, as the generator reads them). Reported per set:

* ``best_sentence``: the ``concise`` answer (the one sentence the generator scores best) holds a reference
  answer (the span that answers);
* ``right_passage``: that sentence comes from the question's paragraph;
* ``in_answer``: some sentence of the ``moderate`` answer (up to three) holds a reference answer;
* the same three for the questions whose paragraph came first (``…_when_first``), where the search did its
  part and only the choice of sentence can fail.

A question counts only when one of its reference answers lies inside a single sentence of its paragraph as
the generator cuts it (otherwise no sentence can hold it). None of these sets was used to choose the
generator's weights (they were chosen on CLAPNQ and on the real-documents ``dev`` split), so the figures
are held out. SQuAD questions reuse the paragraph's words more than the others, PIAF's the least.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant_bridge.core.snippets import Snippet  # noqa: E402
from assistant_bridge.generators import make_generator  # noqa: E402
from assistant_bridge.generators.sentences import asks_time, candidates  # noqa: E402
from assistant_bridge.text import asks_quantity  # noqa: E402
from bench._common import emit, generator_params  # noqa: E402

SETS = {
    "squad2-en": "squad2/cs224n_dev-v2.0_half_official_dev.json",
    "piaf-fr": "piaf_fr/piaf-v1.0.json",
    "jsquad-ja": "jsquad/jsquad_valid-v1.3.json",
}
#: where the question's paragraph goes among the five snippets: (cumulative share, position)
PLACES = ((0.6, 0), (0.8, 1))


#: ``--kind``: which questions to keep, by what they ask for (the generator's own tests)
KINDS: dict[str, Callable[[str], bool]] = {
    "all": lambda q: True,
    "time": lambda q: asks_time(q) and not asks_quantity(q),
    "quantity": asks_quantity,
}


def items(path: Path, limit: int, rng: random.Random, kind: str = "all") -> list[dict[str, Any]]:
    """``limit`` answerable questions of ``kind`` with five snippets each, the question's paragraph at a random
    place."""
    data = json.loads(path.read_text(encoding="utf-8"))
    pool = []
    for article in data["data"]:
        paragraphs = [p["context"] for p in article["paragraphs"]]
        for i, paragraph in enumerate(article["paragraphs"]):
            for qa in paragraph["qas"]:
                answers = sorted({a["text"].strip() for a in qa.get("answers", ()) if a["text"].strip()})
                if answers and not qa.get("is_impossible") and KINDS[kind](qa["question"]):
                    pool.append((article.get("title", ""), paragraphs, i, qa["question"], answers))
    rng.shuffle(pool)
    out = []
    for title, paragraphs, i, question, answers in pool:
        gold = Snippet(text=paragraphs[i], title=title, result_index=0)
        if not any(any(a in c.text for a in answers) for c in candidates([gold])):
            continue  # the answer spans two sentences: no sentence can hold it
        others = [j for j in range(len(paragraphs)) if j != i]
        rng.shuffle(others)
        others = others[:4]
        draw = rng.random()
        place = next((p for share, p in PLACES if draw < share), rng.randint(2, 4))
        place = min(place, len(others))
        order = others[:place] + [i] + others[place:]
        snippets = [Snippet(text=paragraphs[j], title=title, result_index=k) for k, j in enumerate(order)]
        out.append({"question": question, "answers": answers, "snippets": snippets, "gold": place})
        if len(out) == limit:
            break
    return out


def score(generator: Any, rows: list[dict[str, Any]]) -> dict[str, Any]:
    counts = {"best_sentence": 0, "right_passage": 0, "in_answer": 0}
    first = {f"{k}_when_first": 0 for k in counts}
    n_first = 0
    t0 = time.perf_counter()
    for row in rows:
        best = generator.generate(row["question"], row["snippets"], "concise").citations
        cites = generator.generate(row["question"], row["snippets"], "moderate").citations
        hit = {
            "best_sentence": bool(best) and any(a in best[0].text for a in row["answers"]),
            "right_passage": bool(best) and best[0].search_result_index == row["gold"],
            "in_answer": any(a in c.text for c in cites for a in row["answers"]),
        }
        for key, value in hit.items():
            counts[key] += value
            if row["gold"] == 0:
                first[f"{key}_when_first"] += value
        n_first += row["gold"] == 0
    n = max(1, len(rows))
    return {
        "questions": len(rows),
        **{k: round(v / n, 3) for k, v in counts.items()},
        "questions_first": n_first,
        **{k: round(v / max(1, n_first), 3) for k, v in first.items()},
        "ms_per_question": round((time.perf_counter() - t0) * 1000 / n, 1),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True, help="the folder that holds squad2/, piaf_fr/, jsquad/")
    ap.add_argument("--questions", type=int, default=1500, help="questions per set")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--kind",
        choices=sorted(KINDS),
        default="all",
        help="only the questions that ask when (time) or for a number (quantity), as the generator reads them",
    )
    ap.add_argument("--param", action="append", default=[], help="a generator setting, key=value (JSON value)")
    ap.add_argument("--json")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    options = generator_params(args.param)
    generator = make_generator("extractive", **options)
    generator.warm_up()
    report: dict[str, Any] = {
        "generator": generator.model,
        "params": options,
        "seed": args.seed,
        "kind": args.kind,
        "sets": {},
    }
    for name, rel in SETS.items():
        rows = items(args.data / rel, args.questions, random.Random(args.seed), args.kind)
        report["sets"][name] = score(generator, rows)
        print(name, json.dumps(report["sets"][name]), file=sys.stderr, flush=True)
    emit(report, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
