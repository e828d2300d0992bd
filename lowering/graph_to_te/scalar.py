"""Scalar arithmetic by element type for te bodies: what one element of an elementwise op computes on f32, f64,
signed (`i8`..`i64`), unsigned (`ui8`..`ui64`) or i1 values, with ONNX's semantics.

At the te level a scalar's type carries its signedness, and this module picks the op that matches: unsigned values
divide, compare, take min/max, widen and convert to floats with the unsigned ops (`divui`, `cmpi ult`, `maxui`,
`extui`, `uitofp`); `te-to-loop` then makes every type signless. Integer division truncates toward zero (C, ONNX); a
zero divisor gives 0 and `MIN / -1` wraps, instead of the undefined behaviour (a trap on x86) of LLVM's `sdiv`.
Casts from floats to integers truncate toward zero as ONNX Runtime's do (x86-64's `cvttss2si`/`cvttsd2si`, checked
against ONNX Runtime 1.32 for float32 and float64 to every integer type): NaN, infinities and values outside a 32- or
64-bit signed range give that range's minimum (INT_MIN), 8- and 16-bit targets keep the low bits of the 32-bit
conversion (NaN -> 0, 300.0 -> int8 44, -3.7 -> uint8 253), and 32- and 64-bit unsigned ones convert x - 2^(w-1) where
x >= 2^(w-1) and flip the top bit (NaN and -inf -> 2^(w-1), +inf -> 0; ONNX Runtime's SIMD blocks do so, the few
elements of its scalar tail converting to uint32 through int64 instead: NaN -> 0 there); `fptosi` only ever sees
values in range (LLVM gives poison outside). Anything nonzero (NaN included) casts to a true bool. float16 and
bfloat16 convert through f32 (`small_floats`), and so do float8 and float4 (`minifloats`); 4- and 2-bit integers
through i32, keeping their low bits (wrapping, as ml_dtypes does).

    %q = scalar.divide(%a, %b)   // i64: select(b == 0, 0, select(b == -1, 0 - a, a / b))
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith, llvm, math
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    Float8E8M0FNUType,
    Float16Type,
    IntegerType,
    Signedness,
    f32,
    i32,
)
from xdsl.ir import Attribute, SSAValue

from minimlc.lowering.graph_to_te import minifloats, small_floats
from minimlc.lowering.graph_to_te.builder import constant

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
    "shift_left": lambda a, b: shift(a, b, left=True),
    "shift_right": lambda a, b: shift(a, b, left=False),
}
_UNSIGNED_ARITHMETIC: dict[str, Binary] = {
    **_INTEGER_ARITHMETIC,
    "div": lambda a, b: _unsigned_divide(a, b),
    "max": lambda a, b: arith.MaxUIOp(a, b).result,
    "min": lambda a, b: arith.MinUIOp(a, b).result,
}
_COMPARISONS = {
    "equal": ("oeq", "eq", "eq"),
    "less": ("olt", "slt", "ult"),
    "less_or_equal": ("ole", "sle", "ule"),
    "greater": ("ogt", "sgt", "ugt"),
    "greater_or_equal": ("oge", "sge", "uge"),
}
"""Comparison -> (cmpf predicate: NaN compares false, signed cmpi predicate, unsigned cmpi predicate)."""


def is_unsigned(type: Attribute) -> bool:
    """Whether a te scalar type is an unsigned integer (`ui8`..`ui64`)."""
    return isinstance(type, IntegerType) and type.signedness.data == Signedness.UNSIGNED


def binary(kind: str, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    """`lhs <kind> rhs` for an elementwise binary op's kind (`add`, `less`, `and`, ...) on their element type."""
    if kind in _COMPARISONS:
        ordered, signed, unsigned = _COMPARISONS[kind]
        if isinstance(lhs.type, IntegerType):
            return arith.CmpiOp(lhs, rhs, unsigned if is_unsigned(lhs.type) else signed).result
        return arith.CmpfOp(lhs, rhs, ordered).result
    if is_unsigned(lhs.type):
        return _UNSIGNED_ARITHMETIC[kind](lhs, rhs)
    table = _INTEGER_ARITHMETIC if isinstance(lhs.type, IntegerType) else _FLOAT_ARITHMETIC
    return table[kind](lhs, rhs)


def _is(value: SSAValue, number: int) -> SSAValue:
    return arith.CmpiOp(value, constant(number, value.type), "eq").result


def _safe_divisor(divisor: SSAValue) -> SSAValue:
    """The divisor, or 1 where it is 0 or -1 (the cases LLVM's `sdiv`/`srem` leave undefined)."""
    unsafe = arith.OrIOp(_is(divisor, 0), _is(divisor, -1)).result
    return arith.SelectOp(unsafe, constant(1, divisor.type), divisor).result


def _unsigned_divide(lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    """Unsigned division; 0 for a zero divisor."""
    zero, one = constant(0, lhs.type), constant(1, lhs.type)
    divisor_zero = _is(rhs, 0)
    quotient = arith.DivUIOp(lhs, arith.SelectOp(divisor_zero, one, rhs).result).result
    return arith.SelectOp(divisor_zero, zero, quotient).result


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
    divisor; unsigned, both are the plain remainder. Floats: C's `fmod`, numpy's `mod` (NaN for a zero divisor)."""
    if isinstance(lhs.type, AnyFloat):
        truncated = llvm.FRemOp(lhs, rhs).res  # arith has no remf: LLVM's frem is C's fmod
        if fmod:
            return truncated
        zero = constant(0.0, lhs.type)
        signs_differ = arith.XOrIOp(
            arith.CmpfOp(truncated, zero, "olt").result, arith.CmpfOp(rhs, zero, "olt").result
        ).result
        adjust = arith.AndIOp(arith.CmpfOp(truncated, zero, "one").result, signs_differ).result
        return arith.SelectOp(adjust, arith.AddfOp(truncated, rhs).result, truncated).result
    zero = constant(0, lhs.type)
    if is_unsigned(lhs.type):
        divisor_zero = _is(rhs, 0)
        safe = arith.SelectOp(divisor_zero, constant(1, rhs.type), rhs).result
        return arith.SelectOp(divisor_zero, zero, arith.RemUIOp(lhs, safe).result).result
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
    if is_unsigned(value.type):
        return value
    if isinstance(value.type, IntegerType):
        negative = arith.CmpiOp(value, constant(0, value.type), "slt").result
        return arith.SelectOp(negative, negate(value), value).result
    return math.AbsFOp(value).result


def logical_not(value: SSAValue) -> SSAValue:
    """Not of a bool, every bit flipped of a wider integer."""
    return arith.XOrIOp(value, constant(1 if _width(value.type) == 1 else -1, value.type)).result


def shift(value: SSAValue, amount: SSAValue, *, left: bool) -> SSAValue:
    """ONNX BitShift: `value << amount` or `value >> amount` (logical if unsigned, arithmetic if signed). An amount that
    is negative or at least the width (LLVM's poison) shifts every bit out: 0, or the sign fill of a signed right
    shift. The amount is clamped before the shift so that no shift sees an out-of-range amount."""
    width = _width(value.type)
    in_range = arith.CmpiOp(amount, constant(width, amount.type), "ult").result  # a negative amount is huge unsigned
    zero = constant(0, value.type)
    safe = arith.SelectOp(in_range, amount, zero).result
    if left:
        return arith.SelectOp(in_range, arith.ShLIOp(value, safe).result, zero).result
    if is_unsigned(value.type):
        return arith.SelectOp(in_range, arith.ShRUIOp(value, safe).result, zero).result
    sign_fill = arith.ShRSIOp(value, constant(width - 1, value.type)).result
    return arith.SelectOp(in_range, arith.ShRSIOp(value, safe).result, sign_fill).result


def bitcast(value: SSAValue, target: Attribute) -> SSAValue:
    """`value`'s bits as `target`, of the same stored width; a bool is its byte (0 or 1), and a byte is a true bool
    when nonzero."""
    source = value.type
    if source == target:
        return value
    if isinstance(source, IntegerType) and _width(source) == 1:
        return arith.ExtUIOp(value, target).result
    if isinstance(target, IntegerType) and _width(target) == 1:
        return arith.CmpiOp(value, constant(0, source), "ne").result
    return arith.BitcastOp(value, target).result


def is_nan(value: SSAValue) -> SSAValue:
    return arith.CmpfOp(value, value, "uno").result


def is_inf(value: SSAValue, *, positive: bool, negative: bool) -> SSAValue:
    """Whether a float is +inf (when `positive`) or -inf (when `negative`)."""
    tests = [
        arith.CmpfOp(value, constant(sign * float("inf"), value.type), "oeq").result
        for sign, detect in ((1, positive), (-1, negative))
        if detect
    ]
    if not tests:
        return constant(0, IntegerType(1))
    return tests[0] if len(tests) == 1 else arith.OrIOp(tests[0], tests[1]).result


def _width(element: Attribute) -> int:
    assert isinstance(element, IntegerType)
    return element.width.data


def _sub_byte_width(type: Attribute) -> int | None:
    """The width of a 4- or 2-bit integer type (stored in the low bits of a byte), else None."""
    return type.width.data if isinstance(type, IntegerType) and type.width.data in (2, 4) else None


def _from_sub_byte(value: SSAValue) -> SSAValue:
    """A 4- or 2-bit integer as i32 (sign-extended for the signed ones)."""
    width = _sub_byte_width(value.type)
    assert width is not None
    wide = arith.ExtUIOp(value, i32).result
    if is_unsigned(value.type):
        return wide
    shift = constant(32 - width, i32)
    return arith.ShRSIOp(arith.ShLIOp(wide, shift).result, shift).result


def _to_sub_byte(value: SSAValue, target: IntegerType) -> SSAValue:
    """An i32 as a 4- or 2-bit integer: its low bits (wrapping, as ml_dtypes' `astype`), the byte's others zero."""
    low_bits = arith.AndIOp(value, constant((1 << target.width.data) - 1, i32)).result
    return arith.TruncIOp(low_bits, target).result


def cast(value: SSAValue, target: Attribute, *, saturate: bool = True, round_mode: str = "up") -> SSAValue:
    """`value` converted to `target` (any te element type) with ONNX Cast's rules (see the module docstring);
    `saturate` (ONNX's attribute) applies to float8 targets, `round_mode` to float8 E8M0 ones."""
    source = value.type
    if source == target:
        return value
    if isinstance(source, Float8E8M0FNUType):
        return cast(minifloats.e8m0_to_f32(value), target)
    if isinstance(target, Float8E8M0FNUType):
        return minifloats.f32_to_e8m0(cast(value, f32), target, saturate=saturate, round_mode=round_mode)
    if minifloats.format_of(source) is not None:
        return cast(minifloats.to_f32(value), target)
    if minifloats.format_of(target) is not None:
        return minifloats.from_f32(cast(value, f32), target, saturate=saturate)
    if _sub_byte_width(source) is not None:
        return cast(_from_sub_byte(value), target)
    if isinstance(target, IntegerType) and _sub_byte_width(target) is not None:
        return _to_sub_byte(cast(value, i32), target)
    if isinstance(source, Float16Type | BFloat16Type):
        return cast(small_floats.to_f32(value), target)
    if isinstance(target, Float16Type | BFloat16Type):
        return small_floats.from_f32(cast(value, f32), target)
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
            extend = arith.ExtUIOp if is_unsigned(source) else arith.ExtSIOp
            return extend(value, target).result
        if _width(source) > _width(target):
            return arith.TruncIOp(value, target).result
        return arith.BitcastOp(value, target).result  # the same bits, another signedness
    if isinstance(source, IntegerType):
        convert = arith.UIToFPOp if is_unsigned(source) else arith.SIToFPOp
        return convert(value, target).result
    assert isinstance(source, AnyFloat)
    if isinstance(target, AnyFloat):
        narrower = target.bitwidth < source.bitwidth
        return (arith.TruncFOp if narrower else arith.ExtFOp)(value, target).result
    assert isinstance(target, IntegerType)
    return _truncated_to_integer(value, target)


def extreme_term(value: SSAValue, first: SSAValue, combiner: str) -> SSAValue:
    """A term of a float `max` (`min`) reduction with ONNX Runtime's NaN rule (1.32: its reductions' `acc = x > acc ?
    x : acc` from the first element, and ArgMax's; only its Eigen SIMD path over long contiguous rows answers by lane
    instead): the result is NaN exactly where the first element (index 0 along every reduced axis) is NaN, else the
    max (min) of the other values, NaNs ignored. A NaN term becomes -inf (+inf), and every term the first element
    where that one is NaN; the combiner's `maximumf` does the rest, in any order (vectorized too). Integer terms are
    returned as they are."""
    if not isinstance(value.type, AnyFloat):
        return value
    ignored = constant(float("-inf") if combiner == "max" else float("inf"), value.type)
    term = arith.SelectOp(arith.CmpfOp(value, value, "uno").result, ignored, value).result
    return arith.SelectOp(arith.CmpfOp(first, first, "uno").result, first, term).result


def _truncated_to_integer(value: SSAValue, target: IntegerType) -> SSAValue:
    """float -> integer as ONNX Runtime converts (see the module docstring): 8 and 16 bits from 32, unsigned 32 and
    64 bits from the signed conversion of `x - 2^(w-1)` with the top bit flipped where x >= 2^(w-1)."""
    width = target.width.data
    if width < 32:
        return arith.TruncIOp(_truncated_to_signed(value, 32), target).result
    if not is_unsigned(target):  # signed integers are signless at the te level
        return _truncated_to_signed(value, width)
    source = value.type
    half = constant(float(1 << (width - 1)), source)
    high = arith.CmpfOp(value, half, "oge").result
    converted = _truncated_to_signed(arith.SelectOp(high, arith.SubfOp(value, half).result, value).result, width)
    flipped = arith.XOrIOp(converted, constant(-(1 << (width - 1)), IntegerType(width))).result
    return arith.BitcastOp(arith.SelectOp(high, flipped, converted).result, target).result


def _truncated_to_signed(value: SSAValue, width: int) -> SSAValue:
    """float -> signless `width`-bit integer, truncating toward zero, INT_MIN for NaN and values outside
    [-2^(w-1), 2^(w-1)) (x86-64's "integer indefinite"); `fptosi` converts a value in range, 0 elsewhere."""
    source = value.type
    integer = IntegerType(width)
    at_least_lowest = arith.CmpfOp(value, constant(-float(1 << (width - 1)), source), "oge").result
    below_limit = arith.CmpfOp(value, constant(float(1 << (width - 1)), source), "olt").result
    inside = arith.AndIOp(at_least_lowest, below_limit).result
    converted = arith.FPToSIOp(arith.SelectOp(inside, value, constant(0.0, source)).result, integer).result
    return arith.SelectOp(inside, converted, constant(-(1 << (width - 1)), integer)).result
