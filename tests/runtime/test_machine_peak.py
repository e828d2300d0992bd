"""runtime/machine_peak.py: the FMA loop and the bfloat16 dot product loop compute what their IR says, with vector FMA
and `vdpbf16ps` instructions; the peaks and bench/machine_peak.py's numpy figure measure."""

from __future__ import annotations

import ctypes
import sys
from pathlib import Path

import llvmlite.binding as llvm
import numpy as np
import pytest

from minimlc.lowering.llvm.dot_bf16 import bf16_intrinsic
from minimlc.lowering.target import target_from_name
from minimlc.runtime.jit import JitModule
from minimlc.runtime.machine_peak import (
    FMA_FUNCTION,
    dot_bf16_loop_ir,
    dot_bf16_peak_gflops,
    fma_loop_ir,
    fma_peak_gflops,
)

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


HOST = target_from_name("host")
on_bf16_host = pytest.mark.skipif(not HOST.dot_bf16_bits, reason="this host has no bfloat16 dot product")


@on_bf16_host
def test_dot_bf16_loop_adds_each_lanes_pair_products() -> None:
    """m and c hold words of two bfloat16 values (1.0 and 2.0, 1.5 and 0.5): each step adds 1 * 1.5 + 2 * 0.5 = 2.5
    to every lane."""
    lanes, accumulators = HOST.dot_bf16_bits // 32, 3
    jit = JitModule(dot_bf16_loop_ir(lanes, accumulators, bf16_intrinsic(HOST, lanes)))
    run = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64)(jit.function_address(FMA_FUNCTION))
    state = np.zeros((2 + accumulators, lanes), dtype=np.float32)
    words = state.view(np.uint32)
    words[0] = 0x3F80 | 0x4000 << 16  # 1.0, 2.0
    words[1] = 0x3FC0 | 0x3F00 << 16  # 1.5, 0.5
    state[2:] = np.arange(accumulators, dtype=np.float32)[:, None]
    run(state.ctypes.data, 3)
    expected = np.broadcast_to(np.arange(accumulators, dtype=np.float32)[:, None] + 7.5, state[2:].shape)
    np.testing.assert_array_equal(state[2:], expected)
    if HOST.is_x86:
        assert "vdpbf16ps" in jit.asm()
    assert dot_bf16_peak_gflops(seconds_per_repeat=0.002, repeats=2) > 0


@pytest.mark.skipif(bool(HOST.dot_bf16_bits), reason="this host has a bfloat16 dot product")
def test_dot_bf16_peak_is_refused_without_the_instruction() -> None:
    with pytest.raises(ValueError, match=r"^this CPU \(.*\) has no bfloat16 dot product$"):
        dot_bf16_peak_gflops()
