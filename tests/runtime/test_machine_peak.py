"""runtime/machine_peak.py: the FMA loop computes what its IR says, with vector FMA instructions; the peak and
bench/machine_peak.py's numpy figure measure."""

from __future__ import annotations

import ctypes
import sys
from pathlib import Path

import llvmlite.binding as llvm
import numpy as np
import pytest

from minimlc.runtime.jit import JitModule
from minimlc.runtime.machine_peak import FMA_FUNCTION, fma_loop_ir, fma_peak_gflops

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from machine_peak import numpy_sgemm_gflops


@pytest.mark.parametrize(("lanes", "accumulators"), [(4, 1), (8, 3), (16, 16)])
def test_fma_loop_iterates_acc_times_m_plus_c(lanes: int, accumulators: int) -> None:
    jit = JitModule(fma_loop_ir(lanes, accumulators))
    run = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64)(jit.function_address(FMA_FUNCTION))
    state = np.zeros((2 + accumulators, lanes), dtype=np.float32)
    state[0], state[1] = 0.5, 1.0
    state[2:] = np.arange(accumulators, dtype=np.float32)[:, None]
    expected = state[2:].copy()
    for _ in range(3):
        expected = expected * np.float32(0.5) + np.float32(1.0)
    run(state.ctypes.data, 3)
    np.testing.assert_array_equal(state[2:], expected)
    if llvm.get_host_cpu_features().get("fma"):
        assert "vfmadd" in jit.asm()


def test_peaks_are_positive() -> None:
    assert fma_peak_gflops(seconds_per_repeat=0.002, repeats=2) > 0
    assert numpy_sgemm_gflops(size=64, repeats=2) > 0
