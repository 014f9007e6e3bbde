"""Train the post-generation filter: ``python filters_models/train_post.py --data /work/shared/data``.

Writes ``post_filter.onnx``, the ``post_gen`` entries of ``thresholds.json``, ``post_metrics.json`` and
``post_curves.png`` next to this file. Deterministic: fixed splits (see ``datasets.py``) and seeds.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402
import post_sets  # noqa: E402

from assistant_bridge.filters.features import POST_FEATURES, POST_VERSION, post_features  # noqa: E402

HERE = Path(__file__).resolve().parent
# Target false-IDK rate on supported held-out answers for each level (rarely says IDK least often).
POST_FALSE_IDK = {"rarely": 0.02, "less_often": 0.05, "more_often": 0.10, "most_often": 0.20}


def per_kind(y: np.ndarray, p: np.ndarray, ex: list, mask: np.ndarray) -> dict[str, dict[str, float]]:
    """AUC of all supported answers vs each kind of unsupported answer, per language."""
    lang = np.array([e.lang for e in ex])
    kind = np.array([e.kind for e in ex])
    out: dict[str, dict[str, float]] = {}
    for lg in sorted(set(lang[mask])):
        pos = mask & (lang == lg) & (y == 1)
        out[f"{lg}/all"] = {
            "auc": common.roc_auc(y[mask & (lang == lg)], p[mask & (lang == lg)]),
            "n": int((mask & (lang == lg)).sum()),
        }
        for k in sorted(set(kind[mask & (lang == lg) & (y == 0)])):
            m = pos | (mask & (lang == lg) & (kind == k))
            out[f"{lg}/{k}"] = {"auc": common.roc_auc(y[m], p[m]), "n_neg": int((m & ~pos).sum())}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=HERE)
    ap.add_argument("--model", choices=["logreg", "gb", "mlp"], default="gb")
    args = ap.parse_args()
    t0 = time.time()
    enc = common.encoder()
    ex = post_sets.build(args.data)
    dev = post_sets.clapnq_dev_examples(args.data)
    fn = lambda e: post_features(e.query, e.snippets, e.answer, enc)  # noqa: E731
    X = common.feature_matrix("post_all", ex, fn, len(POST_FEATURES), POST_VERSION)
    Xd = common.feature_matrix("post_dev", dev, fn, len(POST_FEATURES), POST_VERSION)
    common.save_encoder_cache(enc)
    y = np.array([e.label for e in ex])
    yd = np.array([e.label for e in dev])
    ok = ~np.isnan(X).any(axis=1)
    train = ok & np.array([e.split == "train" for e in ex])
    held = ok & np.array([e.split == "heldout" for e in ex])
    print(f"features ready in {time.time() - t0:.0f} s: train {train.sum()}, held out {held.sum()}", flush=True)

    models = common.fit_candidates(X[train], y[train], None)
    for name, m in models.items():
        print(
            f"{name}: held-out AUC {common.roc_auc(y[held], m.predict_proba(X[held])[:, 1]):.3f}, "
            f"CLAPNQ dev references AUC {common.roc_auc(yd, m.predict_proba(Xd)[:, 1]):.3f}"
        )
    model = models[args.model]
    p = np.full(len(ex), np.nan)
    p[ok] = model.predict_proba(X[ok])[:, 1]
    p_dev = model.predict_proba(Xd)[:, 1]

    kind_held = np.array([e.kind for e in ex])[held]
    thresholds = {
        lvl: round(common.threshold_balanced(y[held], p[held], kind_held, r), 4) for lvl, r in POST_FALSE_IDK.items()
    }
    metrics = {
        "model": args.model,
        "feature_version": POST_VERSION,
        "features": list(POST_FEATURES),
        "n_train": int(train.sum()),
        "heldout_auc": common.roc_auc(y[held], p[held]),
        "heldout": per_kind(y, p, ex, held),
        "clapnq_dev_references": {
            "auc": common.roc_auc(yd, p_dev),
            "by_kind": per_kind(yd, p_dev, dev, np.ones(len(dev), bool)),
        },
        "thresholds": thresholds,
        "per_level_heldout": {
            lvl: {
                "threshold": t,
                "caught": float((p[held][y[held] == 0] < t).mean()),
                "false_idk": float((p[held][y[held] == 1] < t).mean()),
                "false_idk_by_kind": {
                    k: float((p[held][(y[held] == 1) & (kind_held == k)] < t).mean())
                    for k in sorted(set(kind_held[y[held] == 1]))
                },
                "clapnq_dev_references": {
                    "caught": float((p_dev[yd == 0] < t).mean()),
                    "false_idk": float((p_dev[yd == 1] < t).mean()),
                },
            }
            for lvl, t in thresholds.items()
        },
        "false_idk_targets": POST_FALSE_IDK,
    }
    common.export_onnx(
        model,
        len(POST_FEATURES),
        args.out / "post_filter.onnx",
        {
            "feature_version": str(POST_VERSION),
            "features": json.dumps(list(POST_FEATURES)),
            "kind": "post_gen",
        },
    )
    common.update_thresholds(
        args.out / "thresholds.json",
        "post_gen",
        thresholds,
        "largest score threshold whose false-IDK rate on held-out supported answers, averaged with "
        "equal weight over their kinds (verbatim sentence, two adjacent / two non-adjacent sentences, lightly "
        "edited sentence, "
        "human-written CLAPNQ-train reference; article-level held-out split), is at most "
        f"{POST_FALSE_IDK}",
    )
    (args.out / "post_metrics.json").write_text(json.dumps(metrics, indent=1) + "\n", encoding="utf-8")
    common.plot_curves(
        args.out / "post_curves.png",
        "post-generation filter",
        {"constructed held-out set": (y[held], p[held]), "CLAPNQ dev references": (yd, p_dev)},
        thresholds,
        "unsupported answers caught",
    )
    print(json.dumps({k: metrics[k] for k in ("heldout_auc", "heldout", "per_level_heldout")}, indent=1))
    print(f"done in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
