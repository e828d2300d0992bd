"""Ops that scatter to, gather from, or pick out elements at run-time positions: ScatterElements, ScatterND,
GatherND, OneHot, TopK.

As in `indexing`, run-time indices are i32 or i64 tensors; a negative index counts from the end of its axis, and one
still out of range is clamped into the axis (the kernels never read or write outside their operands). Scatters
combine the updates landing on one element with `reduction`: `none` (the last update wins), `add`, `mul`, `max`,
`min`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I64, IntegerAttr, StringAttr, TensorType, UnitAttr, i64
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def
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
from minimlc.dialects.graph.core import GraphOp
from minimlc.dialects.graph.indexing import GatherAtOp

__all__ = ["SCATTER_REDUCTIONS", "GatherNDOp", "OneHotOp", "ScatterElementsOp", "ScatterNDOp", "ScatterOp", "TopKOp"]

SCATTER_REDUCTIONS = ("none", "add", "mul", "max", "min")
"""How a scatter combines an element with the updates landing on it."""


class ScatterOp(GraphOp):
    """Base of the scatters: `data` with `updates` written (or combined by `reduction`) at `indices`."""

    data = operand_def(AnyTensor)
    indices = operand_def(AnyTensor)
    updates = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    reduction = prop_def(StringAttr)
    assembly_format = "$data `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)"

    def verify_reduction(self) -> None:
        if self.reduction.data not in SCATTER_REDUCTIONS:
            raise VerifyException(
                f"{self.name}: reduction '{self.reduction.data}' is not one of {', '.join(SCATTER_REDUCTIONS)}"
            )
        check_elements(self, INDICES, self.indices)
        allowed = ELEMENT_TYPES if self.reduction.data == "none" else NUMBERS
        check_result_element(self, check_elements(self, allowed, self.data, self.updates))
        check_result_shape(self, shape_of(self.data))
        if 0 in shape_of(self.data):
            raise VerifyException(f"{self.name}: cannot scatter into the empty shape {shape_of(self.data)}")


@irdl_op_definition
class ScatterElementsOp(ScatterOp):
    """ONNX ScatterElements: `result[..., indices[p], ...] = updates[p]` along `axis` at each position p of `indices`,
    `graph.scatter_elements %x, %i, %u {axis = 0 : i64, reduction = "add"} :
    (tensor<3x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<3x4xf32>`."""

    name = "graph.scatter_elements"
    axis = prop_def(IntegerAttr[I64])

    def __init__(self, data: SSAValue, indices: SSAValue, updates: SSAValue, axis: int, reduction: str = "none"):
        super().__init__(
            operands=[data, indices, updates],
            result_types=[data.type],
            properties={"axis": IntegerAttr(axis, i64), "reduction": StringAttr(reduction)},
        )

    def verify_(self) -> None:
        source, indices = shape_of(self.data), shape_of(self.indices)
        axis = self.axis.value.data
        check_axis(self, axis, len(source))
        self.verify_reduction()
        if shape_of(self.updates) != indices:
            raise VerifyException(f"{self.name}: updates shape {shape_of(self.updates)} must be the indices' {indices}")
        if len(indices) != len(source) or any(i > s for d, (i, s) in enumerate(zip(indices, source)) if d != axis):
            raise VerifyException(
                f"{self.name}: indices shape {indices} must have the data's rank and fit its shape {source} "
                f"outside axis {axis}"
            )


@irdl_op_definition
class ScatterNDOp(ScatterOp):
    """ONNX ScatterND: `result[indices[b]] = updates[b]` for each batch position b of `indices` (its last dim k
    indexes the data's first k axes, the updates cover the rest),
    `graph.scatter_nd %x, %i, %u {reduction = "none"} :
    (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>) -> tensor<4x3xf32>`."""

    name = "graph.scatter_nd"

    def __init__(self, data: SSAValue, indices: SSAValue, updates: SSAValue, reduction: str = "none"):
        super().__init__(
            operands=[data, indices, updates],
            result_types=[data.type],
            properties={"reduction": StringAttr(reduction)},
        )

    def verify_(self) -> None:
        source, indices = shape_of(self.data), shape_of(self.indices)
        self.verify_reduction()
        if not indices or not 1 <= indices[-1] <= len(source):
            raise VerifyException(
                f"{self.name}: indices shape {indices} must end in a dim from 1 to the data's rank {len(source)}"
            )
        expected = (*indices[:-1], *source[indices[-1] :])
        if shape_of(self.updates) != expected:
            raise VerifyException(f"{self.name}: updates shape {shape_of(self.updates)} must be {expected}")


@irdl_op_definition
class GatherNDOp(GatherAtOp):
    """ONNX GatherND: the slices of `input` at the index tuples in the last dim of `indices`, after `batch_dims`
    leading dims both share, `graph.gather_nd %x, %i {batch_dims = 0 : i64} :
    (tensor<2x2xf32>, tensor<2x1xi64>) -> tensor<2x2xf32>`."""

    name = "graph.gather_nd"
    batch_dims = prop_def(IntegerAttr[I64])

    def __init__(self, input: SSAValue, indices: SSAValue, batch_dims: int = 0):
        shape = self.gathered(shape_of(input), shape_of(indices), batch_dims)
        super().__init__(
            operands=[input, indices],
            result_types=[tensor_type(shape, element_type(input))],
            properties={"batch_dims": IntegerAttr(batch_dims, i64)},
        )

    @staticmethod
    def gathered(source: Shape, indices: Shape, batch_dims: int) -> Shape:
        """The result shape: the indices' dims but the last, then the data's dims the index tuples leave."""
        return (*indices[:-1], *source[batch_dims + indices[-1] :])

    def verify_(self) -> None:
        source, indices = shape_of(self.input), shape_of(self.indices)
        batch = self.batch_dims.value.data
        self.check_gather_elements()
        if not 0 <= batch < min(len(source), len(indices)) or source[:batch] != indices[:batch]:
            raise VerifyException(
                f"{self.name}: batch_dims {batch} must be leading dims shared by data {source} and indices {indices}"
            )
        if not 1 <= indices[-1] <= len(source) - batch:
            raise VerifyException(
                f"{self.name}: index tuples of length {indices[-1]} do not fit data {source} after {batch} batch dims"
            )
        if 0 in source[batch : batch + indices[-1]]:
            raise VerifyException(f"{self.name}: cannot gather from the empty shape {source}")
        check_result_shape(self, self.gathered(source, indices, batch))


@irdl_op_definition
class OneHotOp(GraphOp):
    """ONNX OneHot: `values[1]` where a new axis `axis` of extent `depth` equals the index (negative ones counting
    from the end), `values[0]` elsewhere, `graph.one_hot %i, %v {axis = 1 : i64, depth = 4 : i64} :
    (tensor<3xi64>, tensor<2xf32>) -> tensor<3x4xf32>`."""

    name = "graph.one_hot"
    indices = operand_def(AnyTensor)
    values = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    axis = prop_def(IntegerAttr[I64])
    depth = prop_def(IntegerAttr[I64])
    assembly_format = "$indices `,` $values attr-dict `:` functional-type(operands, results)"

    def __init__(self, indices: SSAValue, values: SSAValue, axis: int, depth: int):
        source = shape_of(indices)
        super().__init__(
            operands=[indices, values],
            result_types=[tensor_type((*source[:axis], depth, *source[axis:]), element_type(values))],
            properties={"axis": IntegerAttr(axis, i64), "depth": IntegerAttr(depth, i64)},
        )

    def verify_(self) -> None:
        source = shape_of(self.indices)
        axis, depth = self.axis.value.data, self.depth.value.data
        check_axis(self, axis, len(source) + 1)
        check_elements(self, NUMBERS, self.indices)
        check_result_element(self, check_elements(self, ELEMENT_TYPES, self.values))
        if shape_of(self.values) != (2,):
            raise VerifyException(f"{self.name}: values must hold (off, on), got shape {shape_of(self.values)}")
        if depth < 1:
            raise VerifyException(f"{self.name}: depth {depth} must be positive")
        check_result_shape(self, (*source[:axis], depth, *source[axis:]))


@irdl_op_definition
class TopKOp(GraphOp):
    """ONNX TopK: the `k` largest (or, without `largest`, smallest) elements along `axis`, best first (equal ones in
    index order), and their i64 positions, `graph.top_k %x {axis = 1 : i64, k = 2 : i64, largest} :
    tensor<3x4xf32> -> (tensor<3x2xf32>, tensor<3x2xi64>)`."""

    name = "graph.top_k"
    input = operand_def(AnyTensor)
    values = result_def(AnyTensor)
    indices = result_def(TensorType.constr(i64))
    axis = prop_def(IntegerAttr[I64])
    k = prop_def(IntegerAttr[I64])
    largest = opt_prop_def(UnitAttr)
    assembly_format = "$input attr-dict `:` type($input) `->` `(` type($values) `,` type($indices) `)`"

    def __init__(self, input: SSAValue, axis: int, k: int, *, largest: bool = True):
        shape = self.selected(shape_of(input), axis, k)
        properties = {"axis": IntegerAttr(axis, i64), "k": IntegerAttr(k, i64), **unit_flags(largest=largest)}
        super().__init__(
            operands=[input],
            result_types=[tensor_type(shape, element_type(input)), tensor_type(shape, i64)],
            properties=properties,
        )

    @staticmethod
    def selected(source: Sequence[int], axis: int, k: int) -> Shape:
        return (*source[:axis], k, *source[axis + 1 :])

    def verify_(self) -> None:
        source = shape_of(self.input)
        axis, k = self.axis.value.data, self.k.value.data
        check_axis(self, axis, len(source))
        if not 1 <= k <= source[axis]:
            raise VerifyException(f"{self.name}: k = {k} must be from 1 to the axis' extent {source[axis]}")
        check_result_element(self, check_elements(self, NUMBERS, self.input))
        check_result_shape(self, self.selected(source, axis, k))
        if shape_of(self.indices) != self.selected(source, axis, k):
            raise VerifyException(f"{self.name}: indices shape {shape_of(self.indices)} must be the values' shape")


OPS = [ScatterElementsOp, ScatterNDOp, GatherNDOp, OneHotOp, TopKOp]
