"""graph-to-te patterns for the ops computed from their indices alone: eye (EyeLike).

Part of the `graph-to-te` pass (`graph_to_te.py` applies `PATTERNS` with its own). The computes read nothing:

    %y = te.compute "eye" (%i, %j) -> tensor<3x4xf32> {
      te.yield <%j == %i + k ? 1.0 : 0.0> : f32
    }
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from minimlc.dialects import graph
from minimlc.lowering.graph_to_te.builder import Indices, build_compute, constant, index_constant


class EyeLowering(RewritePattern):
    """Lower eye to one compute "eye": 1 where the column is the row plus k, else 0."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.EyeOp, rewriter: PatternRewriter) -> None:
        k = op.k.value.data
        element = graph.element_type(op.result)

        def body(indices: Indices) -> SSAValue:
            row, column = indices
            diagonal = arith.AddiOp(row, index_constant(k)).result if k else row
            on = arith.CmpiOp(column, diagonal, "eq").result
            return arith.SelectOp(on, constant(1, element), constant(0, element)).result

        rewriter.replace(op, build_compute("eye", graph.shape_of(op.result), body))


PATTERNS: list[RewritePattern] = [EyeLowering()]
