"""Ops that compute with or produce run-time indices: gathers at run-time indices, arg-reductions, cumulative sums and
products, sequences reversed up to run-time lengths.

Indices are i32 or i64 tensors computed at run time (token ids, positions); a negative index counts from the end
of its axis, as in ONNX. An index still out of range after that is clamped to the axis (the kernels never read
outside their input). `graph.gather` (in `tensor`) keeps constant indices as a property.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, TensorType, UnitAttr, i64
from xdsl.ir import SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from minimlc.dialects.graph.common import (
    ELEMENT_TYPES,
    INDICES,
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
from minimlc.dialects.graph.core import GraphOp, UnaryOp

__all__ = [
    "ArgMaxOp",
    "ArgMinOp",
    "ArgReduceOp",
    "CumProdOp",
    "CumSumOp",
    "CumulativeOp",
    "GatherAtOp",
    "ReverseSequenceOp",
    "TakeAlongAxisOp",
    "TakeOp",
]


class GatherAtOp(GraphOp):
    """Base of the gathers at run-time `indices` (i32 or i64) of an `input` of any element type, which the result has:
    `graph.take %x, %i {axis = 0 : i64} : (tensor<100x16xf32>, tensor<1x8xi64>) -> tensor<1x8x16xf32>`."""

    input = operand_def(AnyTensor)
    indices = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    assembly_format = "$input `,` $indices attr-dict `:` functional-type(operands, results)"
    RUN_TIME_DIMS: ClassVar[bool] = True

    def check_gather_elements(self) -> None:
        check_elements(self, INDICES, self.indices)
        check_result_element(self, check_elements(self, ELEMENT_TYPES, self.input))


class _TakeOp(GatherAtOp):
    """Base of the gathers along one `axis`, their result shape given by `taken`."""

    axis = prop_def(IntegerAttr[I64])

    def __init__(self, input: SSAValue, indices: SSAValue, axis: int):
        super().__init__(
            operands=[input, indices],
            result_types=[tensor_type(self.taken(shape_of(input), shape_of(indices), axis), element_type(input))],
            properties={"axis": IntegerAttr(axis, i64)},
        )

    @staticmethod
    def taken(source: Shape, indices: Shape, axis: int) -> Shape:
        """The result shape."""
        raise NotImplementedError

    def check_indices(self, source: Shape, indices: Shape, axis: int) -> None:
        """Checks of the indices' shape against the input's."""

    def verify_(self) -> None:
        source, indices = shape_of(self.input), shape_of(self.indices)
        axis = self.axis.value.data
        check_axis(self, axis, len(source))
        self.check_gather_elements()
        self.check_indices(source, indices, axis)
        if source[axis] == 0:
            raise VerifyException(f"{self.name}: cannot take from axis {axis} of extent 0")
        check_result_shape(self, self.taken(source, indices, axis))


@irdl_op_definition
class TakeOp(_TakeOp):
    """ONNX Gather at run-time indices (numpy `take`): the result replaces the input's `axis` by the indices' dims,
    `graph.take %table, %ids {axis = 0 : i64} : (tensor<100x16xf32>, tensor<1x8xi64>) -> tensor<1x8x16xf32>`."""

    name = "graph.take"

    @staticmethod
    def taken(source: Shape, indices: Shape, axis: int) -> Shape:
        return (*source[:axis], *indices, *source[axis + 1 :])


@irdl_op_definition
class TakeAlongAxisOp(_TakeOp):
    """ONNX GatherElements (numpy `take_along_axis`): `result[i][j] = input[indices[i][j]][j]` for axis 0,
    `graph.take_along_axis %x, %i {axis = 0 : i64} : (tensor<3x4xf32>, tensor<2x4xi64>) -> tensor<2x4xf32>`."""

    name = "graph.take_along_axis"

    @staticmethod
    def taken(source: Shape, indices: Shape, axis: int) -> Shape:
        return indices

    def check_indices(self, source: Shape, indices: Shape, axis: int) -> None:
        if len(indices) != len(source) or any(i > s for d, (i, s) in enumerate(zip(indices, source)) if d != axis):
            raise VerifyException(
                f"{self.name}: indices shape {indices} must have the input's rank and fit its shape {source} "
                f"outside axis {axis}"
            )


class CumulativeOp(UnaryOp):
    """Base of the running reductions along `axis`, optionally `exclusive` (each leaves its own element out) and
    `reverse` (from the end)."""

    axis = prop_def(IntegerAttr[I64])
    exclusive = opt_prop_def(UnitAttr)
    reverse = opt_prop_def(UnitAttr)
    COMBINER: ClassVar[str]
    """The te combiner of the running reduction: `sum` or `prod`."""
    RUN_TIME_DIMS: ClassVar[bool] = True

    def __init__(self, input: SSAValue, axis: int, *, exclusive: bool = False, reverse: bool = False):
        properties = {"axis": IntegerAttr(axis, i64), **unit_flags(exclusive=exclusive, reverse=reverse)}
        IRDLOperation.__init__(self, operands=[input], result_types=[input.type], properties=properties)

    def verify_(self) -> None:
        check_axis(self, self.axis.value.data, len(shape_of(self.input)))
        check_result_element(self, check_elements(self, NUMBERS, self.input))
        check_result_shape(self, shape_of(self.input))


@irdl_op_definition
class CumSumOp(CumulativeOp):
    """Running sum: `graph.cumsum %x {axis = 1 : i64, exclusive} : tensor<2x5xi64> -> tensor<2x5xi64>`."""

    name = "graph.cumsum"
    COMBINER: ClassVar[str] = "sum"


@irdl_op_definition
class CumProdOp(CumulativeOp):
    """Running product: `graph.cumprod %x {axis = 0 : i64, reverse} : tensor<5xf32> -> tensor<5xf32>`."""

    name = "graph.cumprod"
    COMBINER: ClassVar[str] = "prod"


class ArgReduceOp(UnaryOp):
    """Base of the i64 position of the extreme element along `axis` (the first one, or the last with
    `select_last_index`), the axis kept as extent 1 with `keepdims`."""

    result = result_def(TensorType.constr(i64))
    axis = prop_def(IntegerAttr[I64])
    keepdims = opt_prop_def(UnitAttr)
    select_last_index = opt_prop_def(UnitAttr)
    PREDICATE: ClassVar[str]
    """Which comparison makes a candidate the new extreme: `greater` or `less`."""
    RUN_TIME_DIMS: ClassVar[bool] = True

    def __init__(self, input: SSAValue, axis: int, *, keepdims: bool = True, select_last_index: bool = False):
        flags = unit_flags(keepdims=keepdims, select_last_index=select_last_index)
        properties = {"axis": IntegerAttr(axis, i64), **flags}
        super().__init__(input, self.reduced(shape_of(input), axis, keepdims), i64, properties)

    @staticmethod
    def reduced(source: Sequence[int], axis: int, keepdims: bool) -> tuple[int, ...]:
        """The result shape: `source` without `axis`, or with it as extent 1."""
        return (*source[:axis], *([1] if keepdims else []), *source[axis + 1 :])

    def verify_(self) -> None:
        source = shape_of(self.input)
        axis = self.axis.value.data
        check_axis(self, axis, len(source))
        check_elements(self, NUMBERS, self.input)
        if source[axis] == 0:
            raise VerifyException(f"{self.name}: axis {axis} is empty")
        check_result_shape(self, self.reduced(source, axis, self.keepdims is not None))


@irdl_op_definition
class ArgMaxOp(ArgReduceOp):
    """Position of the maximum: `graph.argmax %x {axis = 1 : i64, keepdims} : tensor<2x5xf32> -> tensor<2x1xi64>`."""

    name = "graph.argmax"
    PREDICATE: ClassVar[str] = "greater"


@irdl_op_definition
class ArgMinOp(ArgReduceOp):
    """Position of the minimum: `graph.argmin %x {axis = 0 : i64} : tensor<2x5xi64> -> tensor<5xi64>`."""

    name = "graph.argmin"
    PREDICATE: ClassVar[str] = "less"


@irdl_op_definition
class ReverseSequenceOp(GraphOp):
    """ONNX ReverseSequence: along `time_axis`, the first `lengths[b]` elements of each batch entry `b` (of
    `batch_axis`) reversed, the rest kept; a length beyond the axis is clamped to it:
    `graph.reverse_sequence %x, %lens {batch_axis = 0 : i64, time_axis = 1 : i64}
    : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<4x5xf32>`."""

    name = "graph.reverse_sequence"
    input = operand_def(AnyTensor)
    lengths = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    batch_axis = prop_def(IntegerAttr[I64])
    time_axis = prop_def(IntegerAttr[I64])
    assembly_format = "$input `,` $lengths attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, lengths: SSAValue, batch_axis: int, time_axis: int):
        super().__init__(
            operands=[input, lengths],
            result_types=[input.type],
            properties={"batch_axis": IntegerAttr(batch_axis, i64), "time_axis": IntegerAttr(time_axis, i64)},
        )

    def verify_(self) -> None:
        source = shape_of(self.input)
        batch, time = self.batch_axis.value.data, self.time_axis.value.data
        if len(source) < 2 or {batch, time} != {0, 1}:
            raise VerifyException(
                f"{self.name}: batch_axis {batch} and time_axis {time} must be 0 and 1 of an input of rank 2 or more, "
                f"got rank {len(source)}"
            )
        check_elements(self, (i64,), self.lengths)
        if shape_of(self.lengths) != (source[batch],):
            raise VerifyException(
                f"{self.name}: lengths shape {shape_of(self.lengths)} must be ({source[batch]},), the batch axis"
            )
        check_result_element(self, check_elements(self, ELEMENT_TYPES, self.input))
        check_result_shape(self, source)


OPS = [TakeOp, TakeAlongAxisOp, CumSumOp, CumProdOp, ArgMaxOp, ArgMinOp, ReverseSequenceOp]
