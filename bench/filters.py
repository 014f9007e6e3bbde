"""Benchmark of the shipped pre-/post-generation filters: ``python bench/filters.py --data /work/shared/data``.

Reports, for the ONNX files in ``--model-dir`` (default: ``filters_models/``) and ``thresholds.json``:

1. CLAPNQ dev, gold setting (the question with its own passage; 150 answerable, 153 unanswerable): ROC AUC
   of the pre-filter, and per level the Un-ans% (unanswerable questions that get "I don't know") and the
   false-IDK% (answerable questions that get it), for the pre-filter alone and for pre + post with a simple
   extractive answer (the two passage sentences that cover most query words). Baseline: USE cosine of the
   question with the whole passage.
2. Pre-filter ROC AUC on the held-out articles of PIAF (fr) and JSQuAD (ja) with constructed negatives (the
   question paired with another article's passage), and on SQuAD 2.0 held-out articles; only the questions
   of held-out part B (part A fitted the pre-filter's combining classifier).
3. Post-filter ROC AUC on the held-out part of the constructed supported / unsupported answer set.
4. Latency per turn (pre + post, five snippets, every cache of the filters and of the dense model emptied
   before each turn, as for a question never seen): p50 / p90 over ``--turns`` turns, wall
   clock and process CPU time (the machine's load average is printed too: on a busy shared machine the wall
   clock mostly measures waiting for a core).
5. Added cost per turn: the same conversational-search turns (``core.loop``, the shipped extractive generator
   sharing the filters' sentence encoder, as a deployment does) with the filters at the default level and
   without any, interleaved (the order alternates), every cache emptied before each run. The difference is what
   the filters add to a turn: the generator reuses the sentence vectors the pre-filter computed, and a turn the
   pre-filter declines does not generate. Reported over all turns and over the turns answered with the filters.

Nothing here is used for training or for choosing thresholds.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "filters_models"))

from assistant_bridge.filters import DEFAULT_LEVEL, LEVELS, load_filters, load_thresholds  # noqa: E402
from assistant_bridge.filters import frozen_text as tx  # noqa: E402
from assistant_bridge.filters.encoder import UseEncoder  # noqa: E402


def auc(y: list[int], s: list[float]) -> float:
    """Mann-Whitney ROC AUC (ties count one half); no scikit-learn needed."""
    pos = [v for v, t in zip(s, y, strict=True) if t == 1]
    neg = [v for v, t in zip(s, y, strict=True) if t == 0]
    if not pos or not neg:
        return float("nan")
    order = sorted(pos + neg)
    rank: dict[float, float] = {}
    i = 0
    while i < len(order):
        j = i
        while j < len(order) and order[j] == order[i]:
            j += 1
        rank[order[i]] = (i + j + 1) / 2
        i = j
    return (sum(rank[v] for v in pos) - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))


def extractive_answer(query: str, snippets: list[str], k: int = 2) -> str:
    """The ``k`` snippet sentences that cover most query words, in passage order (a stand-in generator)."""
    terms = set(tx.content_tokens(query))
    sents = [s for snip in snippets for s in tx.split_sentences(tx.clip(snip, tx.MAX_SNIPPET_CHARS))]
    if not sents:
        return ""
    scored = sorted(range(len(sents)), key=lambda i: (-len(terms & set(tx.content_tokens(sents[i]))), i))[:k]
    return " ".join(sents[i] for i in sorted(scored))


def at_threshold(y: list[int], s: list[float], t: float) -> tuple[float, float]:
    neg = [v for v, lab in zip(s, y, strict=True) if lab == 0]
    pos = [v for v, lab in zip(s, y, strict=True) if lab == 1]
    return 100 * sum(v < t for v in neg) / len(neg), 100 * sum(v < t for v in pos) / len(pos)


def sample(items: list, n: int, seed: int = 7) -> list:
    return items if len(items) <= n else random.Random(seed).sample(items, n)


def _empty_caches(pre: object) -> None:
    """Every cache a turn of the pre-filter reads: the sentence encoder's (shared with the post-filter), the
    cross-encoder's logits and window selections, the dense similarity's vectors and its model's queries."""
    parts = [getattr(pre, name, None) for name in ("_encoder", "_cross", "_dense")]
    parts.append(getattr(parts[2], "embedder", None))
    for part in parts:
        for name in ("_cache", "_selections", "_queries"):
            cache = getattr(part, name, None)
            if cache is not None:
                cache.clear()


def added_cost(pre: Any, post: Any, dev: list[Any], pool: list[str], rnd: random.Random, turns: int) -> dict[str, Any]:
    """Section 5: turn time with the filters minus without, same turns, interleaved, caches emptied."""
    from assistant_bridge.core.loop import Answer, run_conversational_search
    from assistant_bridge.core.results import SearchResult
    from assistant_bridge.generators import make_generator
    from bench.clapnq import load_filter_set

    level = load_thresholds(DEFAULT_LEVEL)
    generator = make_generator("extractive", embedder=pre._encoder)  # noqa: SLF001 - shared, as deployed
    generator.warm_up()
    passing, _, no_thresholds, _, _ = load_filter_set("none", DEFAULT_LEVEL)
    added: list[float] = []
    added_answered: list[float] = []
    times: dict[str, list[float]] = {"with": [], "without": []}
    for i, q in enumerate(rnd.sample(dev, min(turns, len(dev)))):
        texts = [q.context] + rnd.sample(pool, 4)
        results = [SearchResult(title=f"passage {k}", body=t, id=f"p{k}") for k, t in enumerate(texts)]
        took: dict[str, float] = {}
        answered = False
        for name in ("with", "without") if i % 2 else ("without", "with"):
            _empty_caches(pre)
            t0 = time.perf_counter()
            if name == "with":
                outcome = run_conversational_search(
                    q.question, results, prefilter=pre, postfilter=post, generator=generator, thresholds=level
                )
                answered = isinstance(outcome, Answer)
            else:
                run_conversational_search(
                    q.question,
                    results,
                    prefilter=passing,
                    postfilter=passing,
                    generator=generator,
                    thresholds=no_thresholds,
                )
            took[name] = 1000 * (time.perf_counter() - t0)
            times[name].append(took[name])
        added.append(took["with"] - took["without"])
        if answered:
            added_answered.append(took["with"] - took["without"])
    return {
        "with_filters_p50": round(statistics.median(times["with"]), 1),
        "without_filters_p50": round(statistics.median(times["without"]), 1),
        "added_p50": round(statistics.median(added), 1),
        "added_p50_answered_turns": round(statistics.median(added_answered), 1) if added_answered else None,
        "turns": len(added),
        "answered_turns": len(added_answered),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--model-dir", type=Path, default=None)
    ap.add_argument("--max-items", type=int, default=1500, help="cap per held-out set (fixed seed)")
    ap.add_argument("--turns", type=int, default=60)
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = ap.parse_args()

    import datasets
    import post_sets
    import pre_sets

    pre, post = load_filters(args.model_dir)
    pre.warm_up()
    post.warm_up()
    levels = {lvl: load_thresholds(lvl, args.model_dir) for lvl in LEVELS}
    report: dict[str, object] = {}

    # 1. CLAPNQ dev, gold setting
    dev = datasets.load_clapnq_dev(args.data)
    y = [int(q.answerable) for q in dev]
    s_pre = [pre.score(q.question, [q.context]) for q in dev]
    answers = [extractive_answer(q.question, [q.context]) for q in dev]
    s_post = [post.score(q.question, [q.context], a) for q, a in zip(dev, answers, strict=True)]
    enc = UseEncoder()
    qv = enc.encode([q.question for q in dev])
    pv = enc.encode([q.context for q in dev])
    base = [float(a @ b) for a, b in zip(qv, pv, strict=True)]
    base_t = sorted(v for v, lab in zip(base, y, strict=True) if lab == 1)[int(0.15 * sum(y))]
    clap: dict[str, object] = {
        "n_answerable": sum(y),
        "n_unanswerable": len(y) - sum(y),
        "pre_auc": round(auc(y, s_pre), 4),
        "baseline_use_whole_passage_auc": round(auc(y, base), 4),
        "baseline_un_ans_at_false_idk_15": round(at_threshold(y, base, base_t)[0], 1),
        "levels": {},
    }
    for lvl, t in levels.items():
        un, fi = at_threshold(y, s_pre, t.pre_gen)
        both = [min(p / max(t.pre_gen, 1e-9), q / max(t.post_gen, 1e-9)) for p, q in zip(s_pre, s_post, strict=True)]
        un2, fi2 = at_threshold(y, both, 1.0)
        clap["levels"][lvl] = {  # type: ignore[index]
            "pre_gen": t.pre_gen,
            "post_gen": t.post_gen,
            "pre_only": {"un_ans_pct": round(un, 1), "false_idk_pct": round(fi, 1)},
            "pre_and_post": {"un_ans_pct": round(un2, 1), "false_idk_pct": round(fi2, 1)},
        }
    report["clapnq_gold"] = clap

    # 2. pre-filter on held-out constructed negatives
    pre_report: dict[str, object] = {}
    for name, loader, lang in (
        ("piaf", datasets.load_piaf, "fr"),
        ("jsquad", datasets.load_jsquad, "ja"),
        ("squad2", datasets.load_squad2, "en"),
    ):
        # held-out articles, part B only: part A fitted the classifier that combines the cross-encoder's scores
        ex = [
            e
            for e in pre_sets.squad_like_examples(loader(args.data), name, lang)
            if e.split == "heldout" and datasets.combiner_part(e.query) == "B"
        ]
        for kinds, label in (
            (("gold", "other_article"), "other_article"),
            (("gold", "same_article"), "same_article"),
            (("gold", "squad_unans"), "squad_unans"),
        ):
            sel = sample([e for e in ex if e.kind in kinds], args.max_items)
            if len({e.label for e in sel}) < 2:
                continue
            sc = [pre.score(e.query, e.snippets) for e in sel]
            pre_report[f"{name}/{label}"] = {"auc": round(auc([e.label for e in sel], sc), 4), "n": len(sel)}
    report["pre_heldout"] = pre_report

    # 3. post-filter on the held-out constructed answers
    post_ex = sample([e for e in post_sets.build(args.data) if e.split == "heldout"], args.max_items * 3)
    sc = [post.score(e.query, e.snippets, e.answer) for e in post_ex]
    yy = [e.label for e in post_ex]
    post_report: dict[str, object] = {"all": {"auc": round(auc(yy, sc), 4), "n": len(post_ex)}}
    for lang in ("en", "fr", "ja"):
        idx = [i for i, e in enumerate(post_ex) if e.lang == lang]
        post_report[lang] = {"auc": round(auc([yy[i] for i in idx], [sc[i] for i in idx]), 4), "n": len(idx)}
    for kind in sorted({e.kind for e in post_ex if e.label == 0}):
        idx = [i for i, e in enumerate(post_ex) if e.label == 1 or e.kind == kind]
        post_report[f"vs_{kind}"] = {"auc": round(auc([yy[i] for i in idx], [sc[i] for i in idx]), 4)}
    report["post_heldout"] = post_report

    # 4. latency per turn: five snippets (gold passage + four other CLAPNQ passages), cold encoder cache
    rnd = random.Random(3)
    pool = [q.context for q in dev]
    times: list[float] = []
    cpu: list[float] = []
    chars: list[int] = []
    encoder = pre._encoder  # noqa: SLF001 - the bench clears the shared cache to time cold turns
    model = getattr(encoder, "_model", None)
    counted: list[int] = [0]
    if model is not None:  # count the characters that reach the network (cache misses only)
        raw_encode = model.encode
        model.encode = lambda texts: (counted.__setitem__(0, counted[0] + sum(map(len, texts))), raw_encode(texts))[1]
    for q in rnd.sample(dev, min(args.turns, len(dev))):
        snippets = [q.context] + rnd.sample(pool, 4)
        _empty_caches(pre)
        answer = extractive_answer(q.question, snippets)
        counted[0] = 0
        t0, c0 = time.perf_counter(), time.process_time()
        pre.score(q.question, snippets)
        post.score(q.question, snippets, answer)
        times.append(1000 * (time.perf_counter() - t0))
        cpu.append(1000 * (time.process_time() - c0))
        chars.append(counted[0])
    times.sort()
    cpu.sort()
    report["latency_ms_per_turn"] = {
        "wall_p50": round(statistics.median(times), 1),
        "wall_p90": round(times[int(0.9 * (len(times) - 1))], 1),
        "cpu_p50": round(statistics.median(cpu), 1),
        "cpu_p90": round(cpu[int(0.9 * (len(cpu) - 1))], 1),
        "turns": len(times),
        "encoded_chars_p50": int(statistics.median(chars)),
    }
    report["added_ms_per_turn"] = added_cost(pre, post, dev, pool, rnd, args.turns)
    with open("/proc/loadavg", encoding="ascii") as fh:
        report["load_average_1m"] = float(fh.read().split()[0])

    print(json.dumps(report, indent=1, ensure_ascii=False))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
