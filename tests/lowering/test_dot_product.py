"""`llvmx.dot_u8s8` through convert-to-llvm (and the direct emitter) and the JIT: the VNNI intrinsic (znver4), AVX2's
two `vpmaddwd` (x86-64-v3), its `vpmaddubsw` and `vpmaddwd` by ones where `lhs_max` bounds the unsigned bytes, and the
arith expansion (x86-64-v2, scalars) agree with numpy's u8 x s8 four-way dot product, wrapping in i32."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from minimlc.lowering.llvm.emit_ir import canonical_llvm_ir, emit_llvm_ir
from minimlc.lowering.pipeline import make_context
from minimlc.lowering.target import target_from_name
from minimlc.runtime.jit import JitModule
from tests.lowering.test_llvm_backend import call_packed, compile_mlir, llvm_ir_of


def dot_kernel(target: str, lanes: int, rows: int, lhs_max: int | None = None) -> str:
    """`out[r] = dot_u8s8(acc[r], a[r], b[r])` on vectors of `lanes` i32 (a scalar when lanes is 0), with the op's
    `lhs_max` where given."""
    bound = "" if lhs_max is None else f" {{lhs_max = {lhs_max} : i64}}"
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
    %d = llvmx.dot_u8s8 %x, %y, %z{bound} : {kind}
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


def reduction_kernel(target: str, lanes: int, depth: int, lhs_max: int | None = None) -> str:
    """`out = acc`, then `out = dot_u8s8(out, a[k], b[k])` for k below `depth`: a long reduction of dot products."""
    bound = "" if lhs_max is None else f" {{lhs_max = {lhs_max} : i64}}"
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
    %d = llvmx.dot_u8s8 %total, %y, %z{bound} : {kind}
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


def direct_llvm_ir_of(source: str) -> str:
    """The direct emitter's LLVM IR of `source` (the code generator's path)."""
    return emit_llvm_ir(Parser(make_context(), source).parse_module())


@pytest.mark.parametrize(
    ("target", "lanes", "lhs_max"),
    [
        ("x86-64-v3", 16, 15),
        ("x86-64-v3", 4, 15),
        ("x86-64-v3", 12, 15),
        ("x86-64-v3", 0, 15),
        ("x86-64-v3", 16, 128),
        ("x86-64-v2", 8, 15),
        ("znver4", 16, 15),
    ],
)
def test_bounded_dot_product_matches_the_unbounded_one(target: str, lanes: int, lhs_max: int) -> None:
    """Unsigned bytes at most `lhs_max` (int4 codes: 15; 128, the largest `vpmaddubsw` sums exactly): both paths'
    code gives what the op without the bound gives, and numpy, at the extremes (0 and `lhs_max` times -128 and 127:
    pair sums down to -2 * 128 * 128 = -32768) and at random, wrapping in i32."""
    if target_from_name(target).missing_on_host():
        pytest.skip(f"this host cannot run code for {target}")
    rows, width = 6, max(lanes, 1)
    rng = np.random.default_rng(lhs_max + lanes)
    a = rng.integers(0, lhs_max + 1, (rows, width * 4)).astype(np.uint8)
    b = rng.integers(-128, 128, (rows, width * 4)).astype(np.int8)
    a[:3], b[0], b[1], b[2] = lhs_max, -128, 127, -128
    a[2, ::2] = 0
    a[3], b[3] = (
        rng.choice(np.array([0, lhs_max], np.uint8), width * 4),
        rng.choice(np.array([-128, 127], np.int8), width * 4),
    )
    acc = rng.integers(-(2**31), 2**31, (rows, width), dtype=np.int64).astype(np.int32)
    acc[0], acc[1] = -(2**31), 2**31 - 1  # both wrap
    words_a, words_b = a.view(np.int32), b.view(np.int32)
    expected = reference(acc, words_a, words_b)
    assert expected[0, 0] > 0  # wrapped
    assert expected[1, 0] < 0
    bounded, unbounded = dot_kernel(target, lanes, rows, lhs_max), dot_kernel(target, lanes, rows)
    for jit in (compile_mlir(bounded), JitModule(direct_llvm_ir_of(bounded)), compile_mlir(unbounded)):
        out = np.zeros((rows, width), np.int32)
        call_packed(jit, "kernel", acc, words_a, words_b, out)
        np.testing.assert_array_equal(out, expected)


def test_bounded_dot_product_is_vpmaddubsw_on_avx2_without_vnni() -> None:
    """`lhs_max` at most 128 on AVX2 without VNNI: a `vpmaddubsw` and a `vpmaddwd` by ones an 8-lane piece (SSSE3's
    for 4 lanes); a larger bound keeps two `vpmaddwd`, VNNI its `vpdpbusd`, x86-64-v2 the expansion."""
    bounded = llvm_ir_of(dot_kernel("x86-64-v3", 16, 2, 15))
    assert bounded.count("call <16 x i16> @llvm.x86.avx2.pmadd.ub.sw(<32 x i8>") == 2
    assert bounded.count("call <8 x i32> @llvm.x86.avx2.pmadd.wd(<16 x i16>") == 2
    assert "call <8 x i16> @llvm.x86.ssse3.pmadd.ub.sw.128(<16 x i8>" in llvm_ir_of(dot_kernel("x86-64-v3", 4, 2, 15))
    wide = llvm_ir_of(dot_kernel("x86-64-v3", 16, 2, 129))
    assert "pmadd.ub.sw" not in wide
    assert wide.count("@llvm.x86.avx2.pmadd.wd(") == 5  # 4 calls, 1 declaration
    assert "pmadd" not in llvm_ir_of(dot_kernel("znver4", 32, 2, 15))
    assert "pmadd" not in llvm_ir_of(dot_kernel("x86-64-v2", 16, 2, 15))


@pytest.mark.parametrize(("target", "lanes"), [("x86-64-v3", 16), ("x86-64-v3", 4), ("x86-64-v3", 0), ("znver4", 32)])
def test_direct_emitter_gives_the_bounded_dot_product_of_the_passes(target: str, lanes: int) -> None:
    """`emit_llvm_ir` and convert-to-llvm give the same LLVM IR for a bounded dot product (`vpmaddubsw` pieces,
    SSSE3's, the expansion of a scalar, `vpdpbusd`)."""
    source = dot_kernel(target, lanes, 2, 15)
    assert canonical_llvm_ir(direct_llvm_ir_of(source)) == canonical_llvm_ir(llvm_ir_of(source))


def test_lhs_max_beyond_a_byte_is_rejected() -> None:
    module = Parser(make_context(), dot_kernel("x86-64-v3", 8, 2, 256)).parse_module()
    with pytest.raises(VerifyException) as error:
        module.verify()
    assert str(error.value).splitlines()[0] == "llvmx.dot_u8s8: lhs_max 256 is not an unsigned byte (0 to 255)"
