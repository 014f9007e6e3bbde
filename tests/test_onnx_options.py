"""The onnxruntime session options every model runs with."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from assistant_bridge.onnx_options import session_options, vnni

pytestmark = pytest.mark.unit


@pytest.fixture
def cpu(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str | None], None]]:
    """Make ``/proc/cpuinfo`` read as given (``None``: unreadable) for :func:`vnni`."""
    real = Path.read_text

    def set_flags(flags: str | None) -> None:
        def read_text(self: Path, *args: Any, **kwargs: Any) -> str:
            if str(self) != "/proc/cpuinfo":
                return real(self, *args, **kwargs)
            if flags is None:
                raise OSError("no /proc")
            return f"processor\t: 0\nflags\t\t: {flags}\n\nprocessor\t: 1\nflags\t\t: {flags}\n"

        monkeypatch.setattr(Path, "read_text", read_text)
        vnni.cache_clear()

    yield set_flags
    vnni.cache_clear()


def test_sessions_compute_8_bit_products_exactly_on_a_cpu_without_vnni(cpu: Callable[[str | None], None]) -> None:
    """Without ``session.x64quantprecision`` a CPU without VNNI saturates the quantised models' 16-bit sums, and
    the cross-encoder's scores (so the calibrated thresholds) differ from one CPU to another."""
    for flags in ("fpu sse4_1 avx avx2 fma", "avx512f avx512bw avx512vl", None):
        cpu(flags)
        opts = session_options(2)
        assert opts.get_session_config_entry("session.x64quantprecision") == "1", flags
        assert opts.intra_op_num_threads == 2 and opts.inter_op_num_threads == 1


def test_a_cpu_with_vnni_is_exact_without_the_option(cpu: Callable[[str | None], None]) -> None:
    """VNNI multiplies 8-bit values exactly; the option would only slow the models down (about 1.7 times on an
    AVX-512 VNNI machine, with identical outputs)."""
    for flags in ("avx2 avx512f avx512_vnni avx512bw", "avx2 avx_vnni fma"):
        cpu(flags)
        assert vnni()
        opts = session_options(2)
        with pytest.raises(RuntimeError, match="x64quantprecision"):  # not set
            opts.get_session_config_entry("session.x64quantprecision")


def test_the_filters_and_the_embedder_use_them() -> None:
    import assistant_bridge.embedders.e5_onnx as e5_onnx
    import assistant_bridge.embedders.onnx as onnx_embedder
    import assistant_bridge.filters.onnx_session as filters

    for module in (e5_onnx, onnx_embedder, filters):
        assert module.session_options is session_options
