"""`graph-split-grouped-conv`: split a grouped convolution into one group-1 convolution per group, concatenated.

graph-to-te lowers a grouped convolution as one "conv" whose input channel is `co / out_per_group * in_per_group +
c`: a division no schedule can analyse, so it stays a naive loop nest, and te-inline fuses its producers into the
input read, recomputing them once per output channel of the group (AlexNet's group-2 5x5 convolution ran at
0.5 GFLOP/s; ShuffleNet's group-4 1x1 convolutions recomputed batch norm, residual sum and channel shuffle 34-136
times per element). Per group, the convolution is an ordinary one over a channel slice of the input and of the
weight, which te-conv-layout and default-schedule handle like any other:

    %y = graph.conv %x, %w {group = 2 : i64, ...} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
    // becomes, per group g (input channels 2g..2g+1, output channels 3g..3g+2)
    %xg = graph.slice %x {starts = array<i64: 0, 2g, 0, 0>, ...} : tensor<1x4x8x8xf32> -> tensor<1x2x8x8xf32>
    %wg = graph.slice %w {starts = array<i64: 3g, 0, 0, 0>, ...} : tensor<6x2x3x3xf32> -> tensor<3x2x3x3xf32>
    %yg = graph.conv %xg, %wg {group = 1 : i64, ...} : (...) -> tensor<1x3x6x6xf32>
    %y = graph.concat %y0, %y1 {axis = 1 : i64} : (...) -> tensor<1x6x6x6xf32>

Weight slices are computations on weights alone (loop-hoist-constants runs them once at load time, at O3); the
input slices fuse into the convolutions' channels-last copies and the concat into its readers. Depthwise
convolutions (one input and one output channel per group) are left alone: they have their own "depthwise_conv"
lowering, and a split would make hundreds of one-channel convolutions. Run before graph-pad-conv, in the scheduled
pipelines. Numerically neutral: each output sums the same products in the same order.
"""

from __future__ import annotations

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


def _channel_slice(value: SSAValue, axis: int, start: int, count: int) -> graph.SliceOp:
    shape = list(graph.shape_of(value))
    starts = [0] * len(shape)
    starts[axis], shape[axis] = start, count
    return graph.SliceOp(value, starts, [1] * len(shape), shape)


class GroupedConvSplit(RewritePattern):
    """Rewrite a grouped (not depthwise) convolution as per-group convolutions joined by a concat."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ConvOp, rewriter: PatternRewriter) -> None:
        group = op.group.value.data
        in_per_group, out_per_group = graph.shape_of(op.weight)[1], graph.shape_of(op.weight)[0] // group
        if group == 1 or in_per_group == out_per_group == 1:
            return
        new_ops: list[Operation] = []
        outputs: list[SSAValue] = []
        for g in range(group):
            parts = [
                _channel_slice(op.input, 1, g * in_per_group, in_per_group),
                _channel_slice(op.weight, 0, g * out_per_group, out_per_group),
            ]
            if op.bias is not None:
                parts.append(_channel_slice(op.bias, 0, g * out_per_group, out_per_group))
            conv = graph.ConvOp(
                parts[0].result,
                parts[1].result,
                parts[2].result if op.bias is not None else None,
                strides=op.strides.get_values(),
                pads=op.pads.get_values(),
                dilations=op.dilations.get_values(),
            )
            new_ops += [*parts, conv]
            outputs.append(conv.result)
        concat = graph.ConcatOp(outputs, 1)
        concat.result.name_hint = op.result.name_hint
        rewriter.replace(op, [*new_ops, concat])


@dataclass(frozen=True)
class GraphSplitGroupedConvPass(ModulePass):
    """Split every grouped, non-depthwise convolution into one convolution per group (see the module docstring)."""

    name = "graph-split-grouped-conv"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier([GroupedConvSplit()])).rewrite_module(op)
