"""`toy-relu-to-clip`: write every `graph.relu` as `graph.clip` with a lower bound of 0, and an upper one if asked.

    %y = graph.relu %x : tensor<8xf32>
    // becomes (max=6.0 gives ReLU6)
    %y = graph.clip %x {min = 0.000000e+00 : f32} : tensor<8xf32>

A graph-level rewrite to run inside a compile: `InferenceSession(model, extra_passes={"graph": ["toy-relu-to-clip"]})`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern

from minimlc.dialects import graph


class ReluToClip(RewritePattern):
    """`graph.relu` -> `graph.clip {min = 0}` (and `max`, if given)."""

    def __init__(self, high: float | None):
        self.high = high

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ReluOp, rewriter: PatternRewriter) -> None:
        rewriter.replace(op, graph.ClipOp(op.input, 0.0, self.high))


@dataclass(frozen=True)
class ToyReluToClipPass(ModulePass):
    """Rewrite graph.relu as graph.clip with min 0."""

    name = "toy-relu-to-clip"

    max: float | None = None
    """An upper bound for the clip (6.0: ReLU6); none by default, which keeps ReLU's numerics."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(ReluToClip(self.max)).rewrite_module(op)
