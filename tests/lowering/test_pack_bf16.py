"""`llvmx.pack_bf16`: the direct emitter gives the pass path's LLVM IR on both forms (AVX512-BF16's conversion, the
integer rounding); the conversion's code is `vcvtneps2bf16`; both forms round float32 to bfloat16 as numpy's
reference does (nearest even, NaN quieted with its sign, overflow to infinity: JIT on this host, each form where
the host runs it), the conversion reading a denormal as a zero of its sign; the verifier refuses words and values of
different lengths."""

from __future__ import annotations

import ctypes
import re

import llvmlite.binding as llvm
import numpy as np
import pytest
from llvm_paths import both_llvm_ir
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from minimlc.lowering.llvm.emit_ir import canonical_llvm_ir
from minimlc.lowering.pipeline import make_context
from minimlc.lowering.target import initialize_llvm, target_from_name, target_machine
from minimlc.runtime.jit import JitModule

LANES = 8
KERNEL = f"""
func.func @pack(%lo: vector<{LANES}xf32>, %hi: vector<{LANES}xf32>) -> vector<{LANES}xi32> {{
  %w = llvmx.pack_bf16 %lo, %hi : vector<{LANES}xf32> -> vector<{LANES}xi32>
  func.return %w : vector<{LANES}xi32>
}}
func.func @scalar(%lo: f32, %hi: f32) -> i32 {{
  %w = llvmx.pack_bf16 %lo, %hi : f32 -> i32
  func.return %w : i32
}}
"""
RUN = f"""
define void @run(ptr %lo, ptr %hi, ptr %out, ptr %scalar_out) {{
  %x = load <{LANES} x float>, ptr %lo, align 4
  %y = load <{LANES} x float>, ptr %hi, align 4
  %w = call <{LANES} x i32> @pack(<{LANES} x float> %x, <{LANES} x float> %y)
  store <{LANES} x i32> %w, ptr %out, align 4
  %a = load float, ptr %lo, align 4
  %b = load float, ptr %hi, align 4
  %s = call i32 @scalar(float %a, float %b)
  store i32 %s, ptr %scalar_out, align 4
  ret void
}}
"""
"""A wrapper taking pointers (ctypes cannot pass LLVM vectors by value); it also packs the first pair as scalars."""

CONVERTS = {"znver4": True, "sapphirerapids": True, "znver3": False, "aarch64-linux-gnu -mcpu=neoverse-v1": False}
"""Targets, and whether their code converts by instruction (the others round in integer ops)."""


def _llvm_ir(target: str) -> tuple[str, str]:
    """(the pass path's LLVM IR, the direct emitter's) of `KERNEL` built for `target`."""
    return both_llvm_ir(KERNEL, target)


@pytest.mark.parametrize("target", CONVERTS)
def test_the_direct_emitter_gives_the_pass_paths_llvm_ir(target: str) -> None:
    passes, direct = _llvm_ir(target)
    assert canonical_llvm_ir(direct) == canonical_llvm_ir(passes)
    conversions = re.findall(r"fptrunc <(\d+) x float> %\S+ to <\d+ x bfloat>", passes)
    assert conversions == ([str(LANES)] * 2 if CONVERTS[target] else [])
    assert ("fptrunc float" in passes) == CONVERTS[target]
    assert ("fcmp uno" in passes) != CONVERTS[target]  # the integer rounding's NaN test


def test_the_conversion_is_vcvtneps2bf16() -> None:
    passes, _ = _llvm_ir("znver4")
    initialize_llvm()
    assembly = target_machine(target_from_name("znver4")).emit_assembly(llvm.parse_assembly(passes))
    pack = assembly[assembly.index("pack:") : assembly.index("scalar:")]
    assert pack.count("vcvtneps2bf16") == 2
    assert "vpaddd" not in pack  # no integer rounding


def _rounded(values: np.ndarray) -> np.ndarray:
    """numpy's bfloat16 bits of float32 `values`: nearest even, a NaN's top bits with the quiet bit set."""
    bits = values.view(np.uint32).astype(np.uint64)
    nearest = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    quiet = (bits | 0x00400000) >> 16
    return np.where(np.isnan(values), quiet, nearest).astype(np.uint32)


def _values(count: int) -> np.ndarray:
    """Random normals and the cases rounding must get right: ties to even either way, NaNs (quiet and signalling,
    both signs, one whose low bits would round it to infinity), infinities, zeros, the largest float (rounding to
    infinity) and float32 denormals."""
    special = np.array(
        [
            *(0x3F808000, 0x3F818000, 0x3F807FFF, 0x3F808001),  # ties to even (down, up), either side of a tie
            *(0x7FC00000, 0xFFC00001, 0x7F800001, 0x7F80FFFF, 0xFF800001),  # NaNs
            *(0x7F800000, 0xFF800000, 0x00000000, 0x80000000, 0x7F7FFFFF, 0xFF7FFFFF),  # infinities, zeros, largest
            *(0x00000001, 0x807FFFFF, 0x00408000),  # denormals
        ],
        dtype=np.uint32,
    ).view(np.float32)
    rng = np.random.default_rng(0)
    values = np.concatenate([special, rng.standard_normal(count - special.size).astype(np.float32)])
    return values


@pytest.mark.parametrize("target", ["znver4", "znver3"])
def test_both_forms_round_as_the_reference(target: str) -> None:
    """Every value packed low and high, in vectors and as scalars; the conversion reads a denormal as a zero of its
    sign (`vcvtneps2bf16`), the integer rounding rounds it."""
    chosen = target_from_name(target)
    if chosen.missing_on_host():
        pytest.skip(f"this host cannot run code for {target}")
    passes, _ = _llvm_ir(target)
    jit = JitModule(passes + RUN, target=chosen)
    run = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 4)(jit.function_address("run"))
    values = _values(64 * LANES)
    expected = _rounded(values)
    if CONVERTS[target]:
        denormal = (values != 0) & (np.abs(values) < np.finfo(np.float32).tiny)
        expected = np.where(denormal, _rounded(np.copysign(np.float32(0), values)), expected)
    for shift in (0, 1):  # each value both low and high
        lows, highs = values, np.roll(values, shift + 7)
        for start in range(0, values.size, LANES):
            lo, hi = lows[start : start + LANES].copy(), highs[start : start + LANES].copy()
            out, scalar = np.empty(LANES, np.uint32), np.empty(1, np.uint32)
            run(lo.ctypes.data, hi.ctypes.data, out.ctypes.data, scalar.ctypes.data)
            low_bits = expected[start : start + LANES]
            high_bits = np.roll(expected, shift + 7)[start : start + LANES]
            np.testing.assert_array_equal(out & 0xFFFF, low_bits, err_msg=f"low halves of {lo.view(np.uint32)}")
            np.testing.assert_array_equal(out >> 16, high_bits, err_msg=f"high halves of {hi.view(np.uint32)}")
            assert scalar[0] == out[0]


def test_words_and_values_of_different_lengths_are_refused() -> None:
    text = """
    func.func @bad(%lo: vector<8xf32>, %hi: vector<8xf32>) -> vector<4xi32> {
      %w = llvmx.pack_bf16 %lo, %hi : vector<8xf32> -> vector<4xi32>
      func.return %w : vector<4xi32>
    }
    """
    module = Parser(make_context(), text).parse_module()
    with pytest.raises(VerifyException, match="words vector<4xi32> and values vector<8xf32> differ in length"):
        module.verify()
