"""`graph-pad-conv-channels`: round a convolution's output channels up to the conv schedule rule's multiple.

default-schedule vectorizes a convolution over its output channels, so a channel count that no vector width
divides (SqueezeNet's last 1x1 convolution to 1000 classes) leaves the kernel unscheduled: a scalar loop 4-6x
slower than ONNX Runtime. Zero weight rows (and zero biases) for the missing channels make the convolution
schedulable; a `graph.slice` keeps the real channels, and te-inline folds that slice into its reader:

    %y = graph.conv %x, %w, %b {...} : (tensor<1x8x4x4xf32>, tensor<12x8x1x1xf32>, tensor<12xf32>)
        -> tensor<1x12x4x4xf32>
    // becomes (x86-64-v3: 8 lanes)
    %wp = graph.pad %w {pads = array<i64: 0, 0, 0, 0, 4, 0, 0, 0>, ...} : (...) -> tensor<16x8x1x1xf32>
    %bp = graph.pad %b {pads = array<i64: 0, 4>, ...} : (tensor<12xf32>) -> tensor<16xf32>
    %c = graph.conv %x, %wp, %bp {...} : (...) -> tensor<1x16x4x4xf32>
    %y = graph.slice %c {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>}
        : tensor<1x16x4x4xf32> -> tensor<1x12x4x4xf32>

Every group-1 convolution is padded, however few its channels: the scheduled kernel beats the scalar loop even
when most lanes are padding (measured at one thread, 3x3 over 64 channels on 13x13: 20 output channels went from
11x ONNX Runtime's time to 0.95x, 3 channels run at 0.7x; 1x1 512 -> 1000 on 13x13 from 5.9x to 1.3x).

The multiple is `channel_padding_multiple` of the module's target (`strategy/padding.py`: the vector width, or two
where that costs few more channels: 1000 -> 1024 with 16 lanes). Run at O3
only, before graph-to-te: the padded weight is computed from the weight alone, which
`loop-hoist-constants` moves to load time; without it the padding would copy the weight on every call.
Numerically neutral: the real channels sum the same products in the same order.
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
from minimlc.lowering.strategy.padding import channel_padding_multiple
from minimlc.lowering.target import Target, target_of


@dataclass
class ConvChannelPadding(RewritePattern):
    """Pad a convolution's output channels to a multiple of `channel_padding_multiple` on `target` and slice the real
    ones back out."""

    target: Target

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ConvOp, rewriter: PatternRewriter) -> None:
        weight_shape = graph.shape_of(op.weight)
        channels = weight_shape[0]
        multiple = channel_padding_multiple(channels, self.target)
        if op.group.value.data != 1 or channels % multiple == 0:
            return
        extra = -channels % multiple
        rank = len(weight_shape)
        weight = graph.PadOp(op.weight, [0] * rank + [extra] + [0] * (rank - 1))
        weight.result.name_hint = "weight_padded"
        new_ops: list = [weight]
        bias = None
        if op.bias is not None:
            bias_pad = graph.PadOp(op.bias, [0, extra])
            bias_pad.result.name_hint = "bias_padded"
            new_ops.append(bias_pad)
            bias = bias_pad.result
        conv = graph.ConvOp(
            op.input,
            weight.result,
            bias,
            strides=op.strides.get_values(),
            pads=op.pads.get_values(),
            dilations=op.dilations.get_values(),
        )
        conv.result.name_hint = "padded_channels"
        shape = graph.shape_of(op.result)
        real = graph.SliceOp(conv.result, [0] * len(shape), [1] * len(shape), shape)
        real.result.name_hint = op.result.name_hint
        rewriter.replace(op, [*new_ops, conv, real])


@dataclass(frozen=True)
class GraphPadConvChannelsPass(ModulePass):
    """Pad the output channels of every convolution to a multiple of the vector width (see the module docstring)."""

    name = "graph-pad-conv-channels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        padding = ConvChannelPadding(target_of(op))
        PatternRewriteWalker(GreedyRewritePatternApplier([padding])).rewrite_module(op)
