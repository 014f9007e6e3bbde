"""The onnxruntime session options every model of the service runs with.

The quantised models (the pre-filter's cross-encoder, the default embedder's ``int8`` graph) multiply 8-bit
activations by 8-bit weights. On x86 CPUs without VNNI (AVX2, AVX-512 before VNNI, SSE4.1) onnxruntime's
``u8s8`` kernels add pairs of products in 16 bits, which saturate for weights outside [-64, 63]: the same
model then scores differently on such a CPU than on one with VNNI (the cross-encoder's logits moved by 0.02-0.04
on an AVX2-only machine), and thresholds chosen on one do not hold on the other. ``session.x64quantprecision``
(onnxruntime >= 1.13) makes onnxruntime compute those products as ``u8u8`` there, exactly as VNNI does; on other
CPUs it changes nothing.
"""

from __future__ import annotations

from typing import Any


def session_options(threads: int = 1) -> Any:
    """``onnxruntime.SessionOptions`` with ``threads`` intra-op threads, one inter-op thread and exact 8-bit
    products on every x86 CPU."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.add_session_config_entry("session.x64quantprecision", "1")
    return opts
