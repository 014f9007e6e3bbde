"""Shared helpers of the filter training scripts: feature matrices (cached), fitting, ONNX export, curves.

Training-only code: it imports scikit-learn, skl2onnx and matplotlib, none of which the runtime needs.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from assistant_bridge.filters.encoder import UseEncoder  # noqa: E402

SEED = 13
CACHE_DIR = Path(os.environ.get("FILTERS_CACHE", Path.home() / ".cache" / "assistant_bridge_filters"))
LEVELS = ("rarely", "less_often", "more_often", "most_often")


def encoder() -> UseEncoder:
    """The runtime encoder with a large cache, pre-filled from (and later saved to) a disk cache."""
    enc = UseEncoder(threads=1, cache_size=2_000_000)
    enc.warm_up()
    path = CACHE_DIR / "use_vectors.pkl"
    if path.exists():
        enc._cache.update(pickle.loads(path.read_bytes()))
    return enc


def save_encoder_cache(enc: UseEncoder) -> None:
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    path = CACHE_DIR / "use_vectors.pkl"
    merged = pickle.loads(path.read_bytes()) if path.exists() else {}
    merged.update(enc._cache.items())
    tmp = CACHE_DIR / f"use_vectors.pkl.{os.getpid()}"
    tmp.write_bytes(pickle.dumps(merged, protocol=pickle.HIGHEST_PROTOCOL))
    tmp.replace(path)


def feature_matrix(
    name: str, rows: Sequence[Any], fn: Callable[[Any], np.ndarray | None], width: int, version: int
) -> np.ndarray:
    """Features of ``rows`` (``None`` rows become NaN); cached on disk by content hash."""
    key = hashlib.sha1(repr((version, name, [repr(r) for r in rows])).encode()).hexdigest()[:16]
    path = CACHE_DIR / f"{name}-{key}.npy"
    if path.exists():
        return np.load(path)
    t0 = time.time()
    out = np.full((len(rows), width), np.nan, dtype=np.float32)
    for i, r in enumerate(rows):
        f = fn(r)
        if f is not None:
            out[i] = f
        if i and i % 2000 == 0:
            print(f"  {name}: {i}/{len(rows)} ({time.time() - t0:.0f} s)", flush=True)
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    np.save(path, out)
    return out


def file_digest(path: Path) -> str:
    """First 12 hex digits of the SHA-1 of a file (names caches that depend on a model file)."""
    return hashlib.sha1(path.read_bytes()).hexdigest()[:12]


def text_digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:6]


def roc_auc(y: np.ndarray, s: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(y, s)) if len(set(y.tolist())) == 2 else float("nan")


def idk_curve(y: np.ndarray, s: np.ndarray, grid: np.ndarray | None = None) -> dict[str, list[float]]:
    """For each threshold t (IDK when score < t): share of negatives caught and share of positives lost."""
    grid = np.round(np.linspace(0, 1, 201), 4) if grid is None else grid
    neg, pos = s[y == 0], s[y == 1]
    return {
        "threshold": grid.tolist(),
        "caught": [float((neg < t).mean()) if len(neg) else float("nan") for t in grid],
        "false_idk": [float((pos < t).mean()) if len(pos) else float("nan") for t in grid],
    }


def threshold_for_false_idk(y: np.ndarray, s: np.ndarray, target: float) -> float:
    """Largest threshold whose false-IDK rate on positives stays <= ``target``."""
    pos = np.sort(s[y == 1])
    k = int(np.floor(target * len(pos)))
    return float(pos[k]) if k < len(pos) else 1.0


def threshold_balanced(y: np.ndarray, s: np.ndarray, groups: np.ndarray, target: float) -> float:
    """Largest threshold whose false-IDK rate, averaged over ``groups`` with equal weight, is <= ``target``."""
    names = sorted(set(groups[y == 1].tolist()))
    best = 0.0
    for t in np.unique(np.round(s[y == 1], 4)):
        rate = np.mean([(s[(y == 1) & (groups == g)] < t).mean() for g in names])
        if rate <= target:
            best = max(best, float(t))
    return best


def threshold_worst(y: np.ndarray, s: np.ndarray, groups: np.ndarray, target: float) -> float:
    """Largest threshold whose false-IDK rate is <= ``target`` in every one of ``groups``."""
    names = sorted(set(groups[y == 1].tolist()))
    best = 0.0
    for t in np.unique(np.round(s[y == 1], 4)):
        if max((s[(y == 1) & (groups == g)] < t).mean() for g in names) <= target:
            best = max(best, float(t))
    return best


def export_onnx(model: Any, n_features: int, path: Path, meta: dict[str, Any]) -> None:
    """Export a fitted scikit-learn classifier; output ``probabilities`` (N, 2)."""
    import onnx
    from skl2onnx import to_onnx

    x0 = np.zeros((1, n_features), dtype=np.float32)
    onx = to_onnx(model, x0, options={id(model): {"zipmap": False}}, target_opset=17)
    for k, v in meta.items():
        entry = onx.metadata_props.add()
        entry.key, entry.value = k, json.dumps(v) if not isinstance(v, str) else v
    onnx.save_model(onx, str(path))


def fit_candidates(X: np.ndarray, y: np.ndarray, w: np.ndarray | None) -> dict[str, Any]:
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    lr = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=2000))
    lr.fit(X, y, logisticregression__sample_weight=w)
    # classic gradient boosting: skl2onnx 1.20 cannot export HistGradientBoosting models of scikit-learn 1.9
    gb = GradientBoostingClassifier(
        n_estimators=200,
        learning_rate=0.05,
        max_depth=3,
        min_samples_leaf=40,
        subsample=0.8,
        random_state=SEED,
    )
    gb.fit(X, y, sample_weight=w)
    from sklearn.neural_network import MLPClassifier

    mlp = make_pipeline(
        StandardScaler(),
        MLPClassifier(hidden_layer_sizes=(32, 16), alpha=1e-3, max_iter=400, early_stopping=True, random_state=SEED),
    )
    mlp.fit(X, y)
    return {"logreg": lr, "gb": gb, "mlp": mlp}


def save_pickle(obj: Any, path: Path) -> None:
    path.write_bytes(pickle.dumps(obj))


def update_thresholds(path: Path, key: str, per_level: dict[str, float], how: str) -> None:
    """Write ``per_level`` as the ``key`` (pre_gen / post_gen) of each level, keeping the other key."""
    doc = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    doc.setdefault("version", 1)
    levels = doc.setdefault("levels", {})
    for lvl in LEVELS:
        levels.setdefault(lvl, {"pre_gen": 0.0, "post_gen": 0.0})[key] = per_level[lvl]
    doc.setdefault("how_chosen", {})[key] = how
    doc["levels"] = {lvl: levels[lvl] for lvl in LEVELS}
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


def plot_curves(
    path: Path,
    title: str,
    sets: dict[str, tuple[np.ndarray, np.ndarray]],
    thresholds: dict[str, float],
    caught_label: str,
) -> None:
    """Left: ROC-style curve (caught vs false-IDK); right: both rates against the threshold."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.5))
    for name, (y, s) in sets.items():
        c = idk_curve(y, s)
        line = ax1.plot(c["false_idk"], c["caught"], label=f"{name} (AUC {roc_auc(y, s):.3f})")[0]
        ax2.plot(c["threshold"], c["caught"], color=line.get_color(), label=f"{name}: caught")
        ax2.plot(c["threshold"], c["false_idk"], color=line.get_color(), linestyle="--", label=f"{name}: false IDK")
    for lvl, t in thresholds.items():
        ax2.axvline(t, color="grey", linewidth=0.7)
        ax2.text(t, 1.01, lvl, rotation=90, fontsize=7, va="bottom")
    ax1.plot([0, 1], [0, 1], color="lightgrey", linewidth=0.7)
    ax1.set_xlabel("false IDK (share of good items rejected)")
    ax1.set_ylabel(caught_label)
    ax1.legend(fontsize=7, loc="lower right")
    ax2.set_xlabel("threshold (IDK when score < threshold)")
    ax2.legend(fontsize=6, loc="center right")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
