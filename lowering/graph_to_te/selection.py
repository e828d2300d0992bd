"""graph-to-te patterns for the ops that scatter to, gather from or pick out elements at run-time positions:
scatter_elements, scatter_nd, gather_nd, one_hot, top_k.

Part of the `graph-to-te` pass (`graph_to_te.py` applies `PATTERNS` with its own). te computes are pure, so a
scatter is written from the side of each result element: a reduction over the updates that could land on it.
Run-time indices go through `indexing.bounded_index` (wrapped if negative, clamped into the axis), so no read is out
of bounds whatever the data:

    %hit = te.compute "scatter_nd_updates" (%i, %j) reduce sum (%b : 2) -> tensor<4x3xf32> {
      %row = <bounded(te.read %idx[%b, 0])>
      %u = te.read %upd[%b, %j] : tensor<2x3xf32>
      te.yield <%row == %i ? %u : 0.0> : f32
    }
    %y = te.compute "scatter_nd" (%i, %j) -> tensor<4x3xf32> { <data[i, j] + hit[i, j]> }

With reduction `none` the reduction is the `max` of the matching update positions (the last one wins, -1 for none),
and the second compute reads that update or keeps the data. TopK ranks each element by the number of elements
before it (better, or equal at a lower index), then finds the element of each rank: both quadratic in the axis'
extent, which suits the sizes models select from.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerType, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from minimlc.dialects import graph
from minimlc.lowering.graph_to_te import scalar
from minimlc.lowering.graph_to_te.builder import (
    Indices,
    Shape,
    build_compute,
    constant,
    index_constant,
    linear_index,
    read,
)
from minimlc.lowering.graph_to_te.indexing import bounded_index

COMBINERS = {"add": "sum", "mul": "prod", "max": "max", "min": "min"}
"""Scatter reduction -> the te combiner that folds the updates landing on one element (the reduction's name is also
the `scalar.binary` kind that then combines them with the data)."""


def reduction_identity(combiner: str, element: Attribute) -> SSAValue:
    """The value that leaves a `combiner` reduction unchanged: 0, 1, or the element type's lowest or highest."""
    if isinstance(element, IntegerType):
        width = element.width.data
        identities = {"sum": 0, "prod": 1, "max": -(1 << (width - 1)), "min": (1 << (width - 1)) - 1}
        return constant(identities[combiner], element)
    return constant({"sum": 0.0, "prod": 1.0, "max": float("-inf"), "min": float("inf")}[combiner], element)


def _as_i64(index: SSAValue) -> SSAValue:
    return arith.IndexCastOp(index, i64).result


def _is_at(value: SSAValue, index: SSAValue) -> SSAValue:
    """Whether the i64 `value` equals the `index`."""
    return arith.CmpiOp(value, _as_i64(index), "eq").result


def _all(conditions: Sequence[SSAValue]) -> SSAValue:
    result = conditions[0]
    for condition in conditions[1:]:
        result = arith.AndIOp(result, condition).result
    return result


def delinearise(linear: SSAValue, extents: Shape) -> list[SSAValue]:
    """Row-major indices into `extents` of the `index` value `linear`."""
    indices: list[SSAValue] = []
    for axis, extent in enumerate(extents):
        stride = 1
        for inner in extents[axis + 1 :]:
            stride *= inner
        quotient = linear if stride == 1 else arith.DivUIOp(linear, index_constant(stride)).result
        indices.append(quotient if axis == 0 else arith.RemUIOp(quotient, index_constant(extent)).result)
    return indices


def _scatter(
    op: graph.ScatterOp,
    reduce_extents: Shape,
    matches: Callable[[Indices, Indices], SSAValue],
    update_at: Callable[[Indices, Indices], list[SSAValue]],
    rewriter: PatternRewriter,
) -> None:
    """Lower a scatter: a reduction over `reduce_extents` (the update positions that may land on an element, given
    the element's and the reduction's indices) of the matching updates (or their last position), then the result."""
    tag = op.name.removeprefix("graph.")
    shape = graph.shape_of(op.result)
    reduction = op.reduction.data
    rank = len(shape)

    if reduction == "none":

        def last_update(indices: Indices) -> SSAValue:
            element, update = indices[:rank], indices[rank:]
            position = _as_i64(linear_index(update, reduce_extents))
            return arith.SelectOp(matches(element, update), position, constant(-1, i64)).result

        source = build_compute(f"{tag}_source", shape, last_update, reduce_extents, "max")

        def written(indices: Indices) -> SSAValue:
            position = read(source.result, indices)
            hit = arith.CmpiOp(position, constant(0, i64), "sge").result
            clamped = arith.IndexCastOp(arith.MaxSIOp(position, constant(0, i64)).result, IndexType()).result
            update = read(op.updates, update_at(indices, delinearise(clamped, reduce_extents)))
            return arith.SelectOp(hit, update, read(op.data, indices)).result

        rewriter.replace(op, [source, build_compute(tag, shape, written)])
        return

    combiner = COMBINERS[reduction]

    def landing(indices: Indices) -> SSAValue:
        element, update = indices[:rank], indices[rank:]
        value = read(op.updates, update_at(element, update))
        return arith.SelectOp(matches(element, update), value, reduction_identity(combiner, value.type)).result

    updates = build_compute(f"{tag}_updates", shape, landing, reduce_extents, combiner)

    def combined(indices: Indices) -> SSAValue:
        return scalar.binary(reduction, read(op.data, indices), read(updates.result, indices))

    rewriter.replace(op, [updates, build_compute(tag, shape, combined)])


class ScatterElementsLowering(RewritePattern):
    """Lower scatter_elements to a reduction over the axis of the indices ("scatter_elements_updates" or
    "scatter_elements_source") and the combined result ("scatter_elements")."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ScatterElementsOp, rewriter: PatternRewriter) -> None:
        axis = op.axis.value.data
        source, indices = graph.shape_of(op.data), graph.shape_of(op.indices)

        def update_at(element: Indices, update: Indices) -> list[SSAValue]:
            """Position in the indices and updates: the element's own outside the axis (clamped to the indices'
            extent there; `matches` rules out the clamped ones), the update's along it."""
            position = list(element)
            for d, (extent, inner) in enumerate(zip(source, indices)):
                if d != axis and inner < extent:
                    beyond = arith.CmpiOp(element[d], index_constant(inner), "uge").result
                    position[d] = arith.SelectOp(beyond, index_constant(inner - 1), element[d]).result
            position[axis] = update[0]
            return position

        def matches(element: Indices, update: Indices) -> SSAValue:
            target = bounded_index(read(op.indices, update_at(element, update)), source[axis])
            conditions = [arith.CmpiOp(target, element[axis], "eq").result]
            conditions += [
                arith.CmpiOp(element[d], index_constant(inner), "ult").result
                for d, (extent, inner) in enumerate(zip(source, indices))
                if d != axis and inner < extent
            ]
            return _all(conditions)

        _scatter(op, (indices[axis],), matches, update_at, rewriter)


class ScatterNDLowering(RewritePattern):
    """Lower scatter_nd to a reduction over the update positions ("scatter_nd_updates" or "scatter_nd_source") and
    the combined result ("scatter_nd")."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ScatterNDOp, rewriter: PatternRewriter) -> None:
        source, indices = graph.shape_of(op.data), graph.shape_of(op.indices)
        depth = indices[-1]
        batch = indices[:-1]
        # one index tuple alone still needs a reduction axis: of extent 1, unused
        reduce_extents = batch or (1,)

        def batch_of(update: Indices) -> list[SSAValue]:
            return list(update[: len(batch)])

        def update_at(element: Indices, update: Indices) -> list[SSAValue]:
            return [*batch_of(update), *element[depth:]]

        def matches(element: Indices, update: Indices) -> SSAValue:
            return _all(
                [
                    arith.CmpiOp(
                        bounded_index(read(op.indices, [*batch_of(update), index_constant(m)]), source[m]),
                        element[m],
                        "eq",
                    ).result
                    for m in range(depth)
                ]
            )

        _scatter(op, reduce_extents, matches, update_at, rewriter)


class GatherNDLowering(RewritePattern):
    """Lower gather_nd to one compute "gather_nd" reading the input at the bounded index tuple of each position."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.GatherNDOp, rewriter: PatternRewriter) -> None:
        source, indices = graph.shape_of(op.input), graph.shape_of(op.indices)
        batch = op.batch_dims.value.data
        depth, outer = indices[-1], len(indices) - 1

        def body(position: Indices) -> SSAValue:
            tuple_at = position[:outer]
            picked = [
                bounded_index(read(op.indices, [*tuple_at, index_constant(m)]), source[batch + m]) for m in range(depth)
            ]
            return read(op.input, [*position[:batch], *picked, *position[outer:]])

        rewriter.replace(op, build_compute("gather_nd", graph.shape_of(op.result), body))


class OneHotLowering(RewritePattern):
    """Lower one_hot to one compute "one_hot" choosing the on or off value by comparing the (wrapped) index with the
    position along the new axis."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.OneHotOp, rewriter: PatternRewriter) -> None:
        axis, depth = op.axis.value.data, op.depth.value.data

        def body(indices: Indices) -> SSAValue:
            index = scalar.cast(read(op.indices, [*indices[:axis], *indices[axis + 1 :]]), i64)
            negative = arith.CmpiOp(index, constant(0, i64), "slt").result
            wrapped = arith.SelectOp(negative, arith.AddiOp(index, constant(depth, i64)).result, index).result
            on, off = read(op.values, [index_constant(1)]), read(op.values, [index_constant(0)])
            return arith.SelectOp(_is_at(wrapped, indices[axis]), on, off).result

        rewriter.replace(op, build_compute("one_hot", graph.shape_of(op.result), body))


class TopKLowering(RewritePattern):
    """Lower top_k to each element's rank along the axis ("top_k_rank"), the position of each of the first k ranks
    ("top_k_indices") and the elements there ("top_k")."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.TopKOp, rewriter: PatternRewriter) -> None:
        axis = op.axis.value.data
        source, shape = graph.shape_of(op.input), graph.shape_of(op.values)
        better = "greater" if op.largest is not None else "less"

        def along(indices: Indices, position: SSAValue) -> list[SSAValue]:
            return [*indices[:axis], position, *indices[axis + 1 :]]

        def before(indices: Indices) -> SSAValue:
            element, other_at = indices[:-1], indices[-1]
            mine, other = read(op.input, element), read(op.input, along(element, other_at))
            tie = arith.AndIOp(
                scalar.binary("equal", other, mine), arith.CmpiOp(other_at, element[axis], "ult").result
            ).result
            ahead = arith.OrIOp(scalar.binary(better, other, mine), tie).result
            return arith.SelectOp(ahead, constant(1, i64), constant(0, i64)).result

        rank = build_compute("top_k_rank", source, before, (source[axis],), "sum")

        def holder(indices: Indices) -> SSAValue:
            element, candidate = indices[:-1], indices[-1]
            ranked = _is_at(read(rank.result, along(element, candidate)), element[axis])
            return arith.SelectOp(ranked, _as_i64(candidate), constant(-1, i64)).result

        positions = build_compute("top_k_indices", shape, holder, (source[axis],), "max")

        def value(indices: Indices) -> SSAValue:
            return read(op.input, along(indices, bounded_index(read(positions.result, indices), source[axis])))

        values = build_compute("top_k", shape, value)
        rewriter.replace(op, [rank, positions, values], [values.result, positions.result])


PATTERNS: list[RewritePattern] = [
    ScatterElementsLowering(),
    ScatterNDLowering(),
    GatherNDLowering(),
    OneHotLowering(),
    TopKLowering(),
]
