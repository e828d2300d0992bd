"""`graph-pad-conv`: materialise a convolution's zero padding as its own `graph.pad` ("pad then conv").

graph-to-te lowers a padded convolution with clamped reads and a select in the innermost body, which no vector
schedule can stream. Padding the input once (a cheap copy, one pass over the input) leaves a convolution without
padding, whose reads are plain affine loads that default-schedule turns into a register-blocked micro-kernel:

    %y = graph.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, ...} : (tensor<1x64x56x56xf32>, ...) -> ...
    // becomes
    %p = graph.pad %x {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, mode = "constant", value = 0.0 : f32}
        : (tensor<1x64x56x56xf32>) -> tensor<1x64x58x58xf32>
    %y = graph.conv %p, %w {pads = array<i64: 0, 0, 0, 0>, ...} : (tensor<1x64x58x58xf32>, ...) -> ...

Run before graph-to-te, in the scheduled pipelines only (padding costs a copy that pays off when the convolution
is vectorized). Numerically neutral: the padded taps add the same zeros.
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


class ConvPadding(RewritePattern):
    """Move a convolution's padding into a `graph.pad` of its input."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ConvOp, rewriter: PatternRewriter) -> None:
        pads = list(op.pads.get_values())
        if not any(pads):
            return
        spatial = len(pads) // 2
        padded = graph.PadOp(op.input, [0, 0, *pads[:spatial], 0, 0, *pads[spatial:]])
        conv = graph.ConvOp(
            padded.result,
            op.weight,
            op.bias,
            strides=op.strides.get_values(),
            pads=[0] * len(pads),
            dilations=op.dilations.get_values(),
            group=op.group.value.data,
        )
        conv.result.name_hint = op.result.name_hint
        rewriter.replace(op, [padded, conv])


@dataclass(frozen=True)
class GraphPadConvPass(ModulePass):
    """Give every padded convolution an explicit zero-padded input (see the module docstring)."""

    name = "graph-pad-conv"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier([ConvPadding()])).rewrite_module(op)
