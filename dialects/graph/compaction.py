"""Ops whose result extent depends on the data: NonZero, Compress, Unique.

Shapes are static, so each such op returns its result at an upper bound of the extent, the valid elements first,
and their number as a `tensor<1xi64>` `count` result; the elements past the count are unspecified. A result of
this kind may only be a graph output, which the runtime trims to the count (`lowering/abi.py`, data-dependent
extents).
"""

from __future__ import annotations

from math import prod

from xdsl.dialects.builtin import I64, IntegerAttr, TensorType, UnitAttr, i1, i64
from xdsl.ir import SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from minimlc.dialects.graph.common import (
    ELEMENT_TYPES,
    NUMBERS,
    AnyTensor,
    Shape,
    check_axis,
    check_elements,
    check_result_element,
    check_result_shape,
    element_type,
    shape_of,
    tensor_type,
    unit_flags,
)
from minimlc.dialects.graph.core import GraphOp

__all__ = ["CompressOp", "NonZeroOp", "UniqueOp"]

Count = TensorType.constr(i64)
"""The `tensor<1xi64>` number of valid elements of a data-dependent result."""


def _check_count(op: IRDLOperation, count: SSAValue) -> None:
    if shape_of(count) != (1,):
        raise VerifyException(f"{op.name}: count must be a tensor<1xi64>, got {count.type}")


@irdl_op_definition
class NonZeroOp(GraphOp):
    """ONNX NonZero: the coordinates (one row per input axis) of the nonzero elements in row-major order, at most
    all of them, `graph.nonzero %x : tensor<2x3xf32> -> (tensor<2x6xi64>, tensor<1xi64>)`."""

    name = "graph.nonzero"
    input = operand_def(AnyTensor)
    result = result_def(TensorType.constr(i64))
    count = result_def(Count)
    assembly_format = "$input attr-dict `:` type($input) `->` `(` type($result) `,` type($count) `)`"

    def __init__(self, input: SSAValue):
        source = shape_of(input)
        bound = tensor_type((len(source), prod(source)), i64)
        super().__init__(operands=[input], result_types=[bound, tensor_type((1,), i64)])

    def verify_(self) -> None:
        source = shape_of(self.input)
        check_elements(self, ELEMENT_TYPES, self.input)
        check_result_shape(self, (len(source), prod(source)))
        _check_count(self, self.count)


@irdl_op_definition
class CompressOp(GraphOp):
    """ONNX Compress: the slices along `axis` where the bool `condition` holds (a condition shorter than the axis
    drops the rest), at most as many as the condition has,
    `graph.compress %x, %c {axis = 0 : i64} : (tensor<4x2xf32>, tensor<3xi1>) -> (tensor<3x2xf32>, tensor<1xi64>)`."""

    name = "graph.compress"
    input = operand_def(AnyTensor)
    condition = operand_def(TensorType.constr(i1))
    result = result_def(AnyTensor)
    count = result_def(Count)
    axis = prop_def(IntegerAttr[I64])
    assembly_format = "$input `,` $condition attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, condition: SSAValue, axis: int):
        shape = self.bounded(shape_of(input), shape_of(condition), axis)
        super().__init__(
            operands=[input, condition],
            result_types=[tensor_type(shape, element_type(input)), tensor_type((1,), i64)],
            properties={"axis": IntegerAttr(axis, i64)},
        )

    @staticmethod
    def bounded(source: Shape, condition: Shape, axis: int) -> Shape:
        """The result shape: the axis as long as the condition, or the input if that is shorter."""
        return (*source[:axis], min(source[axis], condition[0]), *source[axis + 1 :])

    def verify_(self) -> None:
        source, condition = shape_of(self.input), shape_of(self.condition)
        axis = self.axis.value.data
        check_axis(self, axis, len(source))
        if len(condition) != 1 or min(condition[0], source[axis]) == 0:
            raise VerifyException(f"{self.name}: condition must be one non-empty axis, got shape {condition}")
        check_result_element(self, check_elements(self, ELEMENT_TYPES, self.input))
        check_result_shape(self, self.bounded(source, condition, axis))
        _check_count(self, self.count)


@irdl_op_definition
class UniqueOp(GraphOp):
    """ONNX Unique of the elements of a 1-D tensor or the rows of a 2-D one: the distinct ones (ascending, rows
    lexicographically, with `sorted`, else in order of first occurrence), the index of each one's first occurrence,
    each element's position among them (`inverse`, all valid) and how often each occurs, at most as many as there
    are elements (rows), `graph.unique %x {sorted} :
    tensor<5xi64> -> (tensor<5xi64>, tensor<5xi64>, tensor<5xi64>, tensor<5xi64>, tensor<1xi64>)`."""

    name = "graph.unique"
    input = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    indices = result_def(TensorType.constr(i64))
    inverse = result_def(TensorType.constr(i64))
    counts = result_def(TensorType.constr(i64))
    count = result_def(Count)
    sorted = opt_prop_def(UnitAttr)
    assembly_format = (
        "$input attr-dict `:` type($input) `->` "
        "`(` type($result) `,` type($indices) `,` type($inverse) `,` type($counts) `,` type($count) `)`"
    )

    def __init__(self, input: SSAValue, *, sorted: bool = True):
        size = shape_of(input)[0]
        positions = tensor_type((size,), i64)
        super().__init__(
            operands=[input],
            result_types=[input.type, positions, positions, positions, tensor_type((1,), i64)],
            properties=unit_flags(sorted=sorted),
        )

    def verify_(self) -> None:
        source = shape_of(self.input)
        if len(source) not in (1, 2) or 0 in source:
            raise VerifyException(f"{self.name}: input must be a non-empty vector or matrix, got shape {source}")
        check_result_element(self, check_elements(self, NUMBERS, self.input))
        check_result_shape(self, source)
        for result in (self.indices, self.inverse, self.counts):
            if shape_of(result) != source[:1]:
                raise VerifyException(f"{self.name}: indices, inverse and counts must have shape {source[:1]}")
        _check_count(self, self.count)


OPS = [NonZeroOp, CompressOp, UniqueOp]
