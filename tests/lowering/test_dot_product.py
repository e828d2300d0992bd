"""`llvmx.dot_u8s8` through convert-to-llvm and the JIT: the VNNI intrinsic (znver4) and the arith expansion
(x86-64-v3, scalars) agree with numpy's u8 x s8 four-way dot product, wrapping in i32."""

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
    [("znver4", 16), ("znver4", 32), ("znver4", 8), ("znver4", 12), ("x86-64-v3", 16), ("x86-64-v3", 0)],
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


@pytest.mark.parametrize(
    ("target", "bits"),
    [("znver4", 512), ("icelake-server", 512), ("alderlake", 256), ("skylake-avx512", 0), ("x86-64-v3", 0)],
)
def test_target_dot_product_width(target: str, bits: int) -> None:
    """The `vpdpbusd` width a named CPU offers: AVX512-VNNI 512, AVX-VNNI 256, none on Skylake-AVX512 or AVX2."""
    assert target_from_name(target).dot_u8s8_bits == bits
    assert ("avx512vnni" in target_from_name(target).required_features) == (bits == 512)
