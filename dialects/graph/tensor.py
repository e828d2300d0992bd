"""Tensor ops: concatenation, slicing, gathering, broadcasting, tiling, and reductions.

Index-valued ONNX inputs (axes, starts, repeats, and `graph.gather`'s indices) are compile-time constants, so they
are typed properties here, already normalised by the frontend (non-negative axes and indices); the result type
carries every output extent and the input's element type (data movement works on every element type; reductions
on floats, some on integers too). Run-time indices are operands of the ops in `indexing`. Squeeze, Unsqueeze and
Flatten are plain `graph.reshape`s, and Split is one `graph.slice` per output.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, TensorType, UnitAttr, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.utils.exceptions import VerifyException

from minimlc.dialects.graph.common import (
    BOOL,
    DYNAMIC,
    ELEMENT_TYPES,
    FLOATS,
    NUMBERS,
    AnyTensor,
    I64Array,
    Shape,
    broadcast_shapes,
    check_axis,
    check_elements,
    check_result_element,
    check_result_shape,
    dims_agree,
    element_type,
    i64_array,
    shape_of,
    shown,
    tensor_type,
    unit_flags,
)
from minimlc.dialects.graph.core import GraphOp, SameTypeUnaryOp, UnaryOp

__all__ = [
    "ConcatOp",
    "ExpandOp",
    "GatherOp",
    "ReduceL1Op",
    "ReduceL2Op",
    "ReduceLogSumExpOp",
    "ReduceLogSumOp",
    "ReduceMaxOp",
    "ReduceMeanOp",
    "ReduceMinOp",
    "ReduceOp",
    "ReduceProdOp",
    "ReduceSumOp",
    "ReduceSumSquareOp",
    "SliceOp",
    "TileOp",
    "TriluOp",
    "WhereOp",
    "reduced_shape",
]


def concatenated(sizes: Iterable[int]) -> int:
    """The extent of inputs of `sizes` joined along an axis: their sum, `?` if one is."""
    listed = list(sizes)
    return DYNAMIC if DYNAMIC in listed else sum(listed)


@irdl_op_definition
class ConcatOp(GraphOp):
    """Join tensors along one axis:
    `graph.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>`."""

    name = "graph.concat"
    inputs = var_operand_def(AnyTensor)
    result = result_def(AnyTensor)
    axis = prop_def(IntegerAttr[I64])
    assembly_format = "$inputs attr-dict `:` functional-type($inputs, $result)"
    RUN_TIME_DIMS: ClassVar[bool] = True

    def __init__(self, inputs: Sequence[SSAValue], axis: int):
        shapes = [shape_of(value) for value in inputs]
        shape = [next((s[d] for s in shapes if s[d] != DYNAMIC), DYNAMIC) for d in range(len(shapes[0]))]
        shape[axis] = concatenated(s[axis] for s in shapes)
        super().__init__(
            operands=[list(inputs)],
            result_types=[tensor_type(shape, element_type(inputs[0]))],
            properties={"axis": IntegerAttr(axis, i64)},
        )

    def verify_(self) -> None:
        shapes = [shape_of(value) for value in self.inputs]
        if not shapes:
            raise VerifyException(f"{self.name}: needs at least one input")
        check_result_element(self, check_elements(self, ELEMENT_TYPES, *self.inputs))
        axis = self.axis.value.data
        check_axis(self, axis, len(shapes[0]))
        first = shapes[0]
        for shape in shapes[1:]:
            if len(shape) != len(first) or any(
                not dims_agree(a, b) for d, (a, b) in enumerate(zip(shape, first)) if d != axis
            ):
                raise VerifyException(
                    f"{self.name}: input shapes {shown(first)} and {shown(shape)} differ outside the concatenation "
                    f"axis {axis}"
                )
        others = [next((s[d] for s in shapes if s[d] != DYNAMIC), DYNAMIC) for d in range(len(first))]
        check_result_shape(self, (*others[:axis], concatenated(s[axis] for s in shapes), *others[axis + 1 :]))


@irdl_op_definition
class SliceOp(UnaryOp):
    """A strided box of the input, one (start, step) per dim, extents given by the result type:
    `graph.slice %x {starts = array<i64: 0, 3>, steps = array<i64: 1, -1>} : tensor<2x4xf32> -> tensor<2x4xf32>`."""

    name = "graph.slice"
    starts = prop_def(I64Array)
    steps = prop_def(I64Array)
    RUN_TIME_DIMS: ClassVar[bool] = True

    def __init__(self, input: SSAValue, starts: Sequence[int], steps: Sequence[int], shape: Sequence[int]):
        super().__init__(input, shape, properties={"starts": i64_array(starts), "steps": i64_array(steps)})

    def verify_(self) -> None:
        check_result_element(self, check_elements(self, ELEMENT_TYPES, self.input))
        source, shape = shape_of(self.input), shape_of(self.result)
        starts, steps = self.starts.get_values(), self.steps.get_values()
        if not len(starts) == len(steps) == len(source) == len(shape):
            raise VerifyException(
                f"{self.name}: starts {list(starts)}, steps {list(steps)}, input rank {len(source)} and "
                f"result rank {len(shape)} must all agree"
            )
        for axis, (extent, start, step, count) in enumerate(zip(source, starts, steps, shape)):
            if step == 0:
                raise VerifyException(f"{self.name}: step of axis {axis} is zero")
            if DYNAMIC in (extent, count):
                self._verify_run_time_axis(axis, extent, start, step, count)
                continue
            last = start + (count - 1) * step
            if count and not (0 <= start < extent and 0 <= last < extent):
                raise VerifyException(
                    f"{self.name}: axis {axis} reads indices {start} to {last} of an extent of {extent}"
                )


    def _verify_run_time_axis(self, axis: int, extent: int, start: int, step: int, count: int) -> None:
        """A `?` result extent reads from `start` to the end of a `?` input axis with step 1; a static one reads a
        box whose fit in the `?` input extent is the run-time's to check."""
        if count == DYNAMIC and (extent != DYNAMIC or step != 1 or start < 0):
            raise VerifyException(
                f"{self.name}: a run-time extent of axis {axis} slices a run-time input axis from a non-negative start "
                f"to its end with step 1, got start {start} and step {step} of extent {shown((extent,))[1:-1]}"
            )
        if count != DYNAMIC and (start < 0 or start + (count - 1) * step < 0):
            raise VerifyException(f"{self.name}: axis {axis} reads negative indices from start {start}")


@irdl_op_definition
class GatherOp(UnaryOp):
    """Pick entries along `axis` at constant indices (row-major, shaped by the result's middle dims):
    `graph.gather %x {axis = 0 : i64, indices = array<i64: 2, 0>} : tensor<3x4xf32> -> tensor<2x4xf32>`."""

    name = "graph.gather"
    axis = prop_def(IntegerAttr[I64])
    indices = prop_def(I64Array)
    RUN_TIME_DIMS: ClassVar[bool] = True

    def __init__(self, input: SSAValue, axis: int, indices: Sequence[int], indices_shape: Sequence[int]):
        source = shape_of(input)
        super().__init__(
            input,
            (*source[:axis], *indices_shape, *source[axis + 1 :]),
            properties={"axis": IntegerAttr(axis, i64), "indices": i64_array(indices)},
        )

    @property
    def indices_shape(self) -> Shape:
        """The shape of the indices tensor: the result dims that replace the input's `axis`."""
        source, shape = shape_of(self.input), shape_of(self.result)
        axis = self.axis.value.data
        return shape[axis : len(shape) - (len(source) - axis - 1)]

    def verify_(self) -> None:
        source, shape = shape_of(self.input), shape_of(self.result)
        axis = self.axis.value.data
        check_axis(self, axis, len(source))
        check_result_element(self, check_elements(self, ELEMENT_TYPES, self.input))
        indices = self.indices.get_values()
        bad = [i for i in indices if not 0 <= i < (source[axis] if source[axis] != DYNAMIC else i + 1)]
        if bad:
            raise VerifyException(
                f"{self.name}: indices {bad} are out of range for axis {axis} of extent {source[axis]}"
            )
        suffix = len(source) - axis - 1
        middle = self.indices_shape
        if (
            len(shape) < len(source) - 1
            or shape[:axis] != source[:axis]
            or shape[len(shape) - suffix :] != source[axis + 1 :]
        ):
            raise VerifyException(
                f"{self.name}: result shape {shape} does not keep the input's dims {source} around axis {axis}"
            )
        if DYNAMIC in middle:
            raise VerifyException(
                f"{self.name}: result dims {shown(middle)} at axis {axis} must be static (constant indices)"
            )
        if math.prod(middle) != len(indices):
            raise VerifyException(
                f"{self.name}: result dims {middle} at axis {axis} hold {math.prod(middle)} entries, "
                f"but {len(indices)} indices are given"
            )


@irdl_op_definition
class ExpandOp(UnaryOp):
    """Numpy-broadcast the input to the result shape: `graph.expand %x : tensor<3x1xf32> -> tensor<2x3x4xf32>`."""

    name = "graph.expand"
    RUN_TIME_DIMS: ClassVar[bool] = True

    def verify_(self) -> None:
        check_result_element(self, check_elements(self, ELEMENT_TYPES, self.input))
        source, shape = shape_of(self.input), shape_of(self.result)
        if len(source) > len(shape) or broadcast_shapes(source, shape) != shape:
            raise VerifyException(
                f"{self.name}: input shape {shown(source)} does not broadcast to the result shape {shown(shape)}"
            )
        offset = len(shape) - len(source)
        if any(size == DYNAMIC and source[axis - offset : axis - offset + 1] != (DYNAMIC,)
               for axis, size in enumerate(shape)):
            raise VerifyException(
                f"{self.name}: each run-time dimension of the result shape {shown(shape)} must be the input's "
                f"{shown(source)} (an expand has no operand for another extent)"
            )


def tiled(size: int, repeat: int) -> int:
    """An extent repeated `repeat` times: `?` stays `?` (0 if not repeated at all)."""
    return size * repeat if size != DYNAMIC or repeat == 0 else DYNAMIC


@irdl_op_definition
class TileOp(UnaryOp):
    """Repeat the input along each dim:
    `graph.tile %x {repeats = array<i64: 2, 1>} : tensor<2x3xf32> -> tensor<4x3xf32>`."""

    name = "graph.tile"
    repeats = prop_def(I64Array)
    RUN_TIME_DIMS: ClassVar[bool] = True

    def __init__(self, input: SSAValue, repeats: Sequence[int]):
        source = shape_of(input)
        shape = [tiled(d, r) for d, r in zip(source, repeats)]
        super().__init__(input, shape, properties={"repeats": i64_array(repeats)})

    def verify_(self) -> None:
        check_result_element(self, check_elements(self, ELEMENT_TYPES, self.input))
        source, repeats = shape_of(self.input), self.repeats.get_values()
        if len(repeats) != len(source) or any(r < 0 for r in repeats):
            raise VerifyException(
                f"{self.name}: repeats {list(repeats)} must be {len(source)} non-negative counts, one per input dim"
            )
        check_result_shape(self, tuple(tiled(d, r) for d, r in zip(source, repeats)))


@irdl_op_definition
class TriluOp(SameTypeUnaryOp):
    """The upper (`upper`) or lower triangle of each matrix (the last two axes), from the `k`-th diagonal on, zero
    elsewhere (ONNX Trilu): `graph.trilu %x {k = 1 : i64, upper} : tensor<2x4x5xf32>`."""

    name = "graph.trilu"
    RUN_TIME_DIMS: ClassVar[bool] = True
    k = prop_def(IntegerAttr[I64])
    upper = opt_prop_def(UnitAttr)

    def __init__(self, input: SSAValue, *, k: int, upper: bool):
        super().__init__(input, {"k": IntegerAttr(k, i64), **unit_flags(upper=upper)})

    def verify_(self) -> None:
        source = shape_of(self.input)
        if len(source) < 2:
            raise VerifyException(f"{self.name}: input must have rank 2 or more, got {source}")
        check_result_element(self, check_elements(self, ELEMENT_TYPES, self.input))
        check_result_shape(self, source)


@irdl_op_definition
class WhereOp(GraphOp):
    """Elementwise choice, `x` where the bool `condition` holds and `y` elsewhere, all three numpy-broadcast:
    `graph.where %c, %x, %y : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>`."""

    name = "graph.where"
    condition = operand_def(TensorType.constr(BOOL))
    x = operand_def(AnyTensor)
    y = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    assembly_format = "$condition `,` $x `,` $y attr-dict `:` functional-type(operands, results)"
    RUN_TIME_DIMS: ClassVar[bool] = True

    def __init__(self, condition: SSAValue, x: SSAValue, y: SSAValue):
        shape = broadcast_shapes(shape_of(condition), shape_of(x), shape_of(y))
        assert shape is not None, "operands are not broadcast-compatible"
        super().__init__(operands=[condition, x, y], result_types=[tensor_type(shape, element_type(x))])

    def verify_(self) -> None:
        check_result_element(self, check_elements(self, ELEMENT_TYPES, self.x, self.y))
        shapes = shape_of(self.condition), shape_of(self.x), shape_of(self.y)
        shape = broadcast_shapes(*shapes)
        if shape is None:
            raise VerifyException(
                f"{self.name}: operand shapes {', '.join(map(shown, shapes))} are not broadcast-compatible"
            )
        check_result_shape(self, shape)


def reduced_shape(source: Shape, axes: Sequence[int], keepdims: bool) -> Shape:
    """The shape of `source` reduced over `axes`: reduced dims become 1 (`keepdims`) or disappear."""
    if keepdims:
        return tuple(1 if axis in axes else extent for axis, extent in enumerate(source))
    return tuple(extent for axis, extent in enumerate(source) if axis not in axes)


class ReduceOp(UnaryOp):
    """Base of reductions over a set of axes:
    `graph.reduce_sum %x {axes = array<i64: 1>, keepdims} : tensor<2x3xf32> -> tensor<2x1xf32>`.
    Floats (f32, f64) for every reduction, integers too for sum, max, min and product (`ELEMENTS`)."""

    ELEMENTS: ClassVar[tuple[Attribute, ...]] = FLOATS
    RUN_TIME_DIMS: ClassVar[bool] = True
    axes = prop_def(I64Array)
    keepdims = opt_prop_def(UnitAttr)

    def __init__(self, input: SSAValue, axes: Sequence[int], keepdims: bool):
        properties = {"axes": i64_array(sorted(axes)), **unit_flags(keepdims=keepdims)}
        super().__init__(input, reduced_shape(shape_of(input), axes, keepdims), properties=properties)

    def verify_(self) -> None:
        source = shape_of(self.input)
        axes = self.axes.get_values()
        if list(axes) != sorted(set(axes)) or any(not 0 <= a < len(source) for a in axes):
            raise VerifyException(
                f"{self.name}: axes {list(axes)} must be sorted, unique and in range for rank {len(source)}"
            )
        if any(source[a] == 0 for a in axes):
            raise VerifyException(f"{self.name}: reduces an empty axis of the input shape {source}")
        check_result_shape(self, reduced_shape(source, axes, self.keepdims is not None))
        check_result_element(self, check_elements(self, self.ELEMENTS, self.input))


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    """Sum: `graph.reduce_sum %x {axes = array<i64: 0>} : tensor<4x2xf32> -> tensor<2xf32>`."""

    name = "graph.reduce_sum"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = NUMBERS


@irdl_op_definition
class ReduceMeanOp(ReduceOp):
    """Arithmetic mean: `graph.reduce_mean %x {axes = array<i64: 1>, keepdims} : tensor<4x2xf32> -> tensor<4x1xf32>`."""

    name = "graph.reduce_mean"


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    """Maximum: `graph.reduce_max %x {axes = array<i64: 0, 1>} : tensor<4x2xf32> -> tensor<f32>`."""

    name = "graph.reduce_max"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = NUMBERS


@irdl_op_definition
class ReduceMinOp(ReduceOp):
    """Minimum: `graph.reduce_min %x {axes = array<i64: 1>} : tensor<4x2xf32> -> tensor<4xf32>`."""

    name = "graph.reduce_min"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = NUMBERS


@irdl_op_definition
class ReduceProdOp(ReduceOp):
    """Product: `graph.reduce_prod %x {axes = array<i64: 1>} : tensor<4x2xf32> -> tensor<4xf32>`."""

    name = "graph.reduce_prod"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = NUMBERS


@irdl_op_definition
class ReduceL1Op(ReduceOp):
    """Sum of absolute values: `graph.reduce_l1 %x {axes = array<i64: 1>} : tensor<4x2xf32> -> tensor<4xf32>`."""

    name = "graph.reduce_l1"


@irdl_op_definition
class ReduceL2Op(ReduceOp):
    """Euclidean norm: `graph.reduce_l2 %x {axes = array<i64: 1>} : tensor<4x2xf32> -> tensor<4xf32>`."""

    name = "graph.reduce_l2"


@irdl_op_definition
class ReduceLogSumOp(ReduceOp):
    """`log(sum(x))`: `graph.reduce_log_sum %x {axes = array<i64: 1>} : tensor<4x2xf32> -> tensor<4xf32>`."""

    name = "graph.reduce_log_sum"


@irdl_op_definition
class ReduceLogSumExpOp(ReduceOp):
    """`log(sum(exp(x)))`: `graph.reduce_log_sum_exp %x {axes = array<i64: 1>} : tensor<4x2xf32> -> tensor<4xf32>`."""

    name = "graph.reduce_log_sum_exp"


@irdl_op_definition
class ReduceSumSquareOp(ReduceOp):
    """Sum of squares: `graph.reduce_sum_square %x {axes = array<i64: 1>} : tensor<4x2xf32> -> tensor<4xf32>`."""

    name = "graph.reduce_sum_square"


OPS: list[type[IRDLOperation]] = [
    ConcatOp,
    SliceOp,
    GatherOp,
    ExpandOp,
    TileOp,
    TriluOp,
    WhereOp,
    ReduceSumOp,
    ReduceMeanOp,
    ReduceMaxOp,
    ReduceMinOp,
    ReduceProdOp,
    ReduceL1Op,
    ReduceL2Op,
    ReduceLogSumOp,
    ReduceLogSumExpOp,
    ReduceSumSquareOp,
]
