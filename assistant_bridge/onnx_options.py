"""The onnxruntime session options every model of the service runs with.

The quantised models (the pre-filter's cross-encoder, the default embedder's ``int8`` graph) multiply 8-bit
activations by 8-bit weights. On x86 CPUs without VNNI (AVX2, AVX-512 before VNNI, SSE4.1) onnxruntime's
``u8s8`` kernels add pairs of products in 16 bits, which saturate for weights outside [-64, 63]: the same
model then scores differently on such a CPU than on one with VNNI (the cross-encoder's logits moved by 0.02-0.04
on an AVX2-only machine), and thresholds chosen on one do not hold on the other. ``session.x64quantprecision``
(onnxruntime >= 1.13) makes onnxruntime compute those products as ``u8u8`` there, exactly as VNNI does.

On a CPU with VNNI the products are exact already, and the option only slows the models down (it takes the
``u8u8`` kernels there too): on an AMD EPYC with AVX-512 VNNI the embedder's passages took 82 ms instead of
46 ms and the cross-encoder's windows 36 ms instead of 21 ms, with identical outputs. So it is set only where
the CPU's flags (``/proc/cpuinfo``) do not show VNNI, or cannot be read (the exact choice either way).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

_VNNI = re.compile(r"^flags\s*:.*\b(?:avx512_vnni|avx_vnni)\b", re.MULTILINE)


@functools.cache
def vnni() -> bool:
    """The CPU multiplies 8-bit values exactly on its own: an x86 CPU whose flags show AVX-512 VNNI or AVX-VNNI
    (Linux's ``/proc/cpuinfo``). ``False`` when the flags cannot be read."""
    try:
        info = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return _VNNI.search(info) is not None


def session_options(threads: int = 1) -> Any:
    """``onnxruntime.SessionOptions`` with ``threads`` intra-op threads, one inter-op thread and exact 8-bit
    products on every x86 CPU (:func:`vnni`: the option only where the CPU needs it)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    if not vnni():
        opts.add_session_config_entry("session.x64quantprecision", "1")
    return opts
