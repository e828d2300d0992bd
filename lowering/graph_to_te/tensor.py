"""graph-to-te patterns for tensor ops: concatenation, slicing, gathering, broadcasting, tiling, reductions.

Part of the `graph-to-te` pass (`graph_to_te.py` applies `PATTERNS` with its own); helpers in `builder.py`.
Data movement becomes index arithmetic on `index` values inside one compute: a slice reads `start + i * step`, a
tile `i mod extent`, a trilu compares the column with the row plus `k`, a concat selects among its inputs (each read
at an index clamped into its own bounds, so no read is ever out of bounds), and a gather looks its constant indices
up in the IR (`start + p * step` when they form an arithmetic progression, else a chain of `arith.select` over the
position, linear in their number).
Reductions are `te.compute` reductions over the reduced axes, with elementwise pre- and post-steps (mean scales
the sum, L2 takes the square root of a sum of squares, log-sum-exp subtracts the maximum first). Float max and min
follow ONNX Runtime's NaN rule: NaN only where the first reduced element is NaN, other NaNs ignored
(`scalar.extreme_term`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import DYNAMIC_INDEX, AnyFloat, DenseArrayBase
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from minimlc.dialects import graph, te
from minimlc.lowering.graph_to_te import scalar
from minimlc.lowering.graph_to_te.builder import (
    Indices,
    Shape,
    broadcast_indices,
    build_compute,
    constant,
    index_constant,
    read,
)
from minimlc.lowering.graph_to_te.extents import Extent, Extents, RunTimeDimensionError, as_index, float_count


def _strided(index: SSAValue, start: int, step: int) -> SSAValue:
    """`start + index * step` as index arithmetic, folding the trivial cases."""
    if step != 1:
        index = arith.MuliOp(index, index_constant(step)).result
    return index if start == 0 else arith.AddiOp(index, index_constant(start)).result


def _linear_position(indices: Indices, extents: Shape) -> SSAValue:
    """Row-major position of `indices` within `extents` (0 for no dims)."""
    position: SSAValue | None = None
    for index, extent in zip(indices, extents):
        if extent == 1:
            continue
        if position is None:
            position = index
        else:
            scaled_position = arith.MuliOp(position, index_constant(extent)).result
            position = arith.AddiOp(scaled_position, index).result
    return index_constant(0) if position is None else position


def _lookup(position: SSAValue, table: Sequence[int]) -> SSAValue:
    """`table[position]` for a compile-time `table`: affine when it is an arithmetic progression."""
    if len(table) == 1:
        return index_constant(table[0])
    step = table[1] - table[0]
    if all(b - a == step for a, b in itertools.pairwise(table)):
        return _strided(position, table[0], step)
    value = index_constant(table[-1])
    for entry, index in reversed(list(enumerate(table[:-1]))):
        is_entry = arith.CmpiOp(position, index_constant(entry), "eq").result
        value = arith.SelectOp(is_entry, index_constant(index), value).result
    return value


def _clamped_offset(along: SSAValue, offset: Extent, extent: Extent, *, last: bool) -> SSAValue:
    """`along - offset` clamped into [0, extent), so that a read of an input not selected stays in bounds
    (the last input is never read below its offset, only clamped from below)."""
    if extent == 1:
        return index_constant(0)
    if offset == 0:
        local = along
    else:
        shifted = arith.SubiOp(along, as_index(offset)).result
        local = arith.MaxSIOp(shifted, index_constant(0)).result
    if last:
        return local
    highest = extent - 1 if isinstance(extent, int) else arith.SubiOp(extent, index_constant(1)).result
    return arith.MinSIOp(local, as_index(highest)).result


class ConcatLowering(RewritePattern):
    """Lower concat to one compute selecting, by the index along the axis, among the inputs' clamped reads."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ConcatOp, rewriter: PatternRewriter) -> None:
        axis = op.axis.value.data
        extents = Extents(op)
        parts = [
            (value, extents.at(value, axis))
            for value in op.inputs
            if graph.shape_of(value)[axis]
        ]
        offsets = [extents.total([extent for _, extent in parts[:number]]) for number in range(len(parts) + 1)]
        shape = [
            offsets[-1] if along == axis else extents.at(op.inputs[0], along) if size == DYNAMIC_INDEX else size
            for along, size in enumerate(graph.shape_of(op.result))
        ]

        def body(indices: Indices) -> SSAValue:
            along = indices[axis]
            value = None
            for number, ((part, extent), offset) in enumerate(zip(parts, offsets)):
                local = _clamped_offset(along, offset, extent, last=number == len(parts) - 1)
                element = read(part, [*indices[:axis], local, *indices[axis + 1 :]])
                if value is None:
                    value = element
                else:
                    before = arith.CmpiOp(along, as_index(offset), "slt").result
                    value = arith.SelectOp(before, value, element).result
            assert value is not None
            return value

        rewriter.replace(op, build_compute("concat", shape, body))


_TO_THE_END = 2**31 - 1
"""An ONNX slice end at or past this runs to the end of its axis (exporters write INT64_MAX or INT32_MAX)."""


def _slice_extents(op: graph.SliceOp, extents: Extents) -> list[Extent]:
    """The extents of a slice's result: a `?` runs from its static start to the end of a `?` input axis, with a
    positive step (anything else is refused)."""
    source, shape = graph.shape_of(op.input), graph.shape_of(op.result)
    ends = op.properties.get("ends", op.attributes.get("ends"))
    result: list[Extent] = []
    for axis, (size, start, step) in enumerate(zip(shape, op.starts.get_values(), op.steps.get_values())):
        if size != DYNAMIC_INDEX:
            result.append(size)
            continue
        to_the_end = not isinstance(ends, DenseArrayBase) or ends.get_values()[axis] >= _TO_THE_END
        if source[axis] != DYNAMIC_INDEX or step < 0 or not to_the_end:
            raise RunTimeDimensionError(
                f"has a run-time extent along axis {axis} that is not a slice to the end of a run-time input axis"
            )
        result.append(extents.strided_count(extents.at(op.input, axis), start, step))
    return result


class SliceLowering(RewritePattern):
    """Lower slice to one compute reading the input at `start + index * step` in every dim."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.SliceOp, rewriter: PatternRewriter) -> None:
        starts, steps = op.starts.get_values(), op.steps.get_values()
        shape = _slice_extents(op, Extents(op))

        def body(indices: Indices) -> SSAValue:
            return read(
                op.input,
                [_strided(i, start, step) for i, start, step in zip(indices, starts, steps)],
            )

        rewriter.replace(op, build_compute("slice", shape, body))


class GatherLowering(RewritePattern):
    """Lower gather to one compute reading the input at the constant index its position selects."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.GatherOp, rewriter: PatternRewriter) -> None:
        axis = op.axis.value.data
        table = op.indices.get_values()
        middle = op.indices_shape

        extents = Extents(op)
        rank = len(graph.shape_of(op.input))
        before = [extents.at(op.input, along) for along in range(axis)]
        after = [extents.at(op.input, along) for along in range(axis + 1, rank)]

        def body(indices: Indices) -> SSAValue:
            position = _linear_position(indices[axis : axis + len(middle)], middle)
            picked = _lookup(position, table)
            return read(op.input, [*indices[:axis], picked, *indices[axis + len(middle) :]])

        shape = [*before, *middle, *after]
        rewriter.replace(op, build_compute("gather", shape, body))


class ExpandLowering(RewritePattern):
    """Lower expand to one compute reading the input numpy-broadcast to the result."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ExpandOp, rewriter: PatternRewriter) -> None:
        extents = Extents(op)
        shape = extents.broadcast(graph.shape_of(op.result), [op.input])
        source = extents.operand(op.input, shape)

        def body(indices: Indices) -> SSAValue:
            return read(op.input, broadcast_indices(source, shape, indices))

        rewriter.replace(op, build_compute("expand", shape, body))


class TileLowering(RewritePattern):
    """Lower tile to one compute reading the input at each index modulo the input's extent."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.TileOp, rewriter: PatternRewriter) -> None:
        extents = Extents(op)
        source = extents.of(op.input)
        repeats = op.repeats.get_values()
        shape = [extents.product([extent, repeat]) for extent, repeat in zip(source, repeats)]

        def body(indices: Indices) -> SSAValue:
            wrapped = [
                index if repeat == 1 else arith.RemUIOp(index, as_index(extent)).result
                for index, extent, repeat in zip(indices, source, repeats)
            ]
            return read(op.input, wrapped)

        rewriter.replace(op, build_compute("tile", shape, body))


class TriluLowering(RewritePattern):
    """Lower trilu to one compute keeping the element where its column minus its row is at least `k` (upper) or at
    most `k` (lower), else 0."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.TriluOp, rewriter: PatternRewriter) -> None:
        k = op.k.value.data

        def body(indices: Indices) -> SSAValue:
            row, column = indices[-2:]
            diagonal = arith.AddiOp(row, index_constant(k)).result if k else row
            kept = arith.CmpiOp(column, diagonal, "sge" if op.upper else "sle").result
            element = read(op.input, indices)
            return arith.SelectOp(kept, element, constant(0, element.type)).result

        rewriter.replace(op, build_compute("trilu", Extents(op).of(op.input), body))


class WhereLowering(RewritePattern):
    """Lower where to one compute selecting between broadcast reads of `x` and `y` by the bool `condition`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.WhereOp, rewriter: PatternRewriter) -> None:
        extents = Extents(op)
        shape = extents.broadcast(graph.shape_of(op.result), [op.condition, op.x, op.y])
        shapes = {value: extents.operand(value, shape) for value in op.operands}

        def body(indices: Indices) -> SSAValue:
            def operand(value: SSAValue) -> SSAValue:
                return read(value, broadcast_indices(shapes[value], shape, indices))

            return arith.SelectOp(operand(op.condition), operand(op.x), operand(op.y)).result

        rewriter.replace(op, build_compute("where", shape, body))


_Scalar = Callable[[SSAValue], SSAValue]


def _square(x: SSAValue) -> SSAValue:
    return arith.MulfOp(x, x).result


_REDUCTIONS: dict[type[graph.ReduceOp], tuple[str, _Scalar | None, _Scalar | None]] = {
    graph.ReduceSumOp: ("sum", None, None),
    graph.ReduceMeanOp: ("sum", None, None),
    graph.ReduceMaxOp: ("max", None, None),
    graph.ReduceMinOp: ("min", None, None),
    graph.ReduceProdOp: ("prod", None, None),
    graph.ReduceL1Op: ("sum", lambda x: math.AbsFOp(x).result, None),
    graph.ReduceL2Op: ("sum", _square, lambda x: math.SqrtOp(x).result),
    graph.ReduceLogSumOp: ("sum", None, lambda x: math.LogOp(x).result),
    graph.ReduceSumSquareOp: ("sum", _square, None),
}
"""Reduction op -> (combiner, elementwise step before it, step after it); mean and log-sum-exp add their own."""


class ReduceLowering(RewritePattern):
    """Lower a reduction to a `te.compute` reduction over its axes, plus an elementwise post-step when it has one."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ReduceOp, rewriter: PatternRewriter) -> None:
        dims = Extents(op)
        source = dims.of(op.input)
        axes = op.axes.get_values()
        keepdims = op.keepdims is not None
        tag = op.name.removeprefix("graph.")
        extents = tuple(source[axis] for axis in axes)
        shape = [
            1 if axis in axes else extent for axis, extent in enumerate(source) if keepdims or axis not in axes
        ]

        def input_indices(indices: Indices) -> list[SSAValue]:
            outputs, reduced = iter(indices[: len(shape)]), iter(indices[len(shape) :])
            picked: list[SSAValue] = []
            for axis in range(len(source)):
                if axis in axes:
                    picked.append(next(reduced))
                    if keepdims:
                        next(outputs)
                else:
                    picked.append(next(outputs))
            return picked

        def reduction(name: str, combiner: str, element: _Scalar) -> te.ComputeOp:
            return build_compute(
                name,
                shape,
                lambda idx: element(read(op.input, input_indices(idx))),
                extents,
                combiner,
            )

        def elementwise(name: str, reduced: te.ComputeOp, function: _Scalar) -> te.ComputeOp:
            return build_compute(name, shape, lambda idx: function(read(reduced.result, idx)))

        if not axes:  # each element reduced alone: only the elementwise steps remain
            combiner, before, after = _REDUCTIONS.get(type(op), ("sum", None, None))

            def alone(idx: Indices) -> SSAValue:
                value = read(op.input, idx)
                value = value if before is None else before(value)
                return value if after is None else after(value)

            rewriter.replace(op, build_compute(tag, shape, alone))
            return
        if isinstance(op, graph.ReduceLogSumExpOp):
            peak = reduction(f"{tag}_max", "max_nnan", lambda x: x)

            def shift(idx: Indices) -> SSAValue:
                """The row's max, or 0 where it is infinite: log(sum(exp(x))) is then +inf for a row holding +inf
                and -inf for a row of -inf, where x - max would be NaN."""
                top = read(peak.result, idx[: len(shape)])
                finite = arith.CmpfOp(math.AbsFOp(top).result, constant(float("inf"), top.type), "olt").result
                return arith.SelectOp(finite, top, constant(0.0, top.type)).result

            def shifted_exp(x: SSAValue, idx: Indices) -> SSAValue:
                return math.ExpOp(arith.SubfOp(x, shift(idx)).result).result

            total = build_compute(
                f"{tag}_sum",
                shape,
                lambda idx: shifted_exp(read(op.input, input_indices(idx)), idx),
                extents,
                "sum",
            )

            def log_plus_peak(idx: Indices) -> SSAValue:
                log = math.LogOp(read(total.result, idx)).result
                return arith.AddfOp(log, shift(idx)).result

            rewriter.replace(op, [peak, total, build_compute(tag, shape, log_plus_peak)])
            return

        combiner, before, after = _REDUCTIONS[type(op)]
        extreme_op = isinstance(op, graph.ReduceMaxOp | graph.ReduceMinOp)
        if extreme_op and isinstance(graph.element_type(op.input), AnyFloat):

            def extreme(idx: Indices) -> SSAValue:  # NaN only where the first element is (`scalar.extreme_term`)
                first = read(op.input, input_indices([*idx[: len(shape)], *(index_constant(0) for _ in extents)]))
                return scalar.extreme_term(read(op.input, input_indices(idx)), first, combiner)

            rewriter.replace(op, build_compute(tag, shape, extreme, extents, combiner))
            return
        if isinstance(op, graph.ReduceMeanOp):
            count = dims.product(extents)
            total = reduction(f"{tag}_sum", combiner, lambda x: x)
            mean = elementwise(tag, total, lambda x: arith.DivfOp(x, float_count(count, x.type)).result)
            rewriter.replace(op, [total, mean])
            return
        reduced = reduction(
            tag if after is None else f"{tag}_sum", combiner, before or (lambda x: x)
        )
        if after is None:
            rewriter.replace(op, reduced)
            return
        rewriter.replace(op, [reduced, elementwise(tag, reduced, after)])


PATTERNS: list[RewritePattern] = [
    ConcatLowering(),
    SliceLowering(),
    GatherLowering(),
    ExpandLowering(),
    TileLowering(),
    TriluLowering(),
    WhereLowering(),
    ReduceLowering(),
]
