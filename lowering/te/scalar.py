"""Scalar arithmetic by element type for te bodies: what one element of an elementwise op computes on f32, i32, i64
or i1 values, with ONNX's semantics.

Integer division truncates toward zero (C, ONNX); a zero divisor gives 0 and `MIN / -1` wraps, instead of the
undefined behaviour (a trap on x86) of LLVM's `sdiv`. Casts from f32 to integers truncate toward zero and saturate at
the type's bounds, NaN giving 0 (LLVM's plain `fptosi` would give poison there); anything nonzero (NaN included)
casts to a true bool.

    %q = scalar.divide(%a, %b)   // i64: select(b == 0, 0, select(b == -1, 0 - a, a / b))
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import IntegerType, f32
from xdsl.ir import Attribute, SSAValue

from minimlc.lowering.te.builder import constant

Binary = Callable[[SSAValue, SSAValue], SSAValue]

_FLOAT_ARITHMETIC: dict[str, Binary] = {
    "add": lambda a, b: arith.AddfOp(a, b).result,
    "sub": lambda a, b: arith.SubfOp(a, b).result,
    "mul": lambda a, b: arith.MulfOp(a, b).result,
    "div": lambda a, b: arith.DivfOp(a, b).result,
    "max": lambda a, b: arith.MaximumfOp(a, b).result,
    "min": lambda a, b: arith.MinimumfOp(a, b).result,
    "pow": lambda a, b: math.PowFOp(a, b).result,
}
_INTEGER_ARITHMETIC: dict[str, Binary] = {
    "add": lambda a, b: arith.AddiOp(a, b).result,
    "sub": lambda a, b: arith.SubiOp(a, b).result,
    "mul": lambda a, b: arith.MuliOp(a, b).result,
    "div": lambda a, b: divide(a, b),
    "max": lambda a, b: arith.MaxSIOp(a, b).result,
    "min": lambda a, b: arith.MinSIOp(a, b).result,
    "and": lambda a, b: arith.AndIOp(a, b).result,
    "or": lambda a, b: arith.OrIOp(a, b).result,
    "xor": lambda a, b: arith.XOrIOp(a, b).result,
    "pow": lambda a, b: integer_power(a, b),
}
_COMPARISONS = {
    "equal": ("oeq", "eq"),
    "less": ("olt", "slt"),
    "less_or_equal": ("ole", "sle"),
    "greater": ("ogt", "sgt"),
    "greater_or_equal": ("oge", "sge"),
}
"""Comparison -> (cmpf predicate: NaN compares false, cmpi predicate)."""


def binary(kind: str, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    """`lhs <kind> rhs` for an elementwise binary op's kind (`add`, `less`, `and`, ...) on their element type."""
    if kind in _COMPARISONS:
        ordered, signed = _COMPARISONS[kind]
        if isinstance(lhs.type, IntegerType):
            return arith.CmpiOp(lhs, rhs, signed).result
        return arith.CmpfOp(lhs, rhs, ordered).result
    table = _INTEGER_ARITHMETIC if isinstance(lhs.type, IntegerType) else _FLOAT_ARITHMETIC
    return table[kind](lhs, rhs)


def _is(value: SSAValue, number: int) -> SSAValue:
    return arith.CmpiOp(value, constant(number, value.type), "eq").result


def _safe_divisor(divisor: SSAValue) -> SSAValue:
    """The divisor, or 1 where it is 0 or -1 (the cases LLVM's `sdiv`/`srem` leave undefined)."""
    unsafe = arith.OrIOp(_is(divisor, 0), _is(divisor, -1)).result
    return arith.SelectOp(unsafe, constant(1, divisor.type), divisor).result


def divide(lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    """Integer division truncating toward zero; 0 for a zero divisor, wrapping negation for -1."""
    zero = constant(0, lhs.type)
    quotient = arith.DivSIOp(lhs, _safe_divisor(rhs)).result
    negated = arith.SelectOp(_is(rhs, -1), arith.SubiOp(zero, lhs).result, quotient).result
    return arith.SelectOp(_is(rhs, 0), zero, negated).result


def integer_power(base: SSAValue, exponent: SSAValue) -> SSAValue:
    """`base ** exponent` of integers by square-and-multiply over every bit of the exponent, wrapping as C does; a
    negative exponent truncates `1 / base ** -exponent`: 1 for base 1, -1 or 1 for base -1, 0 otherwise."""
    one, zero = constant(1, base.type), constant(0, base.type)

    def is_odd(value: SSAValue) -> SSAValue:
        low_bit = arith.AndIOp(value, constant(1, value.type)).result
        return arith.CmpiOp(low_bit, constant(0, value.type), "ne").result

    result, square, bits = one, base, exponent
    for _ in range(_width(exponent.type) - 1):
        result = arith.SelectOp(is_odd(bits), arith.MuliOp(result, square).result, result).result
        square = arith.MuliOp(square, square).result
        bits = arith.ShRUIOp(bits, constant(1, exponent.type)).result
    minus_one_power = arith.SelectOp(is_odd(exponent), constant(-1, base.type), one).result
    reciprocal = arith.SelectOp(_is(base, 1), one, arith.SelectOp(_is(base, -1), minus_one_power, zero).result).result
    negative = arith.CmpiOp(exponent, constant(0, exponent.type), "slt").result
    return arith.SelectOp(negative, reciprocal, result).result


def remainder(lhs: SSAValue, rhs: SSAValue, *, fmod: bool) -> SSAValue:
    """ONNX Mod of integers: the sign of the dividend (`fmod`, C's `%`) or of the divisor (numpy `mod`); 0 for a zero
    divisor."""
    zero = constant(0, lhs.type)
    truncated = arith.RemSIOp(lhs, _safe_divisor(rhs)).result
    if not fmod:
        signs_differ = arith.CmpiOp(
            arith.CmpiOp(truncated, zero, "slt").result, arith.CmpiOp(rhs, zero, "slt").result, "ne"
        ).result
        adjust = arith.AndIOp(arith.CmpiOp(truncated, zero, "ne").result, signs_differ).result
        truncated = arith.SelectOp(adjust, arith.AddiOp(truncated, rhs).result, truncated).result
    return arith.SelectOp(_is(rhs, 0), zero, truncated).result


def negate(value: SSAValue) -> SSAValue:
    if isinstance(value.type, IntegerType):
        return arith.SubiOp(constant(0, value.type), value).result
    return arith.NegfOp(value).result


def absolute(value: SSAValue) -> SSAValue:
    if isinstance(value.type, IntegerType):
        negative = arith.CmpiOp(value, constant(0, value.type), "slt").result
        return arith.SelectOp(negative, negate(value), value).result
    return math.AbsFOp(value).result


def logical_not(value: SSAValue) -> SSAValue:
    return arith.XOrIOp(value, constant(1, value.type)).result


def _width(element: Attribute) -> int:
    assert isinstance(element, IntegerType)
    return element.width.data


def cast(value: SSAValue, target: Attribute) -> SSAValue:
    """`value` converted to `target` (f32, i32, i64 or i1) with ONNX Cast's rules (see the module docstring)."""
    source = value.type
    if source == target:
        return value
    if isinstance(target, IntegerType) and _width(target) == 1:
        if isinstance(source, IntegerType):
            return arith.CmpiOp(value, constant(0, source), "ne").result
        return arith.CmpfOp(value, constant(0.0, source), "une").result
    if isinstance(source, IntegerType) and _width(source) == 1:
        if isinstance(target, IntegerType):
            return arith.ExtUIOp(value, target).result
        return arith.UIToFPOp(value, target).result
    if isinstance(source, IntegerType) and isinstance(target, IntegerType):
        if _width(source) < _width(target):
            return arith.ExtSIOp(value, target).result
        return arith.TruncIOp(value, target).result
    if isinstance(source, IntegerType):
        return arith.SIToFPOp(value, target).result
    assert source == f32 and isinstance(target, IntegerType)
    return _saturating_to_integer(value, target)


def _saturating_to_integer(value: SSAValue, target: IntegerType) -> SSAValue:
    """f32 -> integer, truncating toward zero, saturating at the bounds, NaN -> 0 (all defined in LLVM)."""
    width = target.width.data
    lowest = float(-(1 << (width - 1)))
    highest = float(1 << (width - 1))  # not representable in the target: clamp just below it
    below_highest = highest - 2.0 ** (width - 25)  # the largest f32 below 2^(width-1)
    clamped = arith.MinimumfOp(arith.MaximumfOp(value, constant(lowest, f32)).result, constant(below_highest, f32))
    converted = arith.FPToSIOp(clamped.result, target).result
    top = arith.CmpfOp(value, constant(highest, f32), "oge").result
    saturated = arith.SelectOp(top, constant((1 << (width - 1)) - 1, target), converted).result
    is_nan = arith.CmpfOp(value, value, "uno").result
    return arith.SelectOp(is_nan, constant(0, target), saturated).result
