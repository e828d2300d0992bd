"""graph-to-te pattern for `graph.attention`: one kernel of six stages, computed one query row at a time.

Part of the `graph-to-te` pass (`graph_to_te.py` applies `patterns(groups)`). The stages share the row axes
(batch axes and the query index) and are one kernel (`te.KERNEL_GROUP`), so the `rows` schedule computes them row by
row: a row's scores, statistics and exponentials stay in cache between the two products, and the [.., S, T]
probabilities never go to memory as a whole. Both products are dot products along unit-stride rows (the key and
the transposed value), which LLVM vectorizes as reassociable sums:

    %s = te.compute "attention_scores" (%b, %i, %j) reduce sum (%d : D)   // q[b, i, d] * k[b, j, d]
    %m = te.compute "attention_max" (%b, %i, %0) reduce max_nnan (%j : T) // s * scale + bias
    %e = te.compute "attention_exp" (%b, %i, %j)                          // exp(s * scale + bias - m)
    %z = te.compute "attention_sum" (%b, %i, %0) reduce sum (%j : T)      // e
    %o = te.compute "attention_context" (%b, %i, %c) reduce sum (%j : T)  // e[b, i, j] * vt[b, c, j]
    %y = te.compute "attention" (%b, %i, %c)                              // o / z

The division by the sum is applied to the E outputs of a row rather than to its T probabilities.
"""

from __future__ import annotations

from xdsl.dialects import arith, math
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from minimlc.dialects import graph, te
from minimlc.lowering.graph_to_te.builder import (
    Indices,
    KernelGroups,
    broadcast_indices,
    build_compute,
    index_constant,
    read,
)
from minimlc.lowering.graph_to_te.extents import Extents


class AttentionLowering(RewritePattern):
    """Lower graph.attention to its six stages (module docstring)."""

    def __init__(self, groups: KernelGroups):
        self.groups = groups

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.AttentionOp, rewriter: PatternRewriter) -> None:
        extents = Extents(op)
        query = extents.of(op.query)
        rows = query[:-1]
        keys = extents.at(op.key, len(graph.shape_of(op.key)) - 2)
        depth, values = query[-1], extents.at(op.value_t, len(graph.shape_of(op.value_t)) - 2)
        scores_shape, row_shape = (*rows, keys), (*rows, 1)
        scale_shape, bias = graph.shape_of(op.scale), op.bias

        def scores_body(indices: Indices) -> SSAValue:
            batch, at, j, d = indices[: len(rows) - 1], indices[len(rows) - 1], indices[-2], indices[-1]
            q = read(op.query, [*batch, at, d])
            return arith.MulfOp(q, read(op.key, [*batch, j, d])).result

        scores = build_compute("attention_scores", scores_shape, scores_body, (depth,), "sum")

        def logit(indices: Indices) -> SSAValue:
            """scores * scale + bias at scores indices."""
            value = arith.MulfOp(read(scores.result, indices), read(op.scale, [_zero()] * len(scale_shape))).result
            if bias is None:
                return value
            at = broadcast_indices(graph.shape_of(bias), scores_shape, indices)
            return arith.AddfOp(value, read(bias, at)).result

        def row_reduction(tag: str, summand: te.ComputeOp | None, combiner: str) -> te.ComputeOp:
            def body(indices: Indices) -> SSAValue:
                at = [*indices[: len(rows)], indices[-1]]
                return logit(at) if summand is None else read(summand.result, at)

            return build_compute(tag, row_shape, body, (keys,), combiner)

        def per_row(tensor: te.ComputeOp, indices: Indices) -> SSAValue:
            return read(tensor.result, [*indices[: len(rows)], _zero()])

        peak = row_reduction("attention_max", None, "max_nnan")
        exp = build_compute(
            "attention_exp",
            scores_shape,
            lambda indices: math.ExpOp(arith.SubfOp(logit(indices), per_row(peak, indices)).result).result,
        )
        total = row_reduction("attention_sum", exp, "sum")

        def context_body(indices: Indices) -> SSAValue:
            batch, at, c, j = indices[: len(rows) - 1], indices[len(rows) - 1], indices[-2], indices[-1]
            weight = read(exp.result, [*batch, at, j])
            return arith.MulfOp(weight, read(op.value_t, [*batch, c, j])).result

        result_shape = (*rows, values)
        context = build_compute("attention_context", result_shape, context_body, (keys,), "sum")
        result = build_compute(
            "attention",
            result_shape,
            lambda indices: arith.DivfOp(read(context.result, indices), per_row(total, indices)).result,
        )
        rewriter.replace(op, self.groups.join([scores, peak, exp, total, context, result]))


def _zero() -> SSAValue:
    return index_constant(0)


def patterns(groups: KernelGroups) -> list[RewritePattern]:
    """This module's patterns, numbering their kernels with `groups`."""
    return [AttentionLowering(groups)]
