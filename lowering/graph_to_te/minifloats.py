"""float8 (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ, E8M0FNU) and float4 (E2M1FN) <-> float32 as arithmetic on the bits, for
te bodies.

Decoding assembles the float32 bits from the sign, exponent and mantissa fields (subnormals as `mantissa * 2^(1 -
bias - M)`). Encoding rounds `|x|` to nearest even at the format's precision in its binade (`roundeven(|x| / q) * q`
with `q` the binade's (or the subnormals') quantum, a power of two, so both steps are exact), then writes the fields;
above the largest finite value it saturates (ONNX Cast's `saturate`, the default; float4 always) or gives infinity
(E5M2) or NaN (the others), as ml_dtypes and ONNX's reference do. NaN stays NaN, and the FNUZ formats have no -0.
A float4 lives in the low 4 bits of a byte (`te-to-loop` stores it as `i8`, as ml_dtypes does). E8M0 (a bare
exponent, used for block scales) has casts of its own (`e8m0_to_f32`, `f32_to_e8m0`): ONNX rounds it by Cast's
`round_mode`, not to nearest even.

    %b = arith.bitcast %x : f8E4M3FN to i8 ; %c = arith.extui %b : i8 to i32 ; ... ; %y = arith.bitcast %f : i32 to f32
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    Float4E2M1FNType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    IntegerType,
    f32,
    i32,
)
from xdsl.ir import Attribute, SSAValue

from minimlc.lowering.graph_to_te.builder import constant


@dataclass(frozen=True)
class Format:
    """A small float format: exponent and mantissa widths, exponent bias, and how it spells the special values."""

    exponent: int
    mantissa: int
    bias: int
    largest: float
    nan: int | None
    """NaN's code without the sign (None: a NaN casts to -0, as ml_dtypes does for float4)."""
    infinity: int | None = None
    unsigned_zero: bool = False
    """FNUZ: 0x80 is NaN, so there is no -0."""

    @property
    def width(self) -> int:
        return 1 + self.exponent + self.mantissa


FORMATS: dict[type[Attribute], Format] = {
    Float8E4M3FNType: Format(4, 3, 7, 448.0, nan=0x7F),
    Float8E4M3FNUZType: Format(4, 3, 8, 240.0, nan=0x80, unsigned_zero=True),
    Float8E5M2Type: Format(5, 2, 15, 57344.0, nan=0x7E, infinity=0x7C),
    Float8E5M2FNUZType: Format(5, 2, 16, 57344.0, nan=0x80, unsigned_zero=True),
    Float4E2M1FNType: Format(2, 1, 1, 6.0, nan=None),
}
"""The formats this module converts, by xDSL type."""


def format_of(type: Attribute) -> Format | None:
    return FORMATS.get(type.__class__)


def _c(value: int) -> SSAValue:
    return constant(value, i32)


def _power_of_two(exponent: SSAValue) -> SSAValue:
    """2^exponent as f32, for an i32 exponent in float32's normal range."""
    return arith.BitcastOp(arith.ShLIOp(arith.AddiOp(exponent, _c(127)).result, _c(23)).result, f32).result


def _float(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def to_f32(value: SSAValue) -> SSAValue:
    """A small float scalar as float32 (exact)."""
    form = format_of(value.type)
    assert form is not None
    code = arith.ExtUIOp(arith.BitcastOp(value, IntegerType(form.width)).result, i32).result
    exponent = arith.AndIOp(arith.ShRUIOp(code, _c(form.mantissa)).result, _c((1 << form.exponent) - 1)).result
    mantissa = arith.AndIOp(code, _c((1 << form.mantissa) - 1)).result
    normal = arith.OrIOp(
        arith.ShLIOp(arith.AddiOp(exponent, _c(127 - form.bias)).result, _c(23)).result,
        arith.ShLIOp(mantissa, _c(23 - form.mantissa)).result,
    ).result
    subnormal = arith.MulfOp(
        arith.UIToFPOp(mantissa, f32).result, constant(2.0 ** (1 - form.bias - form.mantissa), f32)
    ).result
    is_subnormal = arith.CmpiOp(exponent, _c(0), "eq").result
    magnitude = arith.SelectOp(is_subnormal, arith.BitcastOp(subnormal, i32).result, normal).result
    top = (1 << form.exponent) - 1
    if form.infinity is not None:  # E5M2: the top exponent is infinity (mantissa 0) or NaN
        special = arith.OrIOp(_c(0x7F800000), arith.ShLIOp(mantissa, _c(23 - form.mantissa)).result).result
        magnitude = arith.SelectOp(arith.CmpiOp(exponent, _c(top), "eq").result, special, magnitude).result
    sign = arith.ShLIOp(arith.ShRUIOp(code, _c(form.width - 1)).result, _c(31)).result
    result = arith.BitcastOp(arith.OrIOp(sign, magnitude).result, f32).result
    if form.nan is None:
        return result
    nan_code = form.nan if form.unsigned_zero else form.nan & ((1 << (form.width - 1)) - 1)
    magnitude_code = code if form.unsigned_zero else arith.AndIOp(code, _c((1 << (form.width - 1)) - 1)).result
    is_nan = arith.CmpiOp(magnitude_code, _c(nan_code), "eq").result
    if form.infinity is not None:
        is_nan = arith.AndIOp(
            arith.CmpiOp(exponent, _c(top), "eq").result, arith.CmpiOp(mantissa, _c(0), "ne").result
        ).result
    return arith.SelectOp(is_nan, constant(float("nan"), f32), result).result


def from_f32(value: SSAValue, target: Attribute, *, saturate: bool) -> SSAValue:
    """A float32 scalar rounded to nearest even as the small float `target`."""
    form = format_of(target)
    assert form is not None
    saturate = saturate or form.nan is None
    bits = arith.BitcastOp(value, i32).result
    magnitude = arith.BitcastOp(arith.AndIOp(bits, _c(0x7FFFFFFF)).result, f32).result
    exponent = arith.SubiOp(arith.ShRUIOp(arith.AndIOp(bits, _c(0x7F800000)).result, _c(23)).result, _c(127)).result
    lowest_normal = 1 - form.bias
    quantum = _power_of_two(arith.SubiOp(arith.MaxSIOp(exponent, _c(lowest_normal)).result, _c(form.mantissa)).result)
    rounded = arith.MulfOp(math.RoundEvenOp(arith.DivfOp(magnitude, quantum).result).result, quantum).result
    largest = constant(form.largest, f32)
    overflows = arith.CmpfOp(rounded, largest, "ogt").result
    if saturate:
        rounded = arith.SelectOp(overflows, largest, rounded).result
    # The fields of `rounded`, now exactly representable (or above the largest value without saturation).
    rounded_bits = arith.BitcastOp(rounded, i32).result
    rounded_exponent = arith.SubiOp(arith.ShRUIOp(rounded_bits, _c(23)).result, _c(127)).result
    normal = arith.OrIOp(
        arith.ShLIOp(arith.AddiOp(rounded_exponent, _c(form.bias)).result, _c(form.mantissa)).result,
        arith.AndIOp(arith.ShRUIOp(rounded_bits, _c(23 - form.mantissa)).result, _c((1 << form.mantissa) - 1)).result,
    ).result
    scaled = arith.MulfOp(rounded, constant(2.0 ** (form.mantissa - lowest_normal), f32)).result
    subnormal = arith.FPToSIOp(arith.MinimumfOp(scaled, constant(float(1 << form.mantissa), f32)).result, i32).result
    is_subnormal = arith.CmpiOp(rounded_exponent, _c(lowest_normal), "slt").result
    code = arith.SelectOp(is_subnormal, subnormal, normal).result
    if not saturate:
        overflow_code = form.infinity if form.infinity is not None else form.nan
        assert overflow_code is not None
        code = arith.SelectOp(overflows, _c(overflow_code), code).result
    sign = arith.ShLIOp(arith.ShRUIOp(bits, _c(31)).result, _c(form.width - 1)).result
    if form.unsigned_zero:  # no -0: a zero keeps no sign
        sign = arith.SelectOp(arith.CmpiOp(code, _c(0), "eq").result, _c(0), sign).result
    code = arith.OrIOp(code, sign).result
    is_nan = arith.CmpfOp(value, value, "uno").result
    nan_code = 1 << (form.width - 1) if form.nan is None else form.nan
    code = arith.SelectOp(is_nan, _c(nan_code), code).result
    narrow = arith.TruncIOp(code, IntegerType(form.width)).result
    return arith.BitcastOp(narrow, target).result


def e8m0_to_f32(value: SSAValue) -> SSAValue:
    """An E8M0 scalar (a float32 exponent alone: 2^(code - 127), code 255 NaN) as float32, exactly; code 0 is
    2^-127, a float32 subnormal."""
    code = arith.ExtUIOp(arith.BitcastOp(value, IntegerType(8)).result, i32).result
    bits = arith.SelectOp(arith.CmpiOp(code, _c(0), "eq").result, _c(0x00400000), arith.ShLIOp(code, _c(23)).result)
    bits = arith.SelectOp(arith.CmpiOp(code, _c(0xFF), "eq").result, _c(0x7FC00000), bits.result)
    return arith.BitcastOp(bits.result, f32).result


def f32_to_e8m0(value: SSAValue, target: Attribute, *, saturate: bool, round_mode: str) -> SSAValue:
    """A float32 scalar as E8M0, as ONNX defines the cast: the exponent field of |x|, plus one where `round_mode`
    rounds the mantissa up (`up`: any fraction; `nearest`: guard bit and (round, sticky or a nonzero exponent);
    `down`: never); with `saturate`, 2^127 does not round up into NaN; infinity and NaN give NaN (255)."""
    bits = arith.BitcastOp(value, i32).result

    def has(mask: int) -> SSAValue:
        return arith.CmpiOp(arith.AndIOp(bits, _c(mask)).result, _c(0), "ne").result

    exponent = arith.AndIOp(arith.ShRUIOp(bits, _c(23)).result, _c(0xFF)).result
    if round_mode == "up":
        round_up = has(0x7FFFFF)
    elif round_mode == "nearest":
        kept_odd = arith.CmpiOp(exponent, _c(0), "ne").result
        tie_or_above = arith.OrIOp(arith.OrIOp(has(0x200000), has(0x1FFFFF)).result, kept_odd).result
        round_up = arith.AndIOp(has(0x400000), tie_or_above).result
    else:
        round_up = constant(0, IntegerType(1))
    if saturate:
        below_top = arith.CmpiOp(exponent, _c(0xFE), "ne").result
        round_up = arith.AndIOp(round_up, below_top).result
    code = arith.AddiOp(exponent, arith.ExtUIOp(round_up, i32).result).result
    code = arith.SelectOp(arith.CmpiOp(exponent, _c(0xFF), "eq").result, _c(0xFF), code).result
    return arith.BitcastOp(arith.TruncIOp(code, IntegerType(8)).result, target).result
