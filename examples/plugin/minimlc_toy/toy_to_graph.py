"""`toy-to-graph`: lower the toy dialect into graph ops, which minimlc compiles.

    %g = toy.gelu %x : tensor<8xf32>
    %y = toy.matmul_relu %a, %b : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
    // becomes
    %g = graph.gelu %x {approximate = "tanh"} : tensor<8xf32>
    %m = graph.matmul %a, %b : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
    %y = graph.relu %m : tensor<2x8xf32>

With `expand-gelu=true` the GELU is written out in elementwise graph ops instead (mul, add, tanh and constants), the
way a frontend without a GELU op would have to.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from minimlc.dialects import graph
from minimlc.dialects.graph.core import shape_of
from minimlc_toy import dialect as toy


class GeluLowering(RewritePattern):
    """`toy.gelu` -> `graph.gelu {approximate = "tanh"}`, or its formula in elementwise graph ops."""

    def __init__(self, expand: bool):
        self.expand = expand

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: toy.GeluOp, rewriter: PatternRewriter) -> None:
        if not self.expand:
            rewriter.replace(op, graph.GeluOp(op.input, approximate="tanh"))
            return
        x = op.input
        shape = shape_of(x)
        new: list[Operation] = []

        def constant(value: float) -> SSAValue:
            new.append(graph.ConstantOp(value, shape))
            return new[-1].results[0]

        def binary(kind: type[graph.ElementwiseBinaryOp], lhs: SSAValue, rhs: SSAValue) -> SSAValue:
            new.append(kind(lhs, rhs))
            return new[-1].results[0]

        cube = binary(graph.MulOp, binary(graph.MulOp, x, x), x)
        inner = binary(graph.AddOp, x, binary(graph.MulOp, constant(0.044715), cube))
        tanh = graph.TanhOp(binary(graph.MulOp, constant(math.sqrt(2 / math.pi)), inner))
        new.append(tanh)
        one_plus = binary(graph.AddOp, constant(1.0), tanh.result)
        binary(graph.MulOp, binary(graph.MulOp, constant(0.5), x), one_plus)
        rewriter.replace(op, new)


class MatmulReluLowering(RewritePattern):
    """`toy.matmul_relu` -> `graph.matmul` then `graph.relu`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: toy.MatmulReluOp, rewriter: PatternRewriter) -> None:
        matmul = graph.MatMulOp(op.lhs, op.rhs)
        rewriter.replace(op, [matmul, graph.ReluOp(matmul.result)])


@dataclass(frozen=True)
class ToyToGraphPass(ModulePass):
    """Lower toy.gelu and toy.matmul_relu into graph ops."""

    name = "toy-to-graph"

    expand_gelu: bool = False
    """Write GELU as elementwise graph ops instead of `graph.gelu`."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = GreedyRewritePatternApplier([GeluLowering(self.expand_gelu), MatmulReluLowering()])
        PatternRewriteWalker(patterns).rewrite_module(op)
