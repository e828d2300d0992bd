"""graph-to-te patterns for the ops of run-time indices: take (Gather), take_along_axis (GatherElements), cumsum,
cumprod, argmax, argmin and reverse_sequence (a gather along time at an index computed from the entry's length).

Part of the `graph-to-te` pass (`graph_to_te.py` applies `PATTERNS` with its own). A run-time index is read as a
value, wrapped if negative and clamped into its axis before it becomes an `index`, so no read is out of bounds
whatever the data:

    %y = te.compute "take" (%i, %j) -> tensor<8x16xf32> {
      %id = te.read %ids[%i] : tensor<8xi64>
      %row = <max(0, min(n - 1, id < 0 ? id + n : id))> ; index_cast
      %v = te.read %table[%row, %j] : tensor<100x16xf32>
      te.yield %v : f32
    }

A cumulative sum (product) is a sum (product) reduction over its axis of the elements on the summed side of each
position (quadratic in the axis' extent, which is fine for the position and mask lengths models use it on).
Arg-reductions are a
max/min reduction, then a reduction of the positions holding it (`min` of positions for the first, `max` for the
last); with NaNs, ONNX Runtime's answer: the first position if it holds NaN, else NaNs are passed over.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerType, i64
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from minimlc.dialects import graph
from minimlc.lowering.graph_to_te import scalar
from minimlc.lowering.graph_to_te.builder import Indices, build_compute, constant, index_constant, read
from minimlc.lowering.graph_to_te.extents import Extent, Extents


def bounded_index(value: SSAValue, extent: Extent) -> SSAValue:
    """A run-time integer index into an axis of `extent` as an `index`: negative ones count from the end, and what is
    still out of range is clamped into the axis."""
    assert isinstance(value.type, IntegerType)

    def extent_plus(offset: int) -> SSAValue:
        """`extent + offset` in the index's integer type."""
        if isinstance(extent, int):
            return constant(extent + offset, value.type)
        size = arith.IndexCastOp(extent, value.type).result
        return size if offset == 0 else arith.AddiOp(size, constant(offset, value.type)).result

    zero = constant(0, value.type)
    negative = arith.CmpiOp(value, zero, "slt").result
    wrapped = arith.SelectOp(negative, arith.AddiOp(value, extent_plus(0)).result, value).result
    clamped = arith.MinSIOp(arith.MaxSIOp(wrapped, zero).result, extent_plus(-1)).result
    return arith.IndexCastOp(clamped, IndexType()).result


class TakeLowering(RewritePattern):
    """Lower take to one compute "take" reading the input at the bounded run-time index of each position."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.TakeOp, rewriter: PatternRewriter) -> None:
        axis = op.axis.value.data
        extents = Extents(op)
        source = extents.of(op.input)
        extent = source[axis]
        rank = len(graph.shape_of(op.indices))

        def body(indices: Indices) -> SSAValue:
            picked = bounded_index(read(op.indices, indices[axis : axis + rank]), extent)
            return read(op.input, [*indices[:axis], picked, *indices[axis + rank :]])

        shape = [*source[:axis], *extents.of(op.indices), *source[axis + 1 :]]
        rewriter.replace(op, build_compute("take", shape, body))


class TakeAlongAxisLowering(RewritePattern):
    """Lower take_along_axis to one compute "take_along_axis" reading the input at the bounded index along `axis`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.TakeAlongAxisOp, rewriter: PatternRewriter) -> None:
        axis = op.axis.value.data
        extents = Extents(op)
        extent = extents.at(op.input, axis)

        def body(indices: Indices) -> SSAValue:
            picked = bounded_index(read(op.indices, indices), extent)
            return read(op.input, [*indices[:axis], picked, *indices[axis + 1 :]])

        rewriter.replace(op, build_compute("take_along_axis", extents.of(op.indices), body))


class CumulativeLowering(RewritePattern):
    """Lower cumsum (cumprod) to a sum (product) reduction "cumsum" ("cumprod") over the axis of the elements on the
    reduced side of each position, the others replaced by 0 (1)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.CumulativeOp, rewriter: PatternRewriter) -> None:
        axis = op.axis.value.data
        shape = Extents(op).of(op.input)
        tag = op.name.removeprefix("graph.")
        identity = 0 if op.COMBINER == "sum" else 1
        # k is reduced at position i when k <= i (k < i exclusive), or k >= i (k > i) in reverse
        predicate = {(False, False): "ule", (True, False): "ult", (False, True): "uge", (True, True): "ugt"}[
            (op.exclusive is not None, op.reverse is not None)
        ]

        def body(indices: Indices) -> SSAValue:
            k = indices[-1]
            element = read(op.input, [*indices[:axis], k, *indices[axis + 1 : -1]])
            summed = arith.CmpiOp(k, indices[axis], predicate).result
            return arith.SelectOp(summed, element, constant(identity, element.type)).result

        rewriter.replace(op, build_compute(tag, shape, body, (shape[axis],), op.COMBINER))


class ArgReduceLowering(RewritePattern):
    """Lower argmax/argmin to the extreme along the axis ("argmax_value") and the reduction of the positions holding
    it ("argmax"). With NaNs, as ONNX Runtime (a scan from the first element taking each value greater than the best
    so far, or greater or equal with `select_last_index`): the first element where it is NaN, else the first (last)
    position of the extreme of the other values, NaNs ignored (`scalar.extreme_term`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ArgReduceOp, rewriter: PatternRewriter) -> None:
        tag = op.name.removeprefix("graph.")
        axis = op.axis.value.data
        source = Extents(op).of(op.input)
        kept: list[Extent] = [1 if at == axis else extent for at, extent in enumerate(source)]
        shape = kept if op.keepdims else [extent for at, extent in enumerate(source) if at != axis]
        last = op.select_last_index is not None

        def element(indices: Indices, position: SSAValue) -> SSAValue:
            return read(op.input, [*indices[:axis], position, *indices[axis + 1 : -1]])

        extreme_combiner = "max" if op.PREDICATE == "greater" else "min"

        def term(indices: Indices) -> SSAValue:
            first = element(indices, index_constant(0))
            return scalar.extreme_term(element(indices, indices[-1]), first, extreme_combiner)

        extreme = build_compute(f"{tag}_value", kept, term, (source[axis],), extreme_combiner)

        def position(indices: Indices) -> SSAValue:
            outer = list(indices[:-1]) if op.keepdims else [*indices[:axis], index_constant(0), *indices[axis:-1]]
            value = read(op.input, [*outer[:axis], indices[-1], *outer[axis + 1 :]])
            best = read(extreme.result, outer)
            if isinstance(value.type, IntegerType):
                holds = arith.CmpiOp(value, best, "eq").result
            else:  # the extreme is NaN exactly when the first element is, and then that one holds it
                equal = arith.CmpfOp(value, best, "oeq").result
                at_first = arith.CmpiOp(indices[-1], index_constant(0), "eq").result
                first_nan = arith.AndIOp(at_first, arith.CmpfOp(best, best, "uno").result).result
                holds = arith.OrIOp(equal, first_nan).result
            k = arith.IndexCastOp(indices[-1], i64).result
            missing = constant(-1 if last else (1 << 63) - 1, i64)
            return arith.SelectOp(holds, k, missing).result

        positions = build_compute(tag, shape, position, (source[axis],), "max" if last else "min")
        rewriter.replace(op, [extreme, positions])


class ReverseSequenceLowering(RewritePattern):
    """Lower reverse_sequence to one compute "reverse_sequence" reading time index `t < len ? len - 1 - t : t` of
    its batch entry, with `len` clamped to the time axis' extent (so every read is inside it)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ReverseSequenceOp, rewriter: PatternRewriter) -> None:
        batch, time = op.batch_axis.value.data, op.time_axis.value.data
        steps = graph.shape_of(op.input)[time]

        def body(indices: Indices) -> SSAValue:
            length = arith.MinSIOp(read(op.lengths, [indices[batch]]), constant(steps, i64)).result
            position = arith.IndexCastOp(indices[time], i64).result
            reversed_position = arith.SubiOp(arith.SubiOp(length, constant(1, i64)).result, position).result
            inside = arith.CmpiOp(position, length, "slt").result
            source = arith.SelectOp(inside, reversed_position, position).result
            picked = arith.IndexCastOp(source, IndexType()).result
            return read(op.input, [picked if axis == time else index for axis, index in enumerate(indices)])

        rewriter.replace(op, build_compute("reverse_sequence", graph.shape_of(op.result), body))


PATTERNS: list[RewritePattern] = [
    TakeLowering(),
    TakeAlongAxisLowering(),
    CumulativeLowering(),
    ArgReduceLowering(),
    ReverseSequenceLowering(),
]
