"""The extractive generator replayed on the real-documents questions' passages: settings compared, weights fitted.

    python bench/sentence_weights.py --work-dir W [--questions FILE] [--held-out fresh21,fresh22,...]
                                     [--leave-out fresh35] [--param KEY=VALUE ...] [--fit [--l2 10]]
                                     [--json out.json]

``W`` is a work directory where ``bench/real_docs.py --work-dir W`` has ingested its corpus (its ``data``). Each
answerable question is asked once as ``bench/real_docs.py`` asks it (a ``/message`` turn with the debug trace),
and the passages the generator got (a refused turn's trace keeps the ones it would have got) are cached in
``W/generator-snippets.pkl`` (delete it after changing the search or the index). A question whose passages
hold none of its answer strings is left out: no choice of sentences can answer it.

Then the generator alone answers each question from its cached passages, with its default settings and, given
``--param`` (a key of the generator table, the value read as JSON), with those changed; reported for the
training splits and the held-out ones (``--held-out``; by default the newest third of the splits, in the
question file's order; ``--leave-out`` splits are in neither): ``best_sentence``, the share of questions whose
best-scored sentence holds an answer string (``bench.real_docs.holds``), and ``answer``, the share whose
``moderate`` answer does — the real-documents benchmark's ``correct`` for the questions the filters let through,
in a minute instead of a run of the whole loop.

``--fit``: the score is linear in the weights of :class:`~assistant_bridge.generators.extractive.Tuning` (the
coverage of the query's terms weighs 1, a label or short line −10; the parts are ``_Scored.features``): the fit
maximises the softmax likelihood of the sentences that hold an answer, per training question, with an L2 pull
(``--l2``) toward the current weights, the weights kept non-negative (Adam, in numpy), and the fitted weights
are reported and replayed like ``--param``.
"""

from __future__ import annotations

import argparse
import json
import logging
import pickle
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant_bridge.generators import make_generator  # noqa: E402
from assistant_bridge.generators.extractive import ExtractiveGenerator, Tuning  # noqa: E402
from bench._common import emit, generator_params  # noqa: E402
from bench.real_docs import QUESTIONS, holds  # noqa: E402

# the weighed parts of the score, each with the Tuning field that weighs it
WEIGHTS = {
    "entry": "w_entry",
    "cosine": "w_embed",
    "heading": "w_heading",
    "number": "w_number",
    "phrase": "w_phrase",
    "define": "w_define",
    "code_name": "w_code_name",
    "option": "w_option",
    "name": "w_name",
    "position": "w_position",
    "rank": "w_rank",
    "fragment": "fragment_penalty",
    "off_page": "w_off_page",
    "similarity_gap": "w_similarity_gap",
}


def passages(work: Path, questions: Path) -> list[dict[str, Any]]:
    """Per answerable question whose passages hold an answer: the question, its split, its answer strings and
    the passages the loop gave the generator."""
    from assistant_bridge.conversation.runtime import runtime_for
    from assistant_bridge.conversation.turn import Turn, TurnRequest
    from assistant_bridge.domain import Scope
    from assistant_bridge.services import Services
    from assistant_bridge.settings import load_settings
    from assistant_bridge.web.auth import ANONYMOUS

    svc = Services.from_settings(load_settings(env={}, overrides={"data_dir": str(work / "data")}))
    svc.warm_up()
    runtime = runtime_for(svc)
    assistant = runtime.assistants.get("default", None)
    rows = []
    for item in json.loads(questions.read_text(encoding="utf-8"))["questions"]:
        request = TurnRequest(message_type="text", text=item["q"], debug=True)
        turn = Turn(runtime, assistant, request, Scope(principal=ANONYMOUS))
        result = turn.run()
        outcome = turn.trace.outcome_obj if turn.trace is not None else None
        snippets = list(getattr(outcome, "snippets_used", ()) or ())
        if any(holds(s.text, a) for s in snippets for a in item["any"]):
            rows.append({**item, "snippets": snippets, "answered": result.outcome == "answer"})
    svc.backend.close()
    return rows


def features(generator: ExtractiveGenerator, row: dict[str, Any]) -> dict[str, Any]:
    """The candidate sentences' feature matrix (columns in :data:`WEIGHTS` order), the unweighed part of their
    scores, their labels (holds an answer) and their scores."""
    scored = generator._scored(row["q"], row["snippets"])  # noqa: SLF001  (the parts of the score)
    n = len(scored.cands)
    f = {**scored.features}
    f["cosine"] = f.get("cosine", np.zeros(n))
    f["similarity_gap"] = f["similarity_gap"] * (1.0 - f["gap_exempt"])
    unusable = f["unusable"] if not f["unusable"].all() else np.zeros(n)
    return {
        "x": np.stack([f[k] for k in WEIGHTS], axis=1),
        "fixed": f["coverage"] - 10.0 * unusable,
        "y": np.array([any(holds(c.text, a) for a in row["any"]) for c in scored.cands], dtype=bool),
        "scores": scored.scores,
    }


def replay(generator: ExtractiveGenerator, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """``best_sentence`` and ``answer`` (see the module's docstring) over ``rows``, and the questions whose answer
    holds no answer string (``missed``)."""
    best = answer = 0
    missed = []
    for row in rows:
        scored = generator._scored(row["q"], row["snippets"])  # noqa: SLF001
        if scored.cands:
            top = scored.cands[int(np.argmax(scored.scores))]
            best += any(holds(top.text, a) for a in row["any"])
        text = generator.generate(row["q"], row["snippets"], "moderate").text
        if any(holds(text, a) for a in row["any"]):
            answer += 1
        else:
            missed.append(row["q"])
    n = max(1, len(rows))
    return {"best_sentence": round(best / n, 4), "answer": round(answer / n, 4), "missed": missed}


def fit(rows: list[dict[str, Any]], w0: np.ndarray, l2: float, steps: int = 3000, lr: float = 0.01) -> np.ndarray:
    """Weights maximising the softmax likelihood of the answer-holding sentences (see the module's docstring)."""
    params = np.append(w0, np.log(10.0))  # the weights, and the log of the softmax's inverse temperature
    m, v = np.zeros_like(params), np.zeros_like(params)
    scale = np.maximum(w0, 0.05)
    for step in range(1, steps + 1):
        w, t = params[:-1], float(np.exp(params[-1]))
        grad = np.zeros_like(params)
        for r in rows:
            s = r["x"] @ w + r["fixed"]
            z = t * s
            p = np.exp(z - z.max())
            p /= p.sum()
            q = np.where(r["y"], p, 0.0)
            q /= q.sum()
            dz = p - q
            grad[:-1] += t * (r["x"].T @ dz)
            grad[-1] += t * float(s @ dz)
        grad /= len(rows)
        grad[:-1] += 2 * l2 * (w - w0) / scale**2 / len(rows)
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad**2
        params -= lr * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
        params[:-1] = np.maximum(params[:-1], 0.0)
    return params[:-1]


def _extractive(**params: Any) -> ExtractiveGenerator:
    generator = make_generator("extractive", **params)
    assert isinstance(generator, ExtractiveGenerator)
    return generator


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work-dir", type=Path, required=True)
    ap.add_argument("--questions", type=Path, default=QUESTIONS)
    ap.add_argument("--held-out", help="comma-separated splits to report on apart (default: the newest third)")
    ap.add_argument("--leave-out", default="", help="comma-separated splits in neither group")
    ap.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--fit", action="store_true")
    ap.add_argument("--l2", type=float, default=10.0)
    ap.add_argument("--json")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    cache = args.work_dir / "generator-snippets.pkl"
    if cache.exists():
        rows = pickle.loads(cache.read_bytes())
    else:
        rows = passages(args.work_dir, args.questions)
        cache.write_bytes(pickle.dumps(rows))
    left_out = set(filter(None, args.leave_out.split(",")))
    rows = [r for r in rows if r["split"] not in left_out]
    splits = list(dict.fromkeys(r["split"] for r in rows))
    held = set(args.held_out.split(",")) if args.held_out else set(splits[-len(splits) // 3 :])
    groups = {"train": [r for r in rows if r["split"] not in held], "held_out": [r for r in rows if r["split"] in held]}
    default = _extractive()
    configs: dict[str, dict[str, Any]] = {"default": {}}
    if args.param:
        configs["param"] = generator_params(args.param)
    report: dict[str, Any] = {
        "questions": {k: len(v) for k, v in groups.items()},
        "held_out_splits": sorted(held),
        "left_out_splits": sorted(left_out),
    }
    if args.fit:
        current = asdict(Tuning())
        w0 = np.array([current[name] for name in WEIGHTS.values()])
        train = [features(default, r) for r in groups["train"]]
        report["score_reproduced_within"] = max(
            float(np.abs(r["x"] @ w0 + r["fixed"] - r["scores"]).max()) for r in train
        )
        w = fit(train, w0, args.l2)
        configs["fitted"] = {name: round(float(x), 4) for name, x in zip(WEIGHTS.values(), w, strict=True)}
    for name, params in configs.items():
        generator = default if not params else _extractive(**params)
        report[name] = {"settings": params, **{k: replay(generator, v) for k, v in groups.items()}}
    emit(report, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
