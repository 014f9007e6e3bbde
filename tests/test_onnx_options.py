"""The onnxruntime session options every model runs with."""

from __future__ import annotations

import pytest

from assistant_bridge.onnx_options import session_options

pytestmark = pytest.mark.unit


def test_sessions_compute_8_bit_products_exactly_on_every_x86_cpu() -> None:
    """Without ``session.x64quantprecision`` a CPU without VNNI saturates the quantised models' 16-bit sums, and
    the cross-encoder's scores (so the calibrated thresholds) differ from one CPU to another."""
    opts = session_options(2)
    assert opts.get_session_config_entry("session.x64quantprecision") == "1"
    assert opts.intra_op_num_threads == 2 and opts.inter_op_num_threads == 1


def test_the_filters_and_the_embedder_use_them() -> None:
    import assistant_bridge.embedders.e5_onnx as e5_onnx
    import assistant_bridge.embedders.onnx as onnx_embedder
    import assistant_bridge.filters.onnx_session as filters

    for module in (e5_onnx, onnx_embedder, filters):
        assert module.session_options is session_options
