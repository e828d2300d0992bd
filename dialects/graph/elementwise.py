"""Elementwise arithmetic, comparison, logic and math ops: binary ones broadcast as numpy, unary ones keep the type.

Arithmetic takes two operands of one type of `NUMBERS` (f32, f64, signed and unsigned integers; integer division
truncates, as in C and ONNX); comparisons of numbers (and Equal of bools) give i1 tensors, which logic ops combine;
math functions are f32 only (exp, log, sqrt and tanh f64 too). `and`, `or`, `xor` and `not` are also bitwise on
integers, and shifts take integers (logical on unsigned types, arithmetic right shifts on signed ones). `graph.cast`
converts between element types, `graph.bitcast` reinterprets bits of one width; `is_nan` and `is_inf` classify
floats. Activations live in `activation`.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import AnyFloat, Float8E8M0FNUType, IntegerType, StringAttr, UnitAttr
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, opt_prop_def
from xdsl.utils.exceptions import VerifyException

from minimlc.dialects.graph.common import (
    BOOL,
    ELEMENT_TYPES,
    FLOATS,
    HALF_FLOATS,
    INTEGERS,
    NUMBERS,
    check_elements,
    check_result_element,
    element_type,
    shape_of,
    unit_flags,
)
from minimlc.dialects.graph.core import ElementwiseBinaryOp, ElementwiseUnaryOp, UnaryOp

__all__ = [
    "BIT_CASTABLE",
    "ROUND_MODES",
    "AbsOp",
    "AcosOp",
    "AcoshOp",
    "AddOp",
    "AndOp",
    "AsinOp",
    "AsinhOp",
    "AtanOp",
    "AtanhOp",
    "BitCastOp",
    "CastOp",
    "CeilOp",
    "CosOp",
    "CoshOp",
    "DivOp",
    "EqualOp",
    "ErfOp",
    "ExpOp",
    "FloorOp",
    "GreaterOp",
    "GreaterOrEqualOp",
    "IsInfOp",
    "IsNaNOp",
    "LessOp",
    "LessOrEqualOp",
    "LogOp",
    "MaxOp",
    "MinOp",
    "ModOp",
    "MulOp",
    "NegOp",
    "NotOp",
    "OrOp",
    "PowOp",
    "ReciprocalOp",
    "RoundOp",
    "ShiftLeftOp",
    "ShiftRightOp",
    "SignOp",
    "SinOp",
    "SinhOp",
    "SqrtOp",
    "SubOp",
    "TanOp",
    "TanhOp",
    "XorOp",
    "bit_width",
]


@irdl_op_definition
class AddOp(ElementwiseBinaryOp):
    """Elementwise `lhs + rhs`: `graph.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>`."""

    name = "graph.add"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = NUMBERS


@irdl_op_definition
class SubOp(ElementwiseBinaryOp):
    """Elementwise `lhs - rhs`: `graph.sub %a, %b : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>`."""

    name = "graph.sub"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = NUMBERS


@irdl_op_definition
class MulOp(ElementwiseBinaryOp):
    """Elementwise `lhs * rhs`: `graph.mul %a, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>`."""

    name = "graph.mul"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = NUMBERS


@irdl_op_definition
class DivOp(ElementwiseBinaryOp):
    """Elementwise `lhs / rhs`: `graph.div %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>`."""

    name = "graph.div"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = NUMBERS


@irdl_op_definition
class MaxOp(ElementwiseBinaryOp):
    """Elementwise maximum (NaN-propagating): `graph.max %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>`."""

    name = "graph.max"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = NUMBERS


@irdl_op_definition
class MinOp(ElementwiseBinaryOp):
    """Elementwise minimum (NaN-propagating): `graph.min %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>`."""

    name = "graph.min"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = NUMBERS


@irdl_op_definition
class PowOp(ElementwiseBinaryOp):
    """Elementwise `lhs ** rhs` (integers: wrapping, a negative exponent truncating `1 / lhs ** -rhs`):
    `graph.pow %a, %b : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>`."""

    name = "graph.pow"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = NUMBERS


@irdl_op_definition
class EqualOp(ElementwiseBinaryOp):
    """`lhs == rhs` as a bool: `graph.equal %a, %b : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi1>`."""

    name = "graph.equal"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = (*NUMBERS, BOOL)
    RESULT: ClassVar[Attribute | None] = BOOL


@irdl_op_definition
class LessOp(ElementwiseBinaryOp):
    """`lhs < rhs` as a bool: `graph.less %a, %b : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi1>`."""

    name = "graph.less"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = NUMBERS
    RESULT: ClassVar[Attribute | None] = BOOL


@irdl_op_definition
class LessOrEqualOp(ElementwiseBinaryOp):
    """`lhs <= rhs` as a bool: `graph.less_or_equal %a, %b : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi1>`."""

    name = "graph.less_or_equal"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = NUMBERS
    RESULT: ClassVar[Attribute | None] = BOOL


@irdl_op_definition
class GreaterOp(ElementwiseBinaryOp):
    """`lhs > rhs` as a bool: `graph.greater %a, %b : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi1>`."""

    name = "graph.greater"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = NUMBERS
    RESULT: ClassVar[Attribute | None] = BOOL


@irdl_op_definition
class GreaterOrEqualOp(ElementwiseBinaryOp):
    """`lhs >= rhs` as a bool: `graph.greater_or_equal %a, %b : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xi1>`."""

    name = "graph.greater_or_equal"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = NUMBERS
    RESULT: ClassVar[Attribute | None] = BOOL


@irdl_op_definition
class AndOp(ElementwiseBinaryOp):
    """Logical and of masks, bitwise and of integers:
    `graph.and %a, %b : (tensor<4xi1>, tensor<1xi1>) -> tensor<4xi1>`."""

    name = "graph.and"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = (BOOL, *INTEGERS)


@irdl_op_definition
class OrOp(ElementwiseBinaryOp):
    """Logical or of masks, bitwise or of integers: `graph.or %a, %b : (tensor<4xi1>, tensor<1xi1>) -> tensor<4xi1>`."""

    name = "graph.or"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = (BOOL, *INTEGERS)


@irdl_op_definition
class XorOp(ElementwiseBinaryOp):
    """Logical exclusive or, bitwise of integers: `graph.xor %a, %b : (tensor<4xi1>, tensor<1xi1>) -> tensor<4xi1>`."""

    name = "graph.xor"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = (BOOL, *INTEGERS)


@irdl_op_definition
class ShiftLeftOp(ElementwiseBinaryOp):
    """`lhs << rhs`, 0 where the amount is negative or at least the width (ONNX BitShift LEFT):
    `graph.shift_left %a, %b : (tensor<4xui8>, tensor<1xui8>) -> tensor<4xui8>`."""

    name = "graph.shift_left"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = INTEGERS


@irdl_op_definition
class ShiftRightOp(ElementwiseBinaryOp):
    """`lhs >> rhs`, logical on unsigned types and arithmetic on signed ones; an amount that is negative or at least
    the width shifts every bit out (0, or -1 for a negative signed `lhs`; ONNX BitShift RIGHT):
    `graph.shift_right %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>`."""

    name = "graph.shift_right"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = INTEGERS


@irdl_op_definition
class ModOp(ElementwiseBinaryOp):
    """Remainder with the sign of the divisor (numpy `mod`), or of the dividend with `fmod` (C `%` and `fmod`):
    `graph.mod %a, %b {fmod} : (tensor<4xi64>, tensor<1xi64>) -> tensor<4xi64>`."""

    name = "graph.mod"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = NUMBERS
    fmod = opt_prop_def(UnitAttr)

    def __init__(self, lhs: SSAValue, rhs: SSAValue, fmod: bool = False):
        super().__init__(lhs, rhs)
        if fmod:
            self.properties["fmod"] = UnitAttr()


class _ConversionOp(UnaryOp):
    """Base of elementwise conversions: the result has the input's shape, its element type `verify_elements` checks."""

    RUN_TIME_DIMS: ClassVar[bool] = True

    def verify_elements(self) -> None:
        raise NotImplementedError

    def verify_(self) -> None:
        self.verify_elements()
        if shape_of(self.input) != shape_of(self.result):
            raise VerifyException(
                f"{self.name}: result shape {shape_of(self.result)} differs from the input shape {shape_of(self.input)}"
            )


ROUND_MODES = ("up", "down", "nearest")
"""ONNX Cast's `round_mode` values, which apply to float8 E8M0 targets (`up` is the default)."""


@irdl_op_definition
class CastOp(_ConversionOp):
    """Convert elements to the result's element type with ONNX Cast's rules (floats to integers truncate toward zero,
    anything nonzero to i1 is true): `graph.cast %x : tensor<4xf32> -> tensor<4xi64>`."""

    name = "graph.cast"
    no_saturate = opt_prop_def(UnitAttr)
    """To float8: values beyond the largest finite one become infinity or NaN (ONNX `saturate=0`), not the largest."""
    round_mode = opt_prop_def(StringAttr)
    """To float8 E8M0 only: `up` (the default when absent), `down` or `nearest` (ONNX Cast's `round_mode`)."""

    def __init__(self, input: SSAValue, element: Attribute, *, saturate: bool = True, round_mode: str | None = None):
        properties = unit_flags(no_saturate=not saturate)
        if round_mode is not None:
            properties["round_mode"] = StringAttr(round_mode)
        super().__init__(input, shape_of(input), element, properties)

    def verify_elements(self) -> None:
        check_elements(self, ELEMENT_TYPES, self.input)
        check_elements(self, ELEMENT_TYPES, self.result)
        if self.round_mode is not None:
            if not isinstance(element_type(self.result), Float8E8M0FNUType):
                raise VerifyException(f"{self.name}: round_mode applies to casts to f8E8M0FNU only")
            if self.round_mode.data not in ROUND_MODES:
                raise VerifyException(
                    f"{self.name}: round_mode must be up, down or nearest, got '{self.round_mode.data}'"
                )


@irdl_op_definition
class TanhOp(ElementwiseUnaryOp):
    """`tanh(x)`: `graph.tanh %x : tensor<8xf32 (or f64)."""

    name = "graph.tanh"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = FLOATS


@irdl_op_definition
class ExpOp(ElementwiseUnaryOp):
    """`exp(x)`: `graph.exp %x : tensor<8xf32 (or f64)."""

    name = "graph.exp"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = FLOATS


@irdl_op_definition
class NegOp(ElementwiseUnaryOp):
    """`-x`: `graph.neg %x : tensor<8xf32>`."""

    name = "graph.neg"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = NUMBERS


@irdl_op_definition
class AbsOp(ElementwiseUnaryOp):
    """`|x|`: `graph.abs %x : tensor<8xf32>`."""

    name = "graph.abs"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = NUMBERS


@irdl_op_definition
class SqrtOp(ElementwiseUnaryOp):
    """`sqrt(x)`: `graph.sqrt %x : tensor<8xf32 (or f64)."""

    name = "graph.sqrt"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = FLOATS


@irdl_op_definition
class ReciprocalOp(ElementwiseUnaryOp):
    """`1 / x`: `graph.reciprocal %x : tensor<8xf32>`."""

    name = "graph.reciprocal"


@irdl_op_definition
class LogOp(ElementwiseUnaryOp):
    """Natural logarithm: `graph.log %x : tensor<8xf32 (or f64)."""

    name = "graph.log"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = FLOATS


@irdl_op_definition
class FloorOp(ElementwiseUnaryOp):
    """Round toward -inf: `graph.floor %x : tensor<8xf32>`."""

    name = "graph.floor"


@irdl_op_definition
class CeilOp(ElementwiseUnaryOp):
    """Round toward +inf: `graph.ceil %x : tensor<8xf32>`."""

    name = "graph.ceil"


@irdl_op_definition
class RoundOp(ElementwiseUnaryOp):
    """Round half to even: `graph.round %x : tensor<8xf32>`."""

    name = "graph.round"


@irdl_op_definition
class SignOp(ElementwiseUnaryOp):
    """-1, 0 or 1 by the sign of x: `graph.sign %x : tensor<8xf32>`."""

    name = "graph.sign"


@irdl_op_definition
class ErfOp(ElementwiseUnaryOp):
    """The error function: `graph.erf %x : tensor<8xf32>`."""

    name = "graph.erf"


@irdl_op_definition
class SinOp(ElementwiseUnaryOp):
    """`sin(x)`: `graph.sin %x : tensor<8xf32>`."""

    name = "graph.sin"


@irdl_op_definition
class CosOp(ElementwiseUnaryOp):
    """`cos(x)`: `graph.cos %x : tensor<8xf32>`."""

    name = "graph.cos"


@irdl_op_definition
class TanOp(ElementwiseUnaryOp):
    """`tan(x)`: `graph.tan %x : tensor<8xf32>`."""

    name = "graph.tan"


@irdl_op_definition
class AsinOp(ElementwiseUnaryOp):
    """`asin(x)`: `graph.asin %x : tensor<8xf32>`."""

    name = "graph.asin"


@irdl_op_definition
class AcosOp(ElementwiseUnaryOp):
    """`acos(x)`: `graph.acos %x : tensor<8xf32>`."""

    name = "graph.acos"


@irdl_op_definition
class AtanOp(ElementwiseUnaryOp):
    """`atan(x)`: `graph.atan %x : tensor<8xf32>`."""

    name = "graph.atan"


@irdl_op_definition
class SinhOp(ElementwiseUnaryOp):
    """`sinh(x)`: `graph.sinh %x : tensor<8xf32>`."""

    name = "graph.sinh"


@irdl_op_definition
class CoshOp(ElementwiseUnaryOp):
    """`cosh(x)`: `graph.cosh %x : tensor<8xf32>`."""

    name = "graph.cosh"


@irdl_op_definition
class AsinhOp(ElementwiseUnaryOp):
    """`asinh(x)`: `graph.asinh %x : tensor<8xf32>`."""

    name = "graph.asinh"


@irdl_op_definition
class AcoshOp(ElementwiseUnaryOp):
    """`acosh(x)`: `graph.acosh %x : tensor<8xf32>`."""

    name = "graph.acosh"


@irdl_op_definition
class AtanhOp(ElementwiseUnaryOp):
    """`atanh(x)`: `graph.atanh %x : tensor<8xf32>`."""

    name = "graph.atanh"


@irdl_op_definition
class NotOp(ElementwiseUnaryOp):
    """Logical not of a mask, bitwise not of integers: `graph.not %m : tensor<8xi1>`."""

    name = "graph.not"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = (BOOL, *INTEGERS)


BIT_CASTABLE: tuple[Attribute, ...] = (*NUMBERS, BOOL, *HALF_FLOATS)
"""Element types `graph.bitcast` reinterprets (a bool is its byte, 0 or 1)."""


def bit_width(element: Attribute) -> int:
    """Bits of one stored element of a `BIT_CASTABLE` type (8 for a bool)."""
    if isinstance(element, IntegerType):
        return max(8, element.width.data)
    assert isinstance(element, AnyFloat)
    return element.bitwidth


@irdl_op_definition
class BitCastOp(_ConversionOp):
    """Reinterpret each element's bits as the result's element type of the same width (ONNX BitCast; to a bool,
    a nonzero byte is true): `graph.bitcast %x : tensor<4xf32> -> tensor<4xi32>`."""

    name = "graph.bitcast"

    def __init__(self, input: SSAValue, element: Attribute):
        super().__init__(input, shape_of(input), element)

    def verify_elements(self) -> None:
        source = check_elements(self, BIT_CASTABLE, self.input)
        target = check_elements(self, BIT_CASTABLE, self.result)
        if bit_width(source) != bit_width(target):
            raise VerifyException(
                f"{self.name}: {source} ({bit_width(source)} bits) and {target} ({bit_width(target)} bits) differ "
                "in width"
            )


class _ClassifyOp(_ConversionOp):
    """Base of float classifications: a bool per element of an f32 or f64 input of the same shape."""

    def verify_elements(self) -> None:
        check_elements(self, FLOATS, self.input)
        check_result_element(self, BOOL)


@irdl_op_definition
class IsNaNOp(_ClassifyOp):
    """Whether each element is NaN: `graph.is_nan %x : tensor<4xf32> -> tensor<4xi1>`."""

    name = "graph.is_nan"

    def __init__(self, input: SSAValue):
        super().__init__(input, shape_of(input), BOOL)


@irdl_op_definition
class IsInfOp(_ClassifyOp):
    """Whether each element is +inf (with `positive`) or -inf (with `negative`):
    `graph.is_inf %x {positive, negative} : tensor<4xf64> -> tensor<4xi1>`."""

    name = "graph.is_inf"
    positive = opt_prop_def(UnitAttr)
    negative = opt_prop_def(UnitAttr)

    def __init__(self, input: SSAValue, *, positive: bool, negative: bool):
        super().__init__(input, shape_of(input), BOOL, unit_flags(positive=positive, negative=negative))


OPS = [
    AddOp,
    SubOp,
    MulOp,
    DivOp,
    MaxOp,
    MinOp,
    PowOp,
    EqualOp,
    LessOp,
    LessOrEqualOp,
    GreaterOp,
    GreaterOrEqualOp,
    AndOp,
    OrOp,
    XorOp,
    ShiftLeftOp,
    ShiftRightOp,
    ModOp,
    CastOp,
    BitCastOp,
    IsNaNOp,
    IsInfOp,
    TanhOp,
    ExpOp,
    NegOp,
    AbsOp,
    SqrtOp,
    ReciprocalOp,
    LogOp,
    FloorOp,
    CeilOp,
    RoundOp,
    SignOp,
    ErfOp,
    SinOp,
    CosOp,
    TanOp,
    AsinOp,
    AcosOp,
    AtanOp,
    SinhOp,
    CoshOp,
    AsinhOp,
    AcoshOp,
    AtanhOp,
    NotOp,
]
