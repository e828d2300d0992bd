"""Integer ops of quantized inference: products of 8-bit tensors accumulated exactly in i32.

Each takes its zero points as operands (a one-element tensor, or one per row / column / output channel) and computes
`sum (a - a_zero) * (b - b_zero)` in i32, as ONNX's MatMulInteger and ConvInteger do; requantizing the i32 result
(QLinearMatMul, QLinearConv) is float32 arithmetic the frontend composes from elementwise ops.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import i8, i32
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, result_def
from xdsl.utils.exceptions import VerifyException

from minimlc.dialects.graph.common import (
    UNSIGNED,
    AnyTensor,
    check_result_shape,
    element_type,
    matmul_shape,
    shape_of,
    tensor_type,
)
from minimlc.dialects.graph.core import ConstantOp, GraphOp
from minimlc.dialects.graph.elementwise import CastOp
from minimlc.dialects.graph.nn import _ConvOp  # pyright: ignore[reportPrivateUsage]

__all__ = ["EXACT_ATTR", "ConvIntegerOp", "MatMulIntegerOp", "is_static_zero", "static_zero"]

EXACT_ATTR = "exact"
"""Unit attribute of a float `graph.mul` (and of the `arith` op it lowers to) that must round as written, never
contracted into a fused multiply-add: DequantizeLinear's product, which ONNX Runtime rounds to float32 before any
add reads it, so that a requantized sum of dequantized values stays bit-exact."""

EIGHT_BIT: tuple[Attribute, ...] = (i8, UNSIGNED[0])
"""Element types of quantized operands: int8 and uint8."""


def static_zero(element: Attribute) -> list[IRDLOperation]:
    """A zero point known to be 0 when the model is compiled (an omitted or all-zero constant one): a one-element
    `graph.cast` of `graph.constant 0.0`, which `is_static_zero` recognises (a weight's values are not in the IR)."""
    zero = ConstantOp(0.0, (1,))
    return [zero, CastOp(zero.result, element)]


def is_static_zero(value: SSAValue) -> bool:
    """Whether `value` is a zero point `static_zero` built."""
    cast = value.owner
    if not isinstance(cast, CastOp) or shape_of(value) != (1,):
        return False
    constant = cast.input.owner
    return isinstance(constant, ConstantOp) and constant.value.value.data == 0.0


def _check_operand(op: IRDLOperation, what: str, value: SSAValue, zero: SSAValue, extents: Sequence[int]) -> None:
    """`value` is 8-bit, `zero` has its element type and one element or `extents`' one value (rank <= 1)."""
    element = element_type(value)
    if element not in EIGHT_BIT:
        raise VerifyException(f"{op.name}: {what} has element type {element}, expected i8 or ui8")
    if element_type(zero) != element:
        raise VerifyException(f"{op.name}: {what}'s zero point has element type {element_type(zero)}, not {element}")
    shape = shape_of(zero)
    if len(shape) > 1 or (shape and shape[0] != 1 and shape[0] not in extents):
        raise VerifyException(f"{op.name}: {what}'s zero point has shape {shape}, expected one element or {extents}")


def _check_i32_result(op: IRDLOperation) -> None:
    if element_type(op.results[0]) != i32:
        raise VerifyException(f"{op.name}: result element type must be i32, got {element_type(op.results[0])}")


@irdl_op_definition
class MatMulIntegerOp(GraphOp):
    """Numpy `matmul` of 8-bit tensors less their zero points (a's per row, b's per column), summed in i32:
    `graph.matmul_integer %a, %b, %az, %bz : (tensor<4x8xui8>, tensor<8x3xi8>, tensor<1xui8>, tensor<3xi8>)
    -> tensor<4x3xi32>`."""

    name = "graph.matmul_integer"
    lhs = operand_def(AnyTensor)
    rhs = operand_def(AnyTensor)
    lhs_zero = operand_def(AnyTensor)
    rhs_zero = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    assembly_format = "$lhs `,` $rhs `,` $lhs_zero `,` $rhs_zero attr-dict `:` functional-type(operands, results)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue, lhs_zero: SSAValue, rhs_zero: SSAValue):
        shape = matmul_shape(shape_of(lhs), shape_of(rhs))
        assert shape is not None, "operands are not matmul-compatible"
        super().__init__(operands=[lhs, rhs, lhs_zero, rhs_zero], result_types=[tensor_type(shape, i32)])

    def verify_(self) -> None:
        lhs, rhs = shape_of(self.lhs), shape_of(self.rhs)
        shape = matmul_shape(lhs, rhs)
        if shape is None:
            raise VerifyException(f"{self.name}: operand shapes {lhs} and {rhs} are not matmul-compatible")
        _check_operand(self, "lhs", self.lhs, self.lhs_zero, lhs[-2:-1] if len(lhs) > 1 else ())
        _check_operand(self, "rhs", self.rhs, self.rhs_zero, rhs[-1:] if len(rhs) > 1 else ())
        _check_i32_result(self)
        check_result_shape(self, shape)


@irdl_op_definition
class ConvIntegerOp(_ConvOp):
    """Grouped convolution of 8-bit tensors less their zero points (the input's one, the weight's per output
    channel), summed in i32; the padding reads as the input's zero point (adds nothing), as in ONNX Runtime:
    `graph.conv_integer %x, %w, %xz, %wz {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>,
    dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xui8>, tensor<4x3x3x3xi8>, tensor<1xui8>,
    tensor<4xi8>) -> tensor<1x4x8x8xi32>`."""

    name = "graph.conv_integer"
    input = operand_def(AnyTensor)
    weight = operand_def(AnyTensor)
    input_zero = operand_def(AnyTensor)
    weight_zero = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    assembly_format = (
        "$input `,` $weight `,` $input_zero `,` $weight_zero attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        input: SSAValue,
        weight: SSAValue,
        input_zero: SSAValue,
        weight_zero: SSAValue,
        *,
        strides: Sequence[int],
        pads: Sequence[int],
        dilations: Sequence[int],
        group: int = 1,
    ):
        zeros = [input_zero, weight_zero]
        super().__init__(input, weight, zeros, i32, strides=strides, pads=pads, dilations=dilations, group=group)

    def verify_(self) -> None:
        x, w = shape_of(self.input), shape_of(self.weight)
        self.check_group(x, w)
        _check_operand(self, "input", self.input, self.input_zero, ())
        _check_operand(self, "weight", self.weight, self.weight_zero, (w[0],))
        _check_i32_result(self)
        check_result_shape(self, (x[0], w[0], *self.window_shape(x, w[2:])))


OPS = [MatMulIntegerOp, ConvIntegerOp]
