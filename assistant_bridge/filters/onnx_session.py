"""One onnxruntime session per process for a model file read at start-up.

The file is read in the constructor (a missing file raises :class:`~assistant_bridge.errors.ModelLoadError`
there); the session is built from those bytes and rebuilt in a forked worker, since onnxruntime sessions
must not cross a ``fork``. A file onnxruntime cannot load raises ``ModelLoadError`` too.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from assistant_bridge.errors import ModelLoadError
from assistant_bridge.onnx_options import session_options


class ForkSafeSession:
    """The onnxruntime ``InferenceSession`` of ``path`` for the current process (CPU, ``threads`` intra-op)."""

    def __init__(self, path: Path, threads: int = 1) -> None:
        try:
            self._bytes = path.read_bytes()
        except OSError as exc:
            raise ModelLoadError(f"filter model file {path.name} is missing or unreadable", path=str(path)) from exc
        self.path = path
        self._threads = threads
        self._lock = threading.Lock()
        self._pid = -1
        self._session: Any = None
        self.get()

    def get(self) -> Any:
        if self._session is not None and self._pid == os.getpid():
            return self._session
        with self._lock:
            if self._session is None or self._pid != os.getpid():
                import onnxruntime as ort

                opts = session_options(self._threads)
                try:
                    self._session = ort.InferenceSession(
                        self._bytes, sess_options=opts, providers=["CPUExecutionProvider"]
                    )
                except Exception as exc:  # onnxruntime raises its own untyped errors on a bad file
                    raise ModelLoadError(
                        f"filter model file {self.path.name} is corrupt or not an ONNX model", path=str(self.path)
                    ) from exc
                self._pid = os.getpid()
        return self._session
