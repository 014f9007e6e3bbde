"""Model and thresholds loading: errors surface at load time, levels are ordered."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assistant_bridge.errors import ConfigurationError, ModelLoadError
from assistant_bridge.filters import LEVELS, default_model_dir, load_filters, load_thresholds
from assistant_bridge.filters.encoder import HashingEncoder

pytestmark = pytest.mark.unit

MODEL_DIR = default_model_dir()


@pytest.fixture()
def model_copy(tmp_path: Path) -> Path:
    for name in (
        "pre_filter.onnx",
        "post_filter.onnx",
        "pre_cross.onnx",
        "pre_cross_tokenizer.json",
        "thresholds.json",
    ):
        shutil.copy(MODEL_DIR / name, tmp_path / name)
    return tmp_path


def test_shipped_models_load_without_the_encoder() -> None:
    pre, post = load_filters(MODEL_DIR, encoder=HashingEncoder())
    assert 0.0 <= pre.score("a question", ["a passage about a question"]) <= 1.0
    assert 0.0 <= post.score("q", ["a passage"], "a passage") <= 1.0


def test_missing_model_file_raises_model_load_error(model_copy: Path) -> None:
    (model_copy / "post_filter.onnx").unlink()
    with pytest.raises(ModelLoadError, match="post_filter.onnx"):
        load_filters(model_copy, encoder=HashingEncoder())


def test_missing_cross_encoder_or_tokenizer_raises_model_load_error(model_copy: Path) -> None:
    (model_copy / "pre_cross_tokenizer.json").write_text("{not json")
    with pytest.raises(ModelLoadError, match="pre_cross_tokenizer.json"):
        load_filters(model_copy, encoder=HashingEncoder())
    (model_copy / "pre_cross.onnx").unlink()
    with pytest.raises(ModelLoadError, match="pre_cross.onnx"):
        load_filters(model_copy, encoder=HashingEncoder())


def test_corrupt_cross_encoder_raises_model_load_error(model_copy: Path) -> None:
    (model_copy / "pre_cross.onnx").write_bytes(b"\x08\x01garbage, not a protobuf")
    with pytest.raises(ModelLoadError, match="corrupt"):
        load_filters(model_copy, encoder=HashingEncoder())


def test_corrupt_model_file_raises_model_load_error(model_copy: Path) -> None:
    (model_copy / "pre_filter.onnx").write_bytes(b"\x08\x01garbage, not a protobuf")
    with pytest.raises(ModelLoadError, match="corrupt"):
        load_filters(model_copy, encoder=HashingEncoder())


def test_model_with_another_feature_layout_is_refused(model_copy: Path) -> None:
    shutil.copy(MODEL_DIR / "post_filter.onnx", model_copy / "pre_filter.onnx")
    with pytest.raises(ModelLoadError, match="feature layout"):
        load_filters(model_copy, encoder=HashingEncoder())


def test_thresholds_are_ordered_by_level() -> None:
    values = [load_thresholds(level) for level in LEVELS]
    for lower, higher in zip(values, values[1:], strict=False):
        assert lower.pre_gen < higher.pre_gen
        assert lower.post_gen < higher.post_gen
    assert all(0.0 < t.pre_gen < 1.0 and 0.0 < t.post_gen < 1.0 for t in values)
    # a level's rule for snippets that hold little of the question asks more than its own threshold
    assert values[0].pre_gen_low_coverage is None
    assert all(t.pre_gen < (t.pre_gen_low_coverage or 0.0) < 1.0 for t in values[1:])


def test_unknown_level_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError):
        load_thresholds("sometimes")


def test_missing_or_malformed_thresholds_file(model_copy: Path) -> None:
    (model_copy / "thresholds.json").write_text(json.dumps({"levels": {"rarely": {"pre_gen": "x"}}}))
    with pytest.raises(ModelLoadError):
        load_thresholds("rarely", model_copy)
    (model_copy / "thresholds.json").unlink()
    with pytest.raises(ModelLoadError):
        load_thresholds("rarely", model_copy)
