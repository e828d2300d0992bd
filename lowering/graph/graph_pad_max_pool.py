"""`graph-pad-max-pool`: materialise a max pool's padding as a `graph.pad` with -inf ("pad then pool").

graph-to-te lowers a padded max pool (or one whose `ceil_mode` windows run past the input) with a clamp and a
select per window tap, which keeps every tap a serial scalar max. Padding the input once with -inf, which never
wins a max, leaves a pool of plain affine reads that default-schedule turns into one vector max per window tap
over a row of outputs; te-inline keeps the pad its own kernel where the pool stays channels-first (inlined, the
bounds test would differ per lane of the row). Where te-channels-last stores the pool channels-last, te-inline puts
the padding back into the taps (`te_inline.is_padded_row_tap`: one test per row of channels), so no padded copy is
made:

    %y = graph.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>,
        pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : tensor<1x8x13x13xf32> -> tensor<1x8x13x13xf32>
    // becomes
    %p = graph.pad %x {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, mode = "constant", value = 0xFF800000 : f32}
        : (tensor<1x8x13x13xf32>) -> tensor<1x8x15x15xf32>
    %y = graph.max_pool %p {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>,
        pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x8x15x15xf32> -> tensor<1x8x13x13xf32>

The end padding is what the last window needs, so a `ceil_mode` pool becomes a floor-mode one of the same shape.
Run before graph-to-te, in the scheduled pipelines only. Numerically neutral: every window keeps at least one
input element (pads are smaller than the window), and max(-inf, x) is x, NaN included.
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


class MaxPoolPadding(RewritePattern):
    """Move a max pool's padding (begin pads, and the end padding its last window reads) into a -inf pad."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.MaxPoolOp, rewriter: PatternRewriter) -> None:
        sizes = graph.shape_of(op.input)[2:]
        out_sizes = graph.shape_of(op.result)[2:]
        kernel, strides = op.kernel_shape.get_values(), op.strides.get_values()
        pads, dilations = op.pads.get_values(), op.dilations.get_values()
        begins = list(pads[: len(sizes)])
        ends = [
            (out - 1) * stride + (extent - 1) * dilation + 1 - begin - size
            for size, out, extent, stride, dilation, begin in zip(sizes, out_sizes, kernel, strides, dilations, begins)
        ]
        ends = [max(0, end) for end in ends]
        if not any(begins) and not any(ends):
            return
        padded = graph.PadOp(op.input, [0, 0, *begins, 0, 0, *ends], value=float("-inf"))
        pool = graph.MaxPoolOp(
            padded.result, kernel_shape=kernel, strides=strides, pads=[0] * len(pads), dilations=dilations
        )
        pool.result.name_hint = op.result.name_hint
        rewriter.replace(op, [padded, pool])


@dataclass(frozen=True)
class GraphPadMaxPoolPass(ModulePass):
    """Give every padded (or ceil-mode) max pool an explicit -inf-padded input (see the module docstring)."""

    name = "graph-pad-max-pool"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier([MaxPoolPadding()])).rewrite_module(op)
