"""`toy-fuse-matmul-relu`: a `graph.matmul` whose only user is a `graph.relu` becomes one `toy.matmul_relu`.

    %m = graph.matmul %a, %b : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
    %y = graph.relu %m : tensor<2x8xf32>
    // becomes
    %y = toy.matmul_relu %a, %b : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>

`toy-to-graph` turns it back; a matmul with other users stays as it is (fusing it would compute it twice).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern

from minimlc.dialects import graph
from minimlc_toy import dialect as toy


class MatmulReluFusion(RewritePattern):
    """`graph.relu(graph.matmul(a, b))` -> `toy.matmul_relu(a, b)` when the relu is the matmul's only user."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ReluOp, rewriter: PatternRewriter) -> None:
        matmul = op.input.owner
        if not isinstance(matmul, graph.MatMulOp) or not matmul.result.has_one_use():
            return
        rewriter.replace(op, toy.MatmulReluOp(matmul.lhs, matmul.rhs))
        rewriter.erase(matmul)


@dataclass(frozen=True)
class ToyFuseMatmulReluPass(ModulePass):
    """Fuse graph.matmul followed by graph.relu into toy.matmul_relu."""

    name = "toy-fuse-matmul-relu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(MatmulReluFusion()).rewrite_module(op)
