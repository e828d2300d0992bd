"""`llvmx.dot_u8s8` through convert-to-llvm and the JIT: the VNNI intrinsic (znver4), AVX2's two `vpmaddwd`
(x86-64-v3) and the arith expansion (x86-64-v2, scalars) agree with numpy's u8 x s8 four-way dot product, wrapping in
i32."""

from __future__ import annotations

import numpy as np
import pytest

from minimlc.lowering.target import target_from_name
from tests.lowering.test_llvm_backend import call_packed, compile_mlir, llvm_ir_of


def dot_kernel(target: str, lanes: int, rows: int) -> str:
    """`out[r] = dot_u8s8(acc[r], a[r], b[r])` on vectors of `lanes` i32 (a scalar when lanes is 0)."""
    shape = f"{rows}x{max(lanes, 1)}xi32"
    kind = f"vector<{lanes}xi32>" if lanes else "i32"
    load, store = ("vector.load", "vector.store") if lanes else ("memref.load", "memref.store")
    suffix = f", {kind}" if lanes else ""
    return f"""
builtin.module attributes {{minimlc.target = "{target}"}} {{
func.func @kernel(%acc: memref<{shape}>, %a: memref<{shape}>, %b: memref<{shape}>, %out: memref<{shape}>)
    attributes {{minimlc.entry}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {rows} : index
  scf.for %r = %c0 to %n step %c1 {{
    %x = {load} %acc[%r, %c0] : memref<{shape}>{suffix}
    %y = {load} %a[%r, %c0] : memref<{shape}>{suffix}
    %z = {load} %b[%r, %c0] : memref<{shape}>{suffix}
    %d = llvmx.dot_u8s8 %x, %y, %z : {kind}
    {store} %d, %out[%r, %c0] : memref<{shape}>{suffix}
  }}
  func.return
}}
}}
"""


def reference(acc: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    unsigned = a.view(np.uint8).reshape(*a.shape, 4).astype(np.int64)
    signed = b.view(np.int8).reshape(*b.shape, 4).astype(np.int64)
    total = acc.astype(np.int64) + (unsigned * signed).sum(axis=-1)
    return ((total + 2**31) % 2**32 - 2**31).astype(np.int32)


@pytest.mark.parametrize(
    ("target", "lanes"),
    [
        ("znver4", 16),
        ("znver4", 32),
        ("znver4", 8),
        ("znver4", 12),
        ("x86-64-v3", 16),
        ("x86-64-v3", 8),
        ("x86-64-v3", 4),
        ("x86-64-v3", 12),
        ("x86-64-v3", 0),
        ("x86-64-v2", 8),
    ],
)
def test_dot_u8s8_matches_numpy(target: str, lanes: int) -> None:
    if target_from_name(target).missing_on_host():
        pytest.skip(f"this host cannot run code for {target}")
    rows = 5
    rng = np.random.default_rng(lanes)
    shape = (rows, max(lanes, 1))
    acc, a, b = (rng.integers(-(2**31), 2**31, shape, dtype=np.int64).astype(np.int32) for _ in range(3))
    acc[0] = 2**31 - 1  # wraps
    out = np.zeros(shape, np.int32)
    call_packed(compile_mlir(dot_kernel(target, lanes, rows)), "kernel", acc, a, b, out)
    np.testing.assert_array_equal(out, reference(acc, a, b))


def test_dot_u8s8_is_vpdpbusd_on_vnni_targets() -> None:
    assert "llvm.x86.avx512.vpdpbusd.512" in llvm_ir_of(dot_kernel("znver4", 32, 2))
    assert "vpdpbusd" not in llvm_ir_of(dot_kernel("x86-64-v3", 16, 2))
    assert "llvm.x86.avx512.vpdpbusd.256" in llvm_ir_of(dot_kernel("alderlake", 8, 2))


def reduction_kernel(target: str, lanes: int, depth: int) -> str:
    """`out = acc`, then `out = dot_u8s8(out, a[k], b[k])` for k below `depth`: a long reduction of dot products."""
    shape, kind = f"{depth}x{lanes}xi32", f"vector<{lanes}xi32>"
    return f"""
builtin.module attributes {{minimlc.target = "{target}"}} {{
func.func @kernel(%acc: memref<{lanes}xi32>, %a: memref<{shape}>, %b: memref<{shape}>, %out: memref<{lanes}xi32>)
    attributes {{minimlc.entry}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {depth} : index
  %init = vector.load %acc[%c0] : memref<{lanes}xi32>, {kind}
  %sum = scf.for %k = %c0 to %n step %c1 iter_args(%total = %init) -> ({kind}) {{
    %y = vector.load %a[%k, %c0] : memref<{shape}>, {kind}
    %z = vector.load %b[%k, %c0] : memref<{shape}>, {kind}
    %d = llvmx.dot_u8s8 %total, %y, %z : {kind}
    scf.yield %d : {kind}
  }}
  vector.store %sum, %out[%c0] : memref<{lanes}xi32>, {kind}
  func.return
}}
}}
"""


@pytest.mark.parametrize("target", ["x86-64-v3", "x86-64-v2"])
def test_dot_u8s8_is_exact_at_the_extremes_over_long_reductions(target: str) -> None:
    """Bytes 0 or 255 times -128 or 127 summed over 4 * 3000 products a lane: where `vpmaddubsw` would saturate
    (255 * -128 * 2 < -32768) the exact sum runs to 1.5e9 and, from an accumulator near the limit, wraps."""
    lanes, depth = 8, 3000
    rng = np.random.default_rng(1)
    a = rng.choice(np.array([0, 255], np.uint8), (depth, lanes * 4))
    b = rng.choice(np.array([-128, 127], np.int8), (depth, lanes * 4))
    a[:, :16], b[:, :16] = 255, -128  # lanes 0-3: every product -32640, pairs far below int16's range
    b[:, 16:20] = 127  # lane 4: every product 255 * 127
    acc = np.array([0, -(2**31), 5, 0, 2**31 - 1, 0, 7, -9], np.int32)
    out = np.zeros(lanes, np.int32)
    words_a, words_b = a.view(np.int32), b.view(np.int32)
    call_packed(compile_mlir(reduction_kernel(target, lanes, depth)), "kernel", acc, words_a, words_b, out)
    products = (a.astype(np.int64) * b.astype(np.int64)).reshape(depth, lanes, 4).sum(axis=(0, 2))
    expected = ((acc.astype(np.int64) + products + 2**31) % 2**32 - 2**31).astype(np.int32)
    assert products[0] == -4 * 3000 * 255 * 128
    assert expected[4] != acc[4] + products[4]
    np.testing.assert_array_equal(out, expected)


def test_dot_u8s8_is_vpmaddwd_on_avx2_without_vnni() -> None:
    """AVX2 without VNNI: two `vpmaddwd` an 8-lane piece (SSE2's for 4 lanes); x86-64-v2 keeps the expansion."""
    avx2 = llvm_ir_of(dot_kernel("x86-64-v3", 16, 2))
    assert avx2.count("call <8 x i32> @llvm.x86.avx2.pmadd.wd(") == 4
    assert "vpdpbusd" not in avx2
    assert "call <4 x i32> @llvm.x86.sse2.pmadd.wd(" in llvm_ir_of(dot_kernel("x86-64-v3", 4, 2))
    assert "pmadd" not in llvm_ir_of(dot_kernel("x86-64-v2", 16, 2))
    assert "pmadd" not in llvm_ir_of(dot_kernel("znver4", 16, 2))


@pytest.mark.parametrize(
    ("target", "bits"),
    [("znver4", 512), ("icelake-server", 512), ("alderlake", 256), ("skylake-avx512", 0), ("x86-64-v3", 0)],
)
def test_target_dot_product_width(target: str, bits: int) -> None:
    """The `vpdpbusd` width a named CPU offers: AVX512-VNNI 512, AVX-VNNI 256, none on Skylake-AVX512 or AVX2."""
    assert target_from_name(target).dot_u8s8_bits == bits
    assert ("avx512vnni" in target_from_name(target).required_features) == (bits == 512)
