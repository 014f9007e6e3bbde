"""ONNX-backed pre- and post-generation filters, and the loaders of models and thresholds.

``load_filters`` checks both model files at load time (a missing, corrupt or wrong-layout file raises
:class:`~assistant_bridge.errors.ModelLoadError` there, never on a request). The heavy part, the sentence
encoder, loads in ``warm_up()``; the onnxruntime session is rebuilt in a forked worker, since sessions
must not cross a ``fork``.
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from assistant_bridge.errors import ConfigurationError, ModelLoadError
from assistant_bridge.lru import Lru

from .cross import CROSS_MODEL_FILE, CROSS_TOKENIZER_FILE, CrossEncoder
from .encoder import SentenceEncoder, UseEncoder
from .features import (
    POST_FEATURES,
    POST_VERSION,
    PRE_FEATURES,
    PRE_VERSION,
    CrossScorer,
    DenseScorer,
    post_features,
    pre_features,
    second_look,
)
from .onnx_session import ForkSafeSession
from .protocols import LEVELS, Thresholds

log = logging.getLogger(__name__)

PRE_MODEL_FILE = "pre_filter.onnx"
POST_MODEL_FILE = "post_filter.onnx"
THRESHOLDS_FILE = "thresholds.json"
# Every file the filters load: what a deployment must copy.
MODEL_FILES = (PRE_MODEL_FILE, POST_MODEL_FILE, CROSS_MODEL_FILE, CROSS_TOKENIZER_FILE, THRESHOLDS_FILE)


PACKAGED_MODEL_DIR = Path(__file__).resolve().parents[1] / "filters_models"
SOURCE_MODEL_DIR = Path(__file__).resolve().parents[2] / "filters_models"


def default_model_dir() -> Path:
    """``$ASSISTANT_BRIDGE_FILTERS_DIR`` if set; else the copy inside an installed package
    (``assistant_bridge/filters_models/``, made by the build, see ``setup.py``); else ``filters_models/`` at the
    root of the source tree (a checkout or an editable install)."""
    env = os.environ.get("ASSISTANT_BRIDGE_FILTERS_DIR")
    if env:
        return Path(env)
    return PACKAGED_MODEL_DIR if PACKAGED_MODEL_DIR.is_dir() else SOURCE_MODEL_DIR


class OnnxClassifier:
    """A binary classifier exported by skl2onnx (output ``probabilities``, shape (N, 2))."""

    def __init__(self, path: Path, features: Sequence[str], version: int) -> None:
        self._session = ForkSafeSession(path)
        self.path = path
        session = self._session.get()
        meta = session.get_modelmeta().custom_metadata_map
        got = (meta.get("feature_version"), meta.get("features"))
        if got != (str(version), json.dumps(list(features))):
            raise ModelLoadError(
                f"filter model {path.name} was trained on another feature layout; retrain it",
                path=str(path),
                feature_version=got[0],
                expected=version,
            )
        self._input = session.get_inputs()[0].name
        self.n_features = len(features)

    def warm_up(self) -> None:
        self.proba(np.zeros(self.n_features, dtype=np.float32))

    def proba(self, x: np.ndarray) -> float:
        out = self._session.get().run(None, {self._input: x.reshape(1, -1).astype(np.float32)})
        probs = np.asarray(out[-1] if len(out) > 1 else out[0], dtype=np.float64).reshape(-1)
        p = float(probs[-1])
        return min(1.0, max(0.0, p)) if math.isfinite(p) else 0.0


class EmbedderSimilarity:
    """A :class:`~.features.DenseScorer` over an embedder with query and passage roles and unit-length rows
    (the default one: multilingual-e5-small, :class:`~assistant_bridge.embedders.e5.E5Embedder`).

    Vectors are kept (least recently used first out, ``cache_size`` of each role, 1.5 KB apiece): the planning
    steps of an agentic run and the turns of a conversation score the same question and windows again."""

    def __init__(self, embedder: Any, cache_size: int = 1024) -> None:
        self.embedder = embedder
        self._cache: Lru[tuple[str, str], np.ndarray] = Lru(2 * cache_size)  # both roles

    def warm_up(self) -> None:
        self.embedder.warm_up()

    def _vector(self, role: str, text: str) -> np.ndarray:
        key = (role, text)
        found = self._cache.get(key)
        if found is not None:
            return found
        embed = self.embedder.embed_queries if role == "query" else self.embedder.embed_passages
        vec: np.ndarray = np.asarray(embed([text]), dtype=np.float32)[0]
        self._cache.put(key, vec)
        return vec

    def keep_query(self, query: str) -> None:
        """Computes and keeps ``query``'s vector (a no-op when it is kept already): the pre-filter's other
        thread does so while its dense chain embeds the passage window, which :meth:`similarity` reads first."""
        self._vector("query", query)

    def similarity(self, query: str, passage: str) -> float:
        return float(np.clip(self._vector("passage", passage) @ self._vector("query", query), -1.0, 1.0))


def default_dense() -> EmbedderSimilarity:
    """multilingual-e5-small (the model the pre-filter was trained with), on its default engine and cache."""
    from assistant_bridge.embedders.e5 import E5Embedder

    return EmbedderSimilarity(E5Embedder())


def _probability(model: OnnxClassifier, x: np.ndarray | None, event: str, n_snippets: int, t0: float) -> float:
    """The classifier's probability for the features ``x`` (0 when there are none), logged with the time since
    ``t0``."""
    score = 0.0 if x is None else model.proba(x)
    ms = round(1000 * (time.perf_counter() - t0), 1)
    log.debug(event, extra={"score": round(score, 4), "n_snippets": n_snippets, "ms": ms})
    return score


class OnnxPreFilter:
    """P(snippets answer query): :func:`~.features.pre_features` (sentence similarities, coverage, the
    cross-encoder's scores and the dense similarity) combined by a small ONNX classifier."""

    def __init__(self, model: OnnxClassifier, encoder: SentenceEncoder, cross: CrossScorer, dense: DenseScorer) -> None:
        self._model = model
        self._encoder = encoder
        self._cross = cross
        self._dense = dense

    def warm_up(self) -> None:
        self._encoder.warm_up()
        for part in (self._cross, self._dense):
            warm = getattr(part, "warm_up", None)
            if callable(warm):
                warm()
        self._model.warm_up()

    def score(self, query: str, snippets: Sequence[str]) -> float:
        t0 = time.perf_counter()
        x = pre_features(query, snippets, self._encoder, self._cross, self._dense, concurrent=True)
        return _probability(self._model, x, "prefilter.score", len(snippets or ()), t0)

    def second_look(self, query: str, snippets: Sequence[str]) -> list[tuple[int, float]]:
        """(snippet index, probability) of the snippets that a window the cross-encoder reads after the first
        answers with probability :data:`~.cross.SECOND_LOOK_MIN` or more, best first (see
        :func:`~.features.second_look`). The loop asks when :meth:`score` is below its threshold."""
        t0 = time.perf_counter()
        found = second_look(query, snippets, self._cross)
        log.debug(
            "prefilter.second_look",
            extra={"found": [[i, round(p, 4)] for i, p in found], "ms": round(1000 * (time.perf_counter() - t0), 1)},
        )
        return found


class OnnxPostFilter:
    """P(answer supported by snippets) from :func:`~.features.post_features` and a small ONNX classifier."""

    def __init__(self, model: OnnxClassifier, encoder: SentenceEncoder) -> None:
        self._model = model
        self._encoder = encoder

    def warm_up(self) -> None:
        self._encoder.warm_up()
        self._model.warm_up()

    def score(self, query: str, snippets: Sequence[str], answer: str) -> float:
        t0 = time.perf_counter()
        x = post_features(query, snippets, answer, self._encoder)
        return _probability(self._model, x, "postfilter.score", len(snippets or ()), t0)


def load_filters(
    model_dir: Path | None = None, encoder: SentenceEncoder | None = None, dense: DenseScorer | None = None
) -> tuple[OnnxPreFilter, OnnxPostFilter]:
    """Load both filters from ``model_dir`` (default :func:`default_model_dir`).

    The two filters share one sentence encoder (and its cache); the pre-filter also loads the cross-encoder
    (``pre_cross.onnx`` and its tokenizer) and uses ``dense`` (default :func:`default_dense`; the service
    passes its own embedder when it is that model). Call ``warm_up()`` on each once per worker.

    :raises ModelLoadError: a model or tokenizer file is missing, corrupt or was trained on another feature
        layout.
    """
    d = Path(model_dir) if model_dir is not None else default_model_dir()
    pre = OnnxClassifier(d / PRE_MODEL_FILE, PRE_FEATURES, PRE_VERSION)
    post = OnnxClassifier(d / POST_MODEL_FILE, POST_FEATURES, POST_VERSION)
    cross = CrossEncoder(d)
    enc = encoder if encoder is not None else UseEncoder()
    log.info("filters.loaded", extra={"model_dir": str(d), "pre_version": PRE_VERSION, "post_version": POST_VERSION})
    return OnnxPreFilter(pre, enc, cross, dense if dense is not None else default_dense()), OnnxPostFilter(post, enc)


def load_thresholds(level: str, model_dir: Path | None = None) -> Thresholds:
    """Numeric thresholds for a ``search_confidence.threshold`` level.

    :param level: one of ``rarely``, ``less_often`` (default of the product), ``more_often``, ``most_often``.
    :raises ConfigurationError: unknown level.
    :raises ModelLoadError: the thresholds file is missing or malformed.
    """
    if level not in LEVELS:
        raise ConfigurationError(
            f"unknown confidence level {level!r}; expected one of {', '.join(LEVELS)}", level=level
        )
    path = (Path(model_dir) if model_dir is not None else default_model_dir()) / THRESHOLDS_FILE
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))["levels"][level]
        low = entry.get("pre_gen_low_coverage")
        return Thresholds(
            pre_gen=float(entry["pre_gen"]),
            post_gen=float(entry["post_gen"]),
            pre_gen_low_coverage=float(low) if low is not None else None,
        )
    except OSError as exc:
        raise ModelLoadError("filter thresholds file is missing or unreadable", path=str(path)) from exc
    except (ValueError, KeyError, TypeError, ConfigurationError) as exc:
        raise ModelLoadError("filter thresholds file is malformed", path=str(path), level=level) from exc
