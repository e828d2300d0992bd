"""`llvmx.dot_u8s8 {rhs_bits = 7}` (weights the importer found in [-64, 63]): AVX2 without VNNI takes `vpmaddubsw`
and `vpmaddwd` by ones, exact for every unsigned byte; numpy agrees at the extremes (255 x -64: pair sums -32640),
both emitters give the same IR, VNNI keeps `vpdpbusd`, and 8 bits keep the two exact `vpmaddwd`."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from minimlc.lowering.llvm.emit_ir import canonical_llvm_ir
from minimlc.lowering.pipeline import make_context
from minimlc.lowering.strategy.dot_product_form import maddubs_exact
from minimlc.lowering.target import target_from_name
from minimlc.runtime.jit import JitModule
from tests.lowering.test_dot_product import direct_llvm_ir_of, dot_kernel, reference
from tests.lowering.test_llvm_backend import call_packed, compile_mlir, llvm_ir_of


def narrow_kernel(target: str, lanes: int, rows: int, rhs_bits: int) -> str:
    """`dot_kernel` whose dot product states that its signed bytes fit `rhs_bits` bits."""
    source = dot_kernel(target, lanes, rows)
    kind = f"vector<{lanes}xi32>" if lanes else "i32"
    plain = f"llvmx.dot_u8s8 %x, %y, %z : {kind}"
    assert plain in source
    return source.replace(plain, f"llvmx.dot_u8s8 %x, %y, %z {{rhs_bits = {rhs_bits} : i64}} : {kind}")


def test_maddubs_is_exact_exactly_within_int16() -> None:
    """The bound: 255 x 7-bit and 128 x 8-bit pair sums stay in int16 (-32640, -32768); 255 x 8 bits does not."""
    assert all(maddubs_exact(lhs, bits) for lhs, bits in ((255, 7), (128, 8), (15, 8)))
    assert not any(maddubs_exact(lhs, bits) for lhs, bits in ((255, 8), (129, 8), (200, 8)))


@pytest.mark.parametrize(("target", "lanes"), [("znver3", 16), ("znver3", 4), ("znver3", 12), ("znver3", 0)])
def test_seven_bit_dot_product_matches_numpy_at_the_extremes(target: str, lanes: int) -> None:
    """Unsigned bytes 0 and 255 times signed -64 and 63 (and random ones in range), from accumulators that wrap:
    the `vpmaddubsw` code (both emitters) and numpy's exact sums agree."""
    if target_from_name(target).missing_on_host():
        pytest.skip(f"this host cannot run code for {target}")
    rows, width = 6, max(lanes, 1)
    rng = np.random.default_rng(lanes)
    a = rng.integers(0, 256, (rows, width * 4)).astype(np.uint8)
    b = rng.integers(-64, 64, (rows, width * 4)).astype(np.int8)
    a[:3], b[0], b[1], b[2] = 255, -64, 63, -64
    a[2, ::2] = 0
    a[3] = rng.choice(np.array([0, 255], np.uint8), width * 4)
    b[3] = rng.choice(np.array([-64, 63], np.int8), width * 4)
    acc = rng.integers(-(2**31), 2**31, (rows, width), dtype=np.int64).astype(np.int32)
    acc[0], acc[1] = -(2**31), 2**31 - 1
    words_a, words_b = a.view(np.int32), b.view(np.int32)
    expected = reference(acc, words_a, words_b)
    assert expected[0, 0] > 0  # wrapped
    assert expected[1, 0] < 0
    source = narrow_kernel(target, lanes, rows, 7)
    for jit in (compile_mlir(source), JitModule(direct_llvm_ir_of(source))):
        out = np.zeros((rows, width), np.int32)
        call_packed(jit, "kernel", acc, words_a, words_b, out)
        np.testing.assert_array_equal(out, expected)


def test_seven_bit_dot_product_is_vpmaddubsw_on_znver3_only() -> None:
    """znver3 (AVX2, no VNNI): `vpmaddubsw` + `vpmaddwd` by ones per 8 lanes for 7 bits, two exact `vpmaddwd` for
    8 bits; znver4 (VNNI) `vpdpbusd` either way."""
    narrow = llvm_ir_of(narrow_kernel("znver3", 16, 2, 7))
    assert narrow.count("call <16 x i16> @llvm.x86.avx2.pmadd.ub.sw(<32 x i8>") == 2
    assert "shl <16 x i16>" not in narrow
    assert "pmadd.ub.sw" not in llvm_ir_of(narrow_kernel("znver3", 16, 2, 8))
    vnni = llvm_ir_of(narrow_kernel("znver4", 32, 2, 7))
    assert "llvm.x86.avx512.vpdpbusd.512" in vnni
    assert "pmadd" not in vnni


def test_direct_emitter_gives_the_seven_bit_dot_product_of_the_passes() -> None:
    source = narrow_kernel("znver3", 16, 2, 7)
    assert canonical_llvm_ir(direct_llvm_ir_of(source)) == canonical_llvm_ir(llvm_ir_of(source))


def test_rhs_bits_beyond_a_byte_is_rejected() -> None:
    module = Parser(make_context(), narrow_kernel("znver3", 8, 2, 9)).parse_module()
    with pytest.raises(VerifyException) as error:
        module.verify()
    assert str(error.value).splitlines()[0] == "llvmx.dot_u8s8: rhs_bits 9 is not a signed byte's width (1 to 8)"
