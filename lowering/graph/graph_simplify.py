"""Graph-level simplifications that never change numerics: drop data movement that moves nothing.

- a reshape to the shape it already has, or a transpose by the identity permutation, is its input;
- a reshape of a reshape is one reshape from the original input;
- a transpose of a transpose is one transpose by the composed permutation (or nothing).

    %a = graph.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
    %b = graph.reshape %a : tensor<6xf32> -> tensor<3x2xf32>
    // becomes
    %b = graph.reshape %x : tensor<2x3xf32> -> tensor<3x2xf32>

Producers left without uses are erased (they are pure).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from minimlc.dialects import graph


class ReshapeSimplification(RewritePattern):
    """Remove a reshape to the same shape; fold a reshape of a reshape into one (static shapes only: a `?` reshape
    is defined by its ONNX target, which speaks of its own input)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ReshapeOp, rewriter: PatternRewriter) -> None:
        if graph.DYNAMIC in (*graph.shape_of(op.input), *graph.shape_of(op.result)):
            return  # `tensor<?x?xf32>` to `tensor<?x?xf32>` may move sizes; a fold would lose the ONNX target
        if op.input.type == op.result.type:
            rewriter.replace(op, [], [op.input])
            return
        producer = op.input.owner
        if isinstance(producer, graph.ReshapeOp):
            rewriter.replace(op, graph.ReshapeOp(producer.input, graph.shape_of(op.result)))


class TransposeSimplification(RewritePattern):
    """Remove an identity transpose; compose a transpose of a transpose."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.TransposeOp, rewriter: PatternRewriter) -> None:
        perm = op.perm.get_values()
        if list(perm) == sorted(perm):
            rewriter.replace(op, [], [op.input])
            return
        producer = op.input.owner
        if isinstance(producer, graph.TransposeOp):
            inner = producer.perm.get_values()
            rewriter.replace(op, graph.TransposeOp(producer.input, [inner[axis] for axis in perm]))


@dataclass(frozen=True)
class GraphSimplifyPass(ModulePass):
    """Remove no-op reshapes and transposes and compose chains of them (numerically neutral)."""

    name = "graph-simplify"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier([ReshapeSimplification(), TransposeSimplification()]),
        ).rewrite_module(op)
