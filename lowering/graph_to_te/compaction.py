"""graph-to-te patterns for the ops with a data-dependent extent: nonzero, compress, unique.

Part of the `graph-to-te` pass (`graph_to_te.py` applies `PATTERNS` with its own). Each compacts the positions m of
a 1-D index space that it keeps: position m goes to slot `rank(m)`, the number of kept positions before it (for
unique, of distinct values before it). Computes, each a reduction over the positions (quadratic in their number,
which suits the small tensors these ops see in models):

    %rank = te.compute "nonzero_rank" (%m) reduce sum (%k : 6) -> tensor<6xi64> { <kept(k) && k < m> }
    %count = te.compute "nonzero_count" (%z) reduce sum (%k : 6) -> tensor<1xi64> { <kept(k)> }
    %source = te.compute "nonzero_source" (%j) reduce max (%k : 6) -> tensor<6xi64> {
      <kept(k) && rank(k) == j ? k : -1> }

then the result reads the element at each slot's source (slots past the count read position 0).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, i64
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from minimlc.dialects import graph, te
from minimlc.lowering.graph_to_te import scalar
from minimlc.lowering.graph_to_te.builder import Indices, build_compute, constant, index_constant, read
from minimlc.lowering.graph_to_te.selection import delinearise

Predicate = Callable[[SSAValue], SSAValue]
"""A position (an index) -> whether it holds (i1), built in the body where it is called."""
Comparison = Callable[[SSAValue, SSAValue], SSAValue]
"""Two positions -> whether the first is equal to (less than) the second (i1), built in the body where called."""


def _as_i64(index: SSAValue) -> SSAValue:
    return arith.IndexCastOp(index, i64).result


def _as_index(value: SSAValue) -> SSAValue:
    """An i64 position as an index, negative ones (no source) as 0."""
    return arith.IndexCastOp(arith.MaxSIOp(value, constant(0, i64)).result, IndexType()).result


def _count_of(condition: SSAValue) -> SSAValue:
    return arith.SelectOp(condition, constant(1, i64), constant(0, i64)).result


def _compaction(
    tag: str, size: int, kept: Predicate, before: Callable[[SSAValue, SSAValue], SSAValue]
) -> tuple[te.ComputeOp, te.ComputeOp, te.ComputeOp]:
    """The rank of each of `size` positions (the kept positions k with `before(k, m)`), the number of kept
    positions, and the source position of each slot (-1 past the count)."""
    rank = build_compute(
        f"{tag}_rank",
        (size,),
        lambda idx: _count_of(arith.AndIOp(kept(idx[1]), before(idx[1], idx[0])).result),
        (size,),
        "sum",
    )
    count = build_compute(f"{tag}_count", (1,), lambda idx: _count_of(kept(idx[1])), (size,), "sum")

    def source_of(indices: Indices) -> SSAValue:
        slot, position = indices
        ranked = arith.CmpiOp(read(rank.result, [position]), _as_i64(slot), "eq").result
        holds = arith.AndIOp(kept(position), ranked).result
        return arith.SelectOp(holds, _as_i64(position), constant(-1, i64)).result

    source = build_compute(f"{tag}_source", (size,), source_of, (size,), "max")
    return rank, count, source


def _earlier(k: SSAValue, m: SSAValue) -> SSAValue:
    return arith.CmpiOp(k, m, "ult").result


class NonZeroLowering(RewritePattern):
    """Lower nonzero to the compaction of the nonzero elements' row-major positions, then their coordinates
    ("nonzero")."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.NonZeroOp, rewriter: PatternRewriter) -> None:
        source = graph.shape_of(op.input)
        size = graph.shape_of(op.result)[1]

        def kept(position: SSAValue) -> SSAValue:
            element = read(op.input, delinearise(position, source))
            return scalar.cast(element, graph.BOOL)

        rank, count, positions = _compaction("nonzero", size, kept, _earlier)

        def coordinate(indices: Indices) -> SSAValue:
            axis, slot = indices
            coordinates = delinearise(_as_index(read(positions.result, [slot])), source)
            value = coordinates[0]
            for d, candidate in enumerate(coordinates[1:], start=1):
                at_axis = arith.CmpiOp(axis, index_constant(d), "eq").result
                value = arith.SelectOp(at_axis, candidate, value).result
            return _as_i64(value)

        result = build_compute("nonzero", graph.shape_of(op.result), coordinate)
        rewriter.replace(op, [rank, count, positions, result], [result.result, count.result])


class CompressLowering(RewritePattern):
    """Lower compress to the compaction of the positions along the axis where the condition holds, then the slices
    there ("compress")."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.CompressOp, rewriter: PatternRewriter) -> None:
        axis = op.axis.value.data
        shape = graph.shape_of(op.result)
        rank, count, positions = _compaction(
            "compress", shape[axis], lambda position: read(op.condition, [position]), _earlier
        )

        def body(indices: Indices) -> SSAValue:
            picked = _as_index(read(positions.result, [indices[axis]]))
            return read(op.input, [*indices[:axis], picked, *indices[axis + 1 :]])

        result = build_compute("compress", shape, body)
        rewriter.replace(op, [rank, count, positions, result], [result.result, count.result])


def _row_comparisons(op: graph.UniqueOp) -> tuple[list[te.ComputeOp], Comparison, Comparison]:
    """Equality and (lexicographic) order of the input's elements, or of its rows for a 2-D input: then the
    first column where two rows differ ("unique_differ", the row length where none does) decides both."""
    shape = graph.shape_of(op.input)
    if len(shape) == 1:
        return (
            [],
            lambda k, m: scalar.binary("equal", read(op.input, [k]), read(op.input, [m])),
            lambda k, m: scalar.binary("less", read(op.input, [k]), read(op.input, [m])),
        )
    size, length = shape

    def first_difference(indices: Indices) -> SSAValue:
        k, m, column = indices
        same = scalar.binary("equal", read(op.input, [k, column]), read(op.input, [m, column]))
        differ = scalar.logical_not(same)
        return arith.SelectOp(differ, _as_i64(column), constant(length, i64)).result

    differ = build_compute("unique_differ", (size, size), first_difference, (length,), "min")

    def equal(k: SSAValue, m: SSAValue) -> SSAValue:
        return arith.CmpiOp(read(differ.result, [k, m]), constant(length, i64), "eq").result

    def less(k: SSAValue, m: SSAValue) -> SSAValue:
        column = read(differ.result, [k, m])
        at = arith.IndexCastOp(arith.MinSIOp(column, constant(length - 1, i64)).result, IndexType()).result
        smaller = scalar.binary("less", read(op.input, [k, at]), read(op.input, [m, at]))
        return arith.AndIOp(arith.CmpiOp(column, constant(length, i64), "slt").result, smaller).result

    return [differ], equal, less


class UniqueLowering(RewritePattern):
    """Lower unique to each element's (row's) first occurrence ("unique_first"), the compaction of the first
    occurrences (ranked by value when sorted, else by position), then the values, first indices, inverse and
    counts."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.UniqueOp, rewriter: PatternRewriter) -> None:
        shape = graph.shape_of(op.input)
        size = shape[0]
        comparisons, equal, less = _row_comparisons(op)

        def first_of(indices: Indices) -> SSAValue:
            position, other = indices
            return arith.SelectOp(equal(other, position), _as_i64(other), constant(size, i64)).result

        first = build_compute("unique_first", (size,), first_of, (size,), "min")

        def kept(position: SSAValue) -> SSAValue:
            return arith.CmpiOp(read(first.result, [position]), _as_i64(position), "eq").result

        def before(k: SSAValue, m: SSAValue) -> SSAValue:
            if op.sorted is not None:
                return less(k, m)
            return arith.CmpiOp(_as_i64(k), read(first.result, [m]), "slt").result

        rank, count, positions = _compaction("unique", size, kept, before)

        def value(indices: Indices) -> SSAValue:
            return read(op.input, [_as_index(read(positions.result, indices[:1])), *indices[1:]])

        values = build_compute("unique", shape, value)
        indices = build_compute("unique_indices", (size,), lambda idx: read(positions.result, idx))
        inverse = build_compute("unique_inverse", (size,), lambda idx: read(rank.result, idx))

        def occurrences(indices: Indices) -> SSAValue:
            slot, position = indices
            return _count_of(arith.CmpiOp(read(rank.result, [position]), _as_i64(slot), "eq").result)

        counts = build_compute("unique_counts", (size,), occurrences, (size,), "sum")
        computes = [*comparisons, first, rank, count, positions, values, indices, inverse, counts]
        rewriter.replace(
            op, computes, [values.result, indices.result, inverse.result, counts.result, count.result]
        )


PATTERNS: list[RewritePattern] = [NonZeroLowering(), CompressLowering(), UniqueLowering()]
