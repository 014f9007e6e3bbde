"""Any sentence-embedding ONNX model directory: ``model.onnx`` (or the only ``*.onnx``) plus ``tokenizer.json``.

Runs with onnxruntime and the ``tokenizers`` library; pooling is mean (masked) or CLS.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from assistant_bridge.embedders.base import normalize_rows
from assistant_bridge.errors import EmbedderError, ModelLoadError
from assistant_bridge.onnx_options import session_options


class OnnxEmbedder:
    def __init__(
        self,
        model_dir: str | Path,
        *,
        pooling: str = "mean",
        query_prefix: str = "",
        passage_prefix: str = "",
        max_length: int = 256,
    ) -> None:
        self.model_dir = Path(model_dir)
        self.pooling = pooling
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self.max_length = max_length
        self.name = f"onnx:{self.model_dir.name}"
        self.dim = 0
        self._session: Any = None
        self._tokenizer: Any = None
        self._input_names: set[str] = set()

    def warm_up(self) -> None:
        if self._session is not None:
            return
        import onnxruntime as ort
        from tokenizers import Tokenizer

        tok_path = self.model_dir / "tokenizer.json"
        models = (
            [self.model_dir / "model.onnx"]
            if (self.model_dir / "model.onnx").exists()
            else sorted(self.model_dir.glob("*.onnx"))
        )
        if not tok_path.exists() or not models:
            raise ModelLoadError(f"{self.model_dir} must contain tokenizer.json and a .onnx model")
        try:
            self._tokenizer = Tokenizer.from_file(str(tok_path))
            self._tokenizer.enable_truncation(self.max_length)
            self._tokenizer.enable_padding()
            opts = session_options(1)
            self._session = ort.InferenceSession(str(models[0]), opts, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own untyped errors on corrupt files
            raise ModelLoadError(f"could not load ONNX embedder from {self.model_dir}: {exc}") from exc
        self._input_names = {i.name for i in self._session.get_inputs()}
        self.dim = int(self._embed(["dimension probe"]).shape[1])

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        enc = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        try:
            hidden = self._session.run(None, feeds)[0]
        except Exception as exc:
            raise EmbedderError(f"ONNX embedder failed: {type(exc).__name__}") from exc
        if hidden.ndim == 2:  # model already pooled
            return normalize_rows(hidden)
        if self.pooling == "cls":
            return normalize_rows(hidden[:, 0])
        m = mask[..., None].astype(np.float32)
        return normalize_rows((hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9))

    def _run(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        self.warm_up()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = [self._embed([prefix + t for t in texts[i : i + 32]]) for i in range(0, len(texts), 32)]
        return np.vstack(out)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._run(texts, self.query_prefix)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._run(texts, self.passage_prefix)

    def count_tokens(self, text: str) -> int:
        self.warm_up()
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)
