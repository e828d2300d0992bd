"""float16 and bfloat16 <-> float32 as integer arithmetic on the bits, for te bodies.

The conversions are written out rather than left to LLVM's `fpext`/`fptrunc`: without F16C (float16) or AVX512-BF16
(bfloat16) those become calls to compiler-rt (`__truncsfhf2`, `__truncsfbf2`), which the JIT cannot resolve. These
are a dozen vectorisable integer ops each. Rounding is to nearest even; NaN stays a (quiet) NaN of the same sign,
infinities and overflow give infinity, subnormals are exact both ways (M. Dukhan's FP16 library's branch-free
algorithms for float16).

    %h = small_floats.from_f32(%x, f16)   // arith.bitcast, shrui, addi, ... arith.bitcast %b : i16 to f16
"""

from __future__ import annotations

import struct

from xdsl.dialects import arith
from xdsl.dialects.builtin import BFloat16Type, Float16Type, FloatAttr, IntegerAttr, f32, i16, i32
from xdsl.ir import Attribute, SSAValue

from minimlc.dialects import llvm_ext
from minimlc.lowering.graph_to_te.builder import constant


def _bits(value: SSAValue) -> SSAValue:
    width = i16 if isinstance(value.type, Float16Type | BFloat16Type) else i32
    return arith.BitcastOp(value, width).result


def _float(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def _as_f32(bits: SSAValue) -> SSAValue:
    return arith.BitcastOp(bits, f32).result


def _u32(value: int) -> SSAValue:
    return constant(value, i32)


def to_f32(value: SSAValue) -> SSAValue:
    """A float16 or bfloat16 scalar as float32 (exact)."""
    wide = arith.ExtUIOp(_bits(value), i32).result
    if isinstance(value.type, BFloat16Type):
        return _as_f32(arith.ShLIOp(wide, _u32(16)).result)
    assert isinstance(value.type, Float16Type)
    shifted = arith.ShLIOp(wide, _u32(16)).result
    sign = arith.AndIOp(shifted, _u32(0x80000000)).result
    doubled = arith.AddiOp(shifted, shifted).result  # sign dropped: exponent and mantissa at the top
    # Normal numbers: the bits moved into place with the exponent rebiased, then scaled by 2^-112.
    normal_bits = arith.AddiOp(arith.ShRUIOp(doubled, _u32(4)).result, _u32(0xE0 << 23)).result
    normal = arith.MulfOp(_as_f32(normal_bits), constant(2.0**-112, f32)).result
    # Subnormals (and zero): the mantissa as the low bits of 0.5's, minus 0.5.
    subnormal_bits = arith.OrIOp(arith.ShRUIOp(doubled, _u32(17)).result, _u32(126 << 23)).result
    subnormal = arith.SubfOp(_as_f32(subnormal_bits), constant(0.5, f32)).result
    is_subnormal = arith.CmpiOp(doubled, _u32(1 << 27), "ult").result
    magnitude = arith.SelectOp(is_subnormal, _bits(subnormal), _bits(normal)).result
    return _as_f32(arith.OrIOp(sign, magnitude).result)


def from_f32(value: SSAValue, target: Attribute) -> SSAValue:
    """A float32 scalar rounded to nearest even as `target` (float16 or bfloat16)."""
    bits = _bits(value)
    if isinstance(target, BFloat16Type):
        lowest_kept = arith.AndIOp(arith.ShRUIOp(bits, _u32(16)).result, _u32(1)).result
        rounded = arith.AddiOp(bits, arith.AddiOp(lowest_kept, _u32(0x7FFF)).result).result
        quiet_nan = arith.OrIOp(bits, _u32(0x00400000)).result
        is_nan = arith.CmpfOp(value, value, "uno").result
        top = arith.ShRUIOp(arith.SelectOp(is_nan, quiet_nan, rounded).result, _u32(16)).result
        return arith.BitcastOp(arith.TruncIOp(top, i16).result, target).result
    assert isinstance(target, Float16Type)
    # Scaling by 2^112 then 2^-110 rounds away the bits float16 lacks and overflows to infinity where it must; adding
    # a power of two aligned with the result's exponent (at least float16's smallest) then rounds the mantissa.
    magnitude = arith.MulfOp(
        arith.MulfOp(_magnitude(value), constant(_float(0x77800000), f32)).result, constant(_float(0x08800000), f32)
    ).result
    doubled = arith.AddiOp(bits, bits).result
    sign = arith.AndIOp(bits, _u32(0x80000000)).result
    exponent = arith.AndIOp(doubled, _u32(0xFF000000)).result
    exponent = arith.SelectOp(arith.CmpiOp(exponent, _u32(0x71000000), "ult").result, _u32(0x71000000), exponent).result
    aligned = _as_f32(arith.AddiOp(arith.ShRUIOp(exponent, _u32(1)).result, _u32(0x07800000)).result)
    rounded = _bits(arith.AddfOp(aligned, magnitude).result)
    exponent_bits = arith.AndIOp(arith.ShRUIOp(rounded, _u32(13)).result, _u32(0x7C00)).result
    mantissa_bits = arith.AndIOp(rounded, _u32(0x0FFF)).result
    finite = arith.AddiOp(exponent_bits, mantissa_bits).result
    is_nan = arith.CmpiOp(doubled, _u32(0xFF000000), "ugt").result
    half = arith.OrIOp(arith.ShRUIOp(sign, _u32(16)).result, arith.SelectOp(is_nan, _u32(0x7E00), finite)).result
    return arith.BitcastOp(arith.TruncIOp(half, i16).result, target).result


def _magnitude(value: SSAValue) -> SSAValue:
    """|value| of a float32 by clearing the sign bit (no libm, vectorisable)."""
    return _as_f32(arith.AndIOp(_bits(value), _u32(0x7FFFFFFF)).result)


def rounded_to_bf16(value: SSAValue) -> SSAValue:
    """float32 `value` rounded to bfloat16 as the bfloat16 word packs round it (`graph_to_te/bfloat16.py`): the low
    half of an `llvmx.pack_bf16` word."""
    word = llvm_ext.PackBF16Op(value, constant(0.0, f32)).result
    return arith.BitcastOp(arith.TruncIOp(word, i16).result, BFloat16Type()).result


def rounded_operand(value: SSAValue) -> SSAValue | None:
    """The float32 value that `value` is, as `rounded_to_bf16` builds it, the rounding of; None if it is not one."""
    cast = value.owner
    if not isinstance(cast, arith.BitcastOp) or not isinstance(narrow := cast.input.owner, arith.TruncIOp):
        return None
    word = narrow.input.owner
    if not isinstance(word, llvm_ext.PackBF16Op) or not isinstance(high := word.high.owner, arith.ConstantOp):
        return None
    return word.low if high.value == FloatAttr(0.0, f32) else None


def widened_operand(value: SSAValue) -> SSAValue | None:
    """The bfloat16 value that `value` is, as `to_f32` builds it, the widening of; None if it is not one."""
    cast = value.owner
    if not isinstance(cast, arith.BitcastOp) or not isinstance(shift := cast.input.owner, arith.ShLIOp):
        return None
    wide, bits = shift.lhs.owner, shift.rhs.owner
    if not isinstance(wide, arith.ExtUIOp) or not isinstance(bits, arith.ConstantOp):
        return None
    if bits.value != IntegerAttr(16, i32) or not isinstance(as_integer := wide.input.owner, arith.BitcastOp):
        return None
    narrow = as_integer.input
    return narrow if isinstance(narrow.type, BFloat16Type) else None
